"""Record that translated pages match their source page now (after translating or checking them).

Run: npm run mark-translated -- docs/lessons/kv-cache.en.md [...]
Writes the source page's hash into the `translation_of` front matter of each page.
"""

import sys
from pathlib import Path

from coursekit.translations import mark

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for argument in sys.argv[1:]:
        try:
            print(f"{argument}: {mark(Path(argument))}")
        except ValueError as error:
            sys.exit(f"mark-translated: {error}")
