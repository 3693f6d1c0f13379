"""Everything the course changes in mkdocs-material, in one place, checked against MATERIAL.

Material is customised where it invites it: overrides/ (theme.custom_dir in mkdocs.yml) holds a
copy of a template, or of one block of base.html, with a small change its comment explains
(TEMPLATES). Other changes have no template, block or option to go through: they are in the
JavaScript Material ships, so this hook patches the built files (ASSETS), or the build writes
into the page what Material would otherwise change as it loads (on_post_page).

Each entry was checked against MATERIAL. The build fails, naming what to look at, when the
installed Material is another version, when a template that overrides/ copies changed (its text
no longer has the hash recorded here), or when a built file no longer holds the code a patch
changes. An upgrade of Material therefore goes through this file: check each entry against the
new release, copy changed templates again (with the change), then record the new version.
"""

import hashlib
import re
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import material
from mkdocs.exceptions import PluginError

MATERIAL = "9.8.2"
MATERIAL_TEMPLATES = Path(material.__file__).parent / "templates"


@dataclass(frozen=True)
class Template:
    """A template of Material's that overrides/ copies, whole or one block of it."""

    path: str  # in Material's templates; overrides/ holds the copy (base.html's blocks: main.html)
    block: str | None  # a block of it, or None for the whole file
    sha256: str  # the first 16 hex digits of the SHA-256 of Material's text copied, at MATERIAL
    why: str


TEMPLATES = [
    Template("base.html", "site_meta", "4200de2bdc0019be",
             "no <link rel=alternate hreflang> in the head (overrides/main.html)"),
    Template("base.html", "config", "3095846e13afcbf0",
             "each language searches its own index (overrides/main.html)"),
    Template("partials/search.html", None, "bfd556535abcddb9",
             "the search dialog is named by the search field's label"),
    Template("404.html", None, "80c93494b5432b1b",
             "a bilingual 404 with the way home and to search (overrides/404.html)"),
]


@dataclass(frozen=True)
class Patch:
    """Code of one file Material builds into the site, and what it becomes."""

    glob: str  # the file, from the site's root, a hash in its name
    wrong: str
    right: str
    why: str


# Chinese search that matches words, not single characters. Material segments Chinese text with
# jieba when it builds the search index (words between U+200B). Its search worker splits a
# Chinese query again, greedily, into the longest words the index holds, but that loop stops one
# character short of the end of the query (`j < query.length`): a query never matches as a whole
# word. "分页" becomes "分*" and finds 跑分, 分块 and 分组, and the opened page highlights `?h=分`.
# The worker then joins the words with "* " before adding a "*" to every word, so each word but
# the last ends in "**": it is shown as missing ("缺少: 前缀*") and left out of `?h=`. Sources:
# src/templates/assets/javascripts/integrations/search/query/segment/index.ts and
# search/_/index.ts; the source map keeps them too.
WORKER = "assets/javascripts/workers/search.*.min.js"
SEGMENTER = "the worker splits a Chinese query into the longest words of the index"
JOIN = "the worker joins a query's words without a '*' of their own"
# The search index downloads when a reader opens search, not with every page. Material's bundle
# asks for search/search_index.json as soon as a page loads, from two places: the search worker's
# set-up, which waits for the search dialog to open only on `file:` pages
# (integrations/search/worker/_/index.ts), and the highlighter of a result's words
# (components/search/highlight/index.ts), which subscribes to the index even on a page opened
# without `?h=`. Both wait here: the worker for the dialog to open (clicking the field or the
# search icon, the `/`, `s` or `f` keys, or a `?q=` link, all of which open it), the highlighter
# for a page opened with `?h=`. Nothing else waits on the index.
BUNDLE = "assets/javascripts/bundle.*.min.js"
# The page's colour scheme without a <meta name="color-scheme">. Material's palette adds one to
# the head and sets it to the scheme on every change of palette, the first as a page loads
# (components/palette/index.ts): each change of that meta has Chromium style the whole page
# again, twice per load, a quarter of what Material's scripts cost a lesson on a phone. The
# viewport's scrollbar takes the scheme from docs/stylesheets/course.css instead (:root follows
# <body data-md-color-scheme>); the meta's element is a plain object here, which Material sets
# and nothing reads.
COLOR_SCHEME_META = 'let o=x("meta",{name:"color-scheme"});document.head.appendChild(o);'
# Material's palette marks the body data-md-color-switching (no transitions under it) on every
# change of palette, the first as a page loads, when the page usually keeps its colours: the
# mark and its removal have Chromium style the whole page twice. It is set here only when the
# scheme, primary or accent colour changes (a reader's toggle; a dark system's first visit).
SWITCHING_ALWAYS = ('if(document.body.setAttribute("data-md-color-switching",""),'
                    's.color.media==="(prefers-color-scheme)")')
