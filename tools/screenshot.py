"""Screenshot the lesson page in both languages, for the README and for looking at the site.

Run: .venv/bin/python tools/screenshot.py [output folder, default .github/readme]
"""

import sys
import tempfile
from pathlib import Path

from coursekit import ROOT
from coursekit.browser import chromium, serve
from coursekit.built_site import mkdocs_build

PAGES = {"kv-cache.zh.png": "/lessons/kv-cache/", "kv-cache.en.png": "/en/lessons/kv-cache/"}


def main():
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".github" / "readme"
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as site:
        result = mkdocs_build(ROOT, Path(site))
        if result.returncode:
            sys.exit(f"mkdocs build failed:\n{result.stderr}")
        with serve(Path(site)) as base, chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for name, path in PAGES.items():
                page.goto(base + path, wait_until="networkidle")
                page.screenshot(path=folder / name)
                print(folder / name)


if __name__ == "__main__":
    main()
