"""Create a new lesson (coursekit/scaffold.py): both pages, its snippet folder and its nav line.

Run: npm run new-lesson -- SLUG "中文标题" "English title"
The new lesson builds and passes the tests as it is; then write it section by section.
"""

import sys

from coursekit import ROOT
from coursekit.scaffold import ScaffoldError, new_lesson
from coursekit.translations import mark

if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    try:
        written = new_lesson(ROOT, *sys.argv[1:])
    except ScaffoldError as error:
        sys.exit(f"new-lesson: {error}")
    for path in written:
        print(f"created {path.relative_to(ROOT)}")
    print(f"marked {mark(ROOT / 'docs' / 'lessons' / f'{sys.argv[1]}.en.md')}")
    print(f"added lessons/{sys.argv[1]}.md to the nav of mkdocs.yml; next: npm test, then"
          " npm run serve")