AUTOMATIC_RESOLVED = 's.color.accent=c.getAttribute("data-md-color-accent")}for(let[a,c]of'
SWITCHING_ON_CHANGE = ('["scheme","primary","accent"].some(a=>document.body.getAttribute(`data-md-color-${a}`)'
                       '!==s.color[a])&&document.body.setAttribute("data-md-color-switching","");')
# Material wraps each table of a page in two boxes as the page loads (components/content/table),
# moving it: the page's sibling rules (`table:not([class]) + *`, the browser's :nth-child ones)
# then have Chromium style the whole article again, a third of what Material's scripts cost a
# lesson with tables on a phone. The build wraps them (wrapped_tables, Material's markup) and
# Material leaves a wrapped table where it is.
TABLES_MOUNTED = '...M("table:not([class])",e).map(i=>ti(i))'
TABLE_WRAPPED = '.filter(i=>!i.parentElement.classList.contains("md-typeset__table"))'
# Material mounts a tooltip on every element of the page with a title (content.tooltips: a
# glossary term, a heading's permalink) as the page loads: half of its set-up at
# DOMContentLoaded once code blocks mount lazily (lesson 5: 28 -> 12 ms, unthrottled). Each
# mounts here as it comes into view, as content.lazy (mkdocs.yml) has code blocks mount
# (components/content/_/index.ts: mountContent; code/_/index.ts: mountCodeBlock's
# watchElementVisibility, filter, take(1), switchMap). A title not yet seen stays the
# browser's own; an element focused from the keyboard comes into view, mounts, and shows its
# tooltip (watchElementFocus starts with the focus it has).
TOOLTIPS_MOUNTED = '...M("[title]:not([data-preview])",e).filter(()=>V("content.tooltips")).map(i=>Xe(i,{viewport$:r}))'
TOOLTIP_SEEN = "i=>mt(i).pipe(g(s=>s),Ee(1),b(()=>Xe(i,{viewport$:r})))"
# A code block's button bar is a <nav> (renderCodeBlockNavigation): twenty unnamed navigation
# landmarks on a lesson, which a screen reader lists among the page's regions. Its buttons stay.
CODE_NAV = 'function Pn(){return x("nav",{class:"md-code__nav"})}'
ASSETS = [
    Patch(WORKER, "for(let o=s+1;o<t.length;o++)t.slice(s,o)in e",
          "for(let o=s+1;o<=t.length;o++)t.slice(s,o)in e", SEGMENTER),
    Patch(WORKER, 'this.index.invertedIndex)].join("* ")',
          'this.index.invertedIndex)].join(" ")', JOIN),
    Patch(WORKER + ".map", "for (let j = i + 1; j < query.length; j++)",
          "for (let j = i + 1; j <= query.length; j++)", SEGMENTER),
    Patch(WORKER + ".map", 'invertedIndex)]\\n        .join(\\"* \\")',
          'invertedIndex)]\\n        .join(\\" \\")', JOIN),
    # setupSearchWorker: merge(of(location.protocol !== "file:"), watchToggle("search"))
    Patch(BUNDLE, 'L($(location.protocol!=="file:"),Je("search")).pipe(Re(o=>o),b(()=>t))',
          'L($(!1),Je("search")).pipe(Re(o=>o),b(()=>t))',
          "the search worker loads the index when the search dialog opens"),
    # mountSearchHighlight: combineLatest([index$, location$ with ?h=]) -> index$ once ?h= is seen
    Patch(BUNDLE, 'z([t,r.pipe(Q(we()),g(o=>!!o.searchParams.get("h")))])',
          'r.pipe(Q(we()),g(o=>!!o.searchParams.get("h")),b(o=>t.pipe(m(n=>[n,o]))))',
          "the highlighter waits for the index only on a page opened with ?h="),
    Patch(BUNDLE, COLOR_SCHEME_META, "let o={};",
          "the page's colour scheme comes from the stylesheet, not a <meta> the palette sets"),
    Patch(BUNDLE, SWITCHING_ALWAYS, 'if(s.color.media==="(prefers-color-scheme)")',
          "the palette marks the body as switching only when its colours change"),
    Patch(BUNDLE, AUTOMATIC_RESOLVED,
          AUTOMATIC_RESOLVED.replace("}for(", "}" + SWITCHING_ON_CHANGE + "for("),
          "the palette marks the body as switching only when its colours change"),
    Patch(BUNDLE, TABLES_MOUNTED, TABLES_MOUNTED.replace(".map(", TABLE_WRAPPED + ".map(", 1),
          "Material leaves a table the build wrapped where it is"),
    Patch(BUNDLE, TOOLTIPS_MOUNTED, TOOLTIPS_MOUNTED.replace("i=>Xe(i,{viewport$:r})", TOOLTIP_SEEN),
          "a tooltip mounts as its element comes into view"),
    Patch(BUNDLE, CODE_NAV, CODE_NAV.replace('"md-code__nav"}', '"md-code__nav",role:"none"}'),
          "a code block's button bar is no navigation landmark"),
]

