"""List every external link of the built site, with the pages that show it.

Run: .venv/bin/python tools/external_links.py
The tests check internal links; external ones are listed here to be checked by hand.
"""

import sys
import tempfile
from pathlib import Path

from coursekit import ROOT
from coursekit.built_site import mkdocs_build
from coursekit.guards import external_links

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as site:
        result = mkdocs_build(ROOT, Path(site))
        if result.returncode:
            sys.exit(f"mkdocs build failed:\n{result.stderr}")
        for url, pages in external_links(Path(site)).items():
            print(f"{url}\n    on {len(pages)} page(s): {', '.join(pages[:3])}"
                  + (" ..." if len(pages) > 3 else ""))
