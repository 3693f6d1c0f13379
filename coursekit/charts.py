"""Lesson charts as data: each snippet folder's charts.py returns chart specs, drawn here as one
SVG per chart and language into the folder's charts/.

A spec is a dict (see SPEC_KEYS) whose texts are either one string or {"zh": ..., "en": ...};
its numbers come from the lesson's own code. Each SVG carries the spec it was drawn from, in
its language, so a chart whose numbers or labels no longer match the code is found stale.

Draw them: npm run charts
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from coursekit import ROOT
from coursekit.code import folders, load

SPEC_KEYS = {"title", "x", "y", "series"}
AXIS_KEYS = {"label", "scale", "ticks"}
SCALES = {"linear", "log"}
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
DATA_COMMENT = re.compile(r"<!-- chart-data: (.*?) -->", re.S)


@dataclass(frozen=True)
class Chart:
    folder: Path  # the snippet folder whose charts.py defines it
    name: str
    spec: dict

    def svg_path(self, language: str) -> Path:
        return self.folder / "charts" / f"{self.name}.{language}.svg"

    def url(self, language: str) -> str:
        """Where the built site serves it, from the site's root."""
        return f"assets/charts/{self.folder.name}/{self.name}.{language}.svg"


def text(value, language: str, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        if isinstance(value.get(language), str):
            return value[language]
        raise ValueError(f"{where}: has no {language!r} text (a string); got {value!r}")
    raise ValueError(f"{where}: needs a string or a {{zh: ..., en: ...}} mapping of strings,"
                     f" got {value!r}")


def _keys(found, needed: set, allowed: set, where: str) -> None:
    if not isinstance(found, dict):
        raise ValueError(f"{where}: needs a dict with the keys {sorted(needed)},"
                         f" got {type(found).__name__}")
    if needed - set(found):
        raise ValueError(f"{where}: missing key(s) {sorted(needed - set(found))}")
    if set(found) - allowed:
        raise ValueError(f"{where}: unknown key(s) {sorted(set(found) - allowed)};"
                         f" it may have {sorted(allowed)}")


def _numbers(values, where: str) -> None:
    if (not isinstance(values, (list, tuple)) or not values
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)):
        raise ValueError(f"{where}: needs a non-empty list of numbers, got {values!r}")


def localized(chart: Chart, language: str) -> dict:
    """The spec with every text in one language: what the SVG shows and carries.

    Raises ValueError naming the chart and what is wrong with its spec."""
    where = f"{chart.folder.name}/charts.py, chart {chart.name!r}"
    spec = chart.spec
    _keys(spec, SPEC_KEYS, SPEC_KEYS, where)
    axes = {}
    for axis in ("x", "y"):
        here = f"{where}, axis {axis}"
        _keys(spec[axis], {"label"}, AXIS_KEYS, here)
        if spec[axis].get("scale", "linear") not in SCALES:
            raise ValueError(f"{here}: scale is one of {sorted(SCALES)},"
                             f" not {spec[axis]['scale']!r}")
        if "ticks" in spec[axis]:
            ticks = spec[axis]["ticks"]
            if not (isinstance(ticks, (list, tuple)) and len(ticks) == 2):
                raise ValueError(f"{here}: ticks are [positions, labels], got {ticks!r}")
            _numbers(ticks[0], f"{here}, tick positions")
            if (not isinstance(ticks[1], (list, tuple)) or len(ticks[1]) != len(ticks[0])
                    or not all(isinstance(label, str) for label in ticks[1])):
                raise ValueError(f"{here}: tick labels are one string per tick position,"
                                 f" got {ticks[1]!r}")
        axes[axis] = {**spec[axis], "label": text(spec[axis]["label"], language,
                                                  f"{here}, label")}
    if not isinstance(spec["series"], (list, tuple)) or not spec["series"]:
        raise ValueError(f"{where}: series is a non-empty list of lines,"
                         f" got {spec['series']!r}")
    series = []
    for number, line in enumerate(spec["series"], 1):
        here = f"{where}, series {number}"
        _keys(line, {"label", "x", "y"}, {"label", "x", "y"}, here)
        _numbers(line["x"], f"{here}, x")
        _numbers(line["y"], f"{here}, y")
        if len(line["x"]) != len(line["y"]):
            raise ValueError(f"{here}: x has {len(line['x'])} values and y {len(line['y'])}")
        series.append({**line, "label": text(line["label"], language, f"{here}, label")})
    return {"title": text(spec["title"], language, f"{where}, title"), **axes,
            "series": series}


def numbers(spec: dict) -> dict:
    """A localized spec without its texts: what both languages of a chart plot alike."""
    return {"x": {key: value for key, value in spec["x"].items() if key != "label"},
            "y": {key: value for key, value in spec["y"].items() if key != "label"},
            "series": [{"x": line["x"], "y": line["y"]} for line in spec["series"]]}


