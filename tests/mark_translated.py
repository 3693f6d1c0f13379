"""Record that translated pages match their source page now (after translating or checking them).

Run: .venv/bin/python tests/mark_translated.py docs/lessons/kv-cache.en.md [...]
Writes the source page's hash into the `translation_of` front matter of each page.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hooks"))
from translations import source_hash, source_of  # noqa: E402

FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def mark(page: Path) -> None:
    if not source_of(page).is_file():
        sys.exit(f"{page}: no source page {source_of(page)}")
    text = page.read_text("utf-8")
    line = f"translation_of: {source_hash(page)}"
    match = FRONT_MATTER.match(text)
    if match is None:
        text = f"---\n{line}\n---\n\n{text}"
    else:
        fields = [f for f in match[1].splitlines() if not f.startswith("translation_of:")]
        text = "---\n" + "\n".join(fields + [line]) + "\n---\n" + text[match.end():]
    page.write_text(text, "utf-8")
    print(f"{page}: {line}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for argument in sys.argv[1:]:
        mark(Path(argument))
