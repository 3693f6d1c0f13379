"""Translation freshness: a translated page records the hash of the source page it was
translated from (front matter `translation_of`); when the source has changed since, the site
shows a notice on the page and the tests list it.

After translating a page: npm run mark-translated -- docs/lessons/<slug>.en.md
"""

import hashlib
import re
from pathlib import Path

SOURCE_LANGUAGE = "zh"
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


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


def mark(page: Path) -> str:
    """Record in a translated page that it matches its source page now; returns the line."""
    if page.suffix != ".md":
        raise ValueError(f"{page}: only Markdown pages record their source (front matter); a"
                         " notebook's two languages are checked to run the same code by the tests")
    if not source_of(page).is_file():
        raise ValueError(f"{page}: no source page {source_of(page)}")
    text = page.read_text("utf-8")
    line = f"translation_of: {source_hash(page)}"
    match = FRONT_MATTER.match(text)
    if match is None:
        text = f"---\n{line}\n---\n\n{text}"
    else:
        fields = [f for f in match[1].splitlines() if not f.startswith("translation_of:")]
        text = "---\n" + "\n".join(fields + [line]) + "\n---\n" + text[match.end():]
    page.write_text(text, "utf-8")
    return line