def _same_numbers(shown, expected: dict) -> bool:
    try:
        return numbers(shown) == numbers(expected)
    except (KeyError, TypeError, AttributeError):  # data drawn by an older spec format
        return False


def charts(root: Path = ROOT) -> list[Chart]:
    """Every chart every snippet folder declares; a chart name is unique across folders."""
    found = {}
    for folder in folders(root):
        spec_file = folder / "charts.py"
        if not spec_file.is_file():
            continue
        module = load(spec_file, f"charts_of_{folder.name.replace('-', '_')}", root)
        declared = module.charts() if callable(getattr(module, "charts", None)) else None
        if not isinstance(declared, dict):
            raise ValueError(f"{folder.name}/charts.py: needs a function charts() that returns"
                             " {name: spec}")
        for name, spec in declared.items():
            if not isinstance(name, str) or not NAME.fullmatch(name):
                raise ValueError(f"{folder.name}/charts.py: chart name {name!r} is not"
                                 " lowercase words joined by hyphens (it names the SVG files)")
            if name in found:
                raise ValueError(f"{folder.name}/charts.py: chart {name!r} is also drawn by"
                                 f" {found[name].folder.name}/charts.py; a chart fence names"
                                 " a chart by name alone, so names are unique")
            found[name] = Chart(folder, name, spec)
    return list(found.values())


def draw(spec: dict) -> str:
    """One localized spec as an SVG that carries the spec."""
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.family": ["Noto Sans CJK SC", "DejaVu Sans"],
                         "svg.hashsalt": "course-chart", "font.size": 9})
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    for line in spec["series"]:
        axes.plot(line["x"], line["y"], marker="o", markersize=3, label=line["label"])
    axes.set(xscale=spec["x"].get("scale", "linear"), yscale=spec["y"].get("scale", "linear"),
             xlabel=spec["x"]["label"], ylabel=spec["y"]["label"], title=spec["title"])
    if "ticks" in spec["x"]:
        axes.set_xticks(*spec["x"]["ticks"])
    if "ticks" in spec["y"]:
        axes.set_yticks(*spec["y"]["ticks"])
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=7)
    out = StringIO()
    figure.tight_layout()
    figure.savefig(out, format="svg", metadata={"Date": None})
    plt.close(figure)
    comment = f"<!-- chart-data: {json.dumps(spec, sort_keys=True, ensure_ascii=False)} -->\n"
    return out.getvalue().replace("<svg ", comment + "<svg ", 1)


def plotted(svg: str) -> dict:
    match = DATA_COMMENT.search(svg)
    if match is None:
        raise ValueError("this SVG carries no chart data: draw it again with npm run charts")
    return json.loads(match[1])


def stale(root: Path, languages: list[str]) -> list[str]:
    """Charts whose SVG is missing or shows other numbers or labels than the spec."""
    problems = []
    for chart in charts(root):
        for language in languages:
            path = chart.svg_path(language)
            where = path.relative_to(root).as_posix()
            expected = json.loads(json.dumps(localized(chart, language)))
            if not path.is_file():
                problems.append(f"{where}: missing; run npm run charts")
                continue
            try:
                shown = plotted(path.read_text("utf-8"))
            except ValueError:
                problems.append(f"{where}: carries no chart data; run npm run charts")
                continue
            spec_file = f"{chart.folder.name}/charts.py"
            if shown != expected and not _same_numbers(shown, expected):
                problems.append(f"{where}: plots other numbers than {spec_file} computes;"
                                " run npm run charts")
            elif shown != expected:
                problems.append(f"{where}: shows other labels than {spec_file} gives;"
                                " run npm run charts")
    return problems


def unknown_svgs(root: Path, languages: list[str]) -> list[str]:
    """SVGs in a charts/ folder that no spec draws (a chart renamed or removed)."""
    drawn = {chart.svg_path(language) for chart in charts(root) for language in languages}
    return [f"{path.relative_to(root).as_posix()}: no charts.py spec draws it"
            for folder in folders(root) for path in sorted(folder.glob("charts/*.svg"))
            if path not in drawn]


def draw_all(root: Path, languages: list[str], only: Path | None = None) -> list[Path]:
    """Draw every chart of the course at root (or of the snippet folder `only`)."""
    written = []
    for chart in charts(root):
        if only is not None and chart.folder != only:
            continue
        for language in languages:
            path = chart.svg_path(language)
            path.parent.mkdir(exist_ok=True)
            path.write_text(draw(localized(chart, language)), "utf-8")
            written.append(path)
    return written