HERE = "hooks/material_patches.py"


def block_text(text: str, block: str) -> str | None:
    """A block of a template (one without blocks inside), from its line to its endblock."""
    found = re.search(rf"^[ \t]*{{% block {block} %}}.*?{{% endblock %}}", text, re.M | re.S)
    return found[0] if found else None


def template_text(template: Template, templates: Path = MATERIAL_TEMPLATES) -> str:
    """Material's text that overrides/ copies: the file, or the block as base.html writes it."""
    text = (templates / template.path).read_text("utf-8")
    if template.block is None:
        return text
    found = block_text(text, template.block)
    if found is None:
        raise PluginError(f"{HERE}: Material's {template.path} has no block {template.block}"
                          f" any more ({template.why}); see what replaced it")
    return found


def check_material(installed: str | None = None, templates: Path = MATERIAL_TEMPLATES) -> None:
    """Fail, saying what to look at, unless Material is the version each entry was checked
    against and the templates overrides/ copies are still Material's."""
    installed = installed or version("mkdocs-material")
    changed = [template for template in TEMPLATES
               if hashlib.sha256(template_text(template, templates).encode()).hexdigest()[:16]
               != template.sha256]
    if installed == MATERIAL and not changed:
        return
    problems = [f"{t.path}" + (f", block {t.block}" if t.block else "") + f" ({t.why}) changed:"
                " copy it again into overrides/ with the course's change, then record its hash"
                for t in changed]
    raise PluginError(
        (f"{HERE}: checked against mkdocs-material {MATERIAL}, installed {installed}."
         if installed != MATERIAL else f"{HERE}: mkdocs-material {installed} is not as checked:")
        + "".join(f"\n  - {problem}" for problem in problems)
        + f"\nCheck every entry of {HERE} (TEMPLATES and ASSETS) against this release, then set"
        " MATERIAL to it.")


def patch_assets(site_dir: Path) -> list[Path]:
    """Patch Material's built JavaScript in site_dir; return the files changed. Running it
    again on a patched site changes nothing."""
    changed = []
    for glob in dict.fromkeys(patch.glob for patch in ASSETS):
        found = sorted(site_dir.glob(glob))
        if len(found) != 1:
            raise PluginError(f"{HERE}: expected one {glob} in {site_dir},"
                              f" found {[path.name for path in found]}")
        path = found[0]
        text = original = path.read_text("utf-8")
        for patch in (patch for patch in ASSETS if patch.glob == glob):
            if text.count(patch.wrong) == 1 and patch.right not in text:
                text = text.replace(patch.wrong, patch.right)
            elif not (text.count(patch.right) == 1 and patch.wrong not in text):
                raise PluginError(f"{HERE}: {path.name} no longer holds the code patched so that"
                                  f" {patch.why} ({patch.wrong!r}); check whether Material still"
                                  " needs it, then update or remove the patch")
        if text != original:
            path.write_text(text, "utf-8")
            changed.append(path)
    return changed


# A table of the page's as Material selects them (no class), with no table inside it.
TABLE = re.compile(r"<table(?![^>]*\bclass=)[^>]*>(?:(?!<table).)*?</table>", re.S)


def wrapped_tables(html: str) -> str:
    """The page's tables in the boxes Material's bundle puts them in (renderTable)."""
    return TABLE.sub(lambda table: '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
                     f"{table[0]}</div></div>", html)


# A code block's <code>, which Material mounts (pre > code) as it comes into view: mkdocs.yml's
# content.lazy. Mounting every block as the page loaded (a copy button, a tooltip and a size
# read each) held a phone's main thread for 170 ms on lesson 5.
CODE = re.compile(r"(<pre[^>]*>(?:<span></span>)?<code\b[^>]*)>")


def focusable_code(html: str) -> str:
    """Code blocks a keyboard reaches before Material mounts them. A mounted block keeps
    tabindex=0 only where it scrolls sideways (mountCodeBlock); one not yet seen has no
    tabindex of Material's, so Tab would pass a block that scrolls."""
    return CODE.sub(r'\1 tabindex="0">', html)


def on_post_page(output, page, config):
    return focusable_code(wrapped_tables(output))


def on_config(config):
    check_material()
    return config


def on_post_build(config):
    patch_assets(Path(config.site_dir))
