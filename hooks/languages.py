"""The two languages as readers meet them, on top of mkdocs-static-i18n and Material.

- The language switcher of every page, home pages and notebooks too, links to the same page in
  the other language, relative to the page: it works wherever the site is served (the i18n
  plugin gives home pages the absolute links `/` and `/en/`, wrong under a project sub-path).
- Each language has its own search index: the plugin merges both into search/search_index.json,
  so an English query ranked Chinese pages first. The default language keeps that file, every
  other language gets <language>/search/search_index.json, and its pages search from there
  (their `base`, overrides/main.html). The head carries no `<link rel="alternate" hreflang>`
  (overrides/main.html): sitemap.xml lists every page with its alternates, absolute from
  `site_url`.
- Chinese text on a page of another language is marked `lang="zh"`, so that browsers draw it
  with Chinese, not Japanese, glyph forms.
"""

import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority

# Han, CJK punctuation, kana-free: the characters whose glyphs depend on the language.
CJK = "\u2e80-\u2fdf\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
CJK_RUN = re.compile(rf"[{CJK}]+(?:[ \u00b7]+[{CJK}]+)*")
# Text that must stay as it is: not shown, or where a <span> is not allowed.
RAW = ("script", "style", "title", "textarea", "option", "math", "svg")
TOKEN = re.compile(r"(<!--.*?-->|<[^>]*>)", re.S)
TAG_NAME = re.compile(r"<(/?)([a-zA-Z][\w-]*)")
HTML_LANG = re.compile(r'<html lang="([^"]*)"')


def _i18n(config):
    return config.plugins.get("i18n")


def _root(i18n, language: str) -> str:
    """A language's home, from the site's root: '' for the default language, 'en/' for en."""
    return "" if language == i18n.default_language else f"{language}/"


def on_page_context(context, page, config, nav):
    # After the i18n plugin's own (priority 50), which set the links it knows.
    i18n = _i18n(config)
    alternates = getattr(page.file, "alternates", None) or {}
    # The template reads `config.extra.alternate`: the attribute the i18n plugin sets per
    # page (not the mapping's item, which it set once) when there is one.
    links = getattr(config.extra, "alternate", None) or config.extra.get("alternate")
    if i18n is None or not isinstance(links, list):
        return context
    links = [dict(link) for link in links]
    for link in links:
        target = alternates.get(link["lang"])
        # Site-relative: Material's `url` filter makes it relative to the page.
        link["link"] = (target.url if target is not None else _root(i18n, link["lang"])) or "./"
    config.extra.alternate = links
    return context


def mark_chinese(body: str) -> str:
    """Each run of Chinese text outside tags gets a <span lang="zh">."""
    parts, raw = TOKEN.split(body), []
    for index, part in enumerate(parts):
        if index % 2:
            tag = TAG_NAME.match(part)
            if tag and tag[2].lower() in RAW and not part.endswith("/>"):
                if tag[1]:
                    if raw and raw[-1] == tag[2].lower():
                        raw.pop()
                else:
                    raw.append(tag[2].lower())
        elif not raw and CJK_RUN.search(part):
            parts[index] = CJK_RUN.sub(r'<span lang="zh">\g<0></span>', part)
    return "".join(parts)


def on_post_page(output, page, config):
    i18n = _i18n(config)
    if i18n is None or i18n.current_language == i18n.default_language:
        return output
    return _mark_chinese_unless_chinese(output, i18n.current_language)


def on_post_template(output, template_name, config):
    # The 404 page, which no page event reaches: its language switcher names 简体中文.
    language = HTML_LANG.search(output)
    return _mark_chinese_unless_chinese(output, language[1]) if language else output


def _mark_chinese_unless_chinese(output: str, language: str) -> str:
    if language.startswith("zh"):
        return output
    head, body_tag, body = output.partition("<body")
    return head + body_tag + mark_chinese(body)


@event_priority(-110)  # after mkdocs-static-i18n (-100) wrote the merged index
def on_post_build(config):
    i18n = _i18n(config)
    if i18n is None or i18n.building:  # a language built inside the first one's build
        return
    index_file = Path(config.site_dir) / "search" / "search_index.json"
    if not index_file.is_file():
        return
    index = json.loads(index_file.read_text("utf-8"))
    others = [language for language in i18n.build_languages
              if language != i18n.default_language]
    prefixes = tuple(_root(i18n, language) for language in others)
    own = {"config": index["config"],
           "docs": [doc for doc in index["docs"] if not doc["location"].startswith(prefixes)]}
    index_file.write_text(json.dumps(own, ensure_ascii=False, separators=(",", ":")), "utf-8")
    for language in others:
        prefix = _root(i18n, language)
        lunr_languages = [language] if language in index["config"]["lang"] else []
        entries = {"config": {**index["config"], "lang": lunr_languages or ["en"]},
                   "docs": [{**doc, "location": doc["location"].removeprefix(prefix)}
                            for doc in index["docs"] if doc["location"].startswith(prefix)]}
        target = Path(config.site_dir) / prefix / "search" / "search_index.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(entries, ensure_ascii=False, separators=(",", ":")),
                          "utf-8")
