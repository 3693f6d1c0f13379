"""Create a new lesson: both language pages with the nine standard sections, its snippets
folder with a first runnable snippet, and its entries in the nav of mkdocs.yml.

Run: npm run new-lesson -- SLUG "中文标题" "English title"
The new lesson builds and passes the tests as it is; then write it section by section.
"""

import json
import re
import subprocess
import sys
from pathlib import Path
from string import Template

from pages import ROOT

TEMPLATES = Path(__file__).with_name("lesson_template")
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LESSONS_NAV = "  - 课程:\n"
NAV_TRANSLATIONS = "          nav_translations:\n"


def fail(message: str):
    sys.exit(f"new-lesson: {message}")


def add_to_nav(config: str, slug: str, title_zh: str, title_en: str) -> str:
    if LESSONS_NAV not in config or NAV_TRANSLATIONS not in config:
        fail(f"mkdocs.yml has no {LESSONS_NAV.strip()!r} nav section or no nav_translations")
    start = config.index(LESSONS_NAV) + len(LESSONS_NAV)
    end = start
    while config.startswith("      - ", end):
        end = config.index("\n", end) + 1
    entry = f"      - {json.dumps(title_zh, ensure_ascii=False)}: lessons/{slug}.md\n"
    config = config[:end] + entry + config[end:]
    at = config.index(NAV_TRANSLATIONS) + len(NAV_TRANSLATIONS)
    translation = (f"            {json.dumps(title_zh, ensure_ascii=False)}:"
                   f" {json.dumps(title_en, ensure_ascii=False)}\n")
    return config[:at] + translation + config[at:]


def main(root: Path, slug: str, title_zh: str, title_en: str) -> None:
    if not SLUG.match(slug):
        fail(f"{slug!r} is not a slug: lower-case letters, digits and single dashes")
    if not (title_zh.strip() and title_en.strip()):
        fail("both titles are needed: the Chinese one and the English one")
    pages = {language: root / "docs" / "lessons" / f"{slug}.{language}.md"
             for language in ("zh", "en")}
    snippets = root / "snippets" / slug
    if snippets.exists() or any(page.exists() for page in pages.values()):
        fail(f"a lesson called {slug!r} exists already")

    snippets.mkdir(parents=True)
    example = snippets / "example.py"
    example.write_text(f'print("{slug}: replace this example with the lesson\'s code")\n')
    run = subprocess.run([sys.executable, example.name], cwd=snippets, capture_output=True,
                         text=True, check=True)
    (snippets / "example.out").write_text(run.stdout)

    values = {"slug": slug, "title_zh": title_zh, "title_en": title_en}
    for language, page in pages.items():
        template = (TEMPLATES / f"lesson.{language}.md").read_text("utf-8")
        page.write_text(Template(template).substitute(values), "utf-8")
    config = root / "mkdocs.yml"
    config.write_text(add_to_nav(config.read_text("utf-8"), slug, title_zh, title_en), "utf-8")
    subprocess.run([sys.executable, str(Path(__file__).with_name("mark_translated.py")),
                    str(pages["en"])], check=True, capture_output=True)
    for path in (*pages.values(), example, snippets / "example.out"):
        print(f"created {path.relative_to(root)}")
    print("added the lesson to the nav of mkdocs.yml; next: npm test, then npm run serve")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(ROOT, *sys.argv[1:])
