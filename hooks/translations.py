"""Translation freshness: a translated page records the hash of the source page it was
translated from (front matter `translation_of`); when the source has changed since, the page
shows a notice that links to the source.

`.venv/bin/python tests/mark_translated.py PAGE` records the current hash after translating.
"""

import hashlib
import re
from pathlib import Path

from mkdocs.utils import get_relative_url

SOURCE_LANGUAGE = "zh"


def source_of(translation: Path) -> Path:
    """docs/lessons/kv-cache.en.md -> docs/lessons/kv-cache.zh.md"""
    stem, _language, suffix = translation.name.rsplit(".", 2)
    return translation.with_name(f"{stem}.{SOURCE_LANGUAGE}.{suffix}")


def source_hash(translation: Path) -> str:
    return hashlib.sha256(source_of(translation).read_bytes()).hexdigest()[:12]


def is_stale(translation: Path, recorded: str | None) -> bool:
    return recorded != source_hash(translation)


def recorded_hash(text: str) -> str | None:
    """The `translation_of` value of a page's front matter."""
    match = re.match(r"\A---\n(?:.*\n)*?translation_of: *(\w+)\n(?:.*\n)*?---\n", text)
    return match[1] if match else None


def on_page_markdown(markdown, page, config, files):
    if page.file.locale == SOURCE_LANGUAGE:
        return markdown
    if not is_stale(Path(page.file.abs_src_path), page.meta.get("translation_of")):
        return markdown
    labels = config.extra["translation"]
    source_url = page.url.split("/", 1)[1]  # en/lessons/kv-cache/ -> lessons/kv-cache/
    link = get_relative_url(source_url, page.url)
    notice = f'!!! warning "{labels["stale_title"]}"\n    {labels["stale_text"]} [{labels["source"]}]({link})\n\n'
    title_end = markdown.find("\n", markdown.find("# ")) + 1 if markdown.startswith("# ") else 0
    return markdown[:title_end] + "\n" + notice + markdown[title_end:]
