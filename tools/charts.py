"""Draw every lesson's charts: each snippet folder's charts.py, one SVG per chart and language.

Run: npm run charts   (writes snippets/<lesson>/charts/<chart>.<language>.svg)
tests/test_charts.py fails when an SVG no longer shows what its charts.py computes, so run
this again after changing a lesson's code, its presets or a chart's labels.
"""

from coursekit import ROOT
from coursekit.charts import draw_all, unknown_svgs
from coursekit.pages import languages


def main() -> None:
    for path in draw_all(ROOT, languages(ROOT)):
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KiB")
    for problem in unknown_svgs(ROOT, languages(ROOT)):
        print(f"delete it? {problem}")


if __name__ == "__main__":
    main()
