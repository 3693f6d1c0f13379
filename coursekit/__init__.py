"""coursekit: what the course's hooks, tests and tools share.

It reads the course as data (pages, lessons, snippet folders, components, charts, GPU labs),
builds and serves the site, and holds the checks that keep both languages, the code, its
recorded output and the pinned vLLM in step.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
