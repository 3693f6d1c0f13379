"""Lesson charts as data: each snippet folder's charts.py returns chart specs, drawn here as
SVGs into the folder's charts/: per chart and language, one for the light scheme
(<chart>.<language>.svg) and one for the dark scheme (<chart>.<language>.dark.svg), with text
large enough to read on a 390 px phone.

A spec is a dict (see SPEC_KEYS) whose texts are either one string or {"zh": ..., "en": ...};
its numbers come from the lesson's own code. Each SVG carries the spec it was drawn from, in
its language, so a chart whose numbers or labels no longer match the code is found stale.

Draw them: npm run charts
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

from coursekit import ROOT
from coursekit.code import folders, load

SPEC_KEYS = {"title", "x", "y", "series"}
AXIS_KEYS = {"label", "scale", "ticks"}
SCALES = {"linear", "log"}
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
# How each colour scheme draws a chart: the page's background (Material's default and slate),
# its text, and lines that keep at least 3:1 contrast against the background (WCAG's figure
# for graphics; matplotlib's orange and green on white reach 2.1 and 3.0).
SCHEMES = {
    "light": {"background": "#ffffff", "text": "#202124", "axes": "#5f6368",
              "lines": ["#1f5fa8", "#c2410c", "#15803d", "#b91c1c", "#7e22ce", "#0e7490",
                        "#a16207", "#4d5562"]},
    "dark": {"background": "#1e2029", "text": "#dcdde3", "axes": "#9a9db0",
             "lines": ["#7cb2ff", "#ff9e5e", "#5fd38d", "#ff7a7a", "#c99bff", "#4fd1e0",
                       "#e6c14f", "#c3c7d4"]},
}
DATA_COMMENT = re.compile(r"<!-- chart-data: (.*?) -->", re.S)


@dataclass(frozen=True)
class Chart:
    folder: Path  # the snippet folder whose charts.py defines it
    name: str
    spec: dict | None  # None when known from its drawings alone (drawn_charts)

    def file_name(self, language: str, scheme: str = "light") -> str:
        return f"{self.name}.{language}{'' if scheme == 'light' else '.' + scheme}.svg"

    def svg_path(self, language: str, scheme: str = "light") -> Path:
        return self.folder / "charts" / self.file_name(language, scheme)

    def url(self, language: str, scheme: str = "light") -> str:
        """Where the built site serves it, from the site's root."""
        return f"assets/charts/{self.folder.name}/{self.file_name(language, scheme)}"


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


def drawn_charts(root: Path = ROOT) -> list[Chart]:
    """Every chart whose drawings a snippet folder holds, without running its charts.py (a
    lesson's chart data may take seconds to compute; the site only shows the drawings, and
    the tests check they are current)."""
    return [Chart(folder, name, None) for folder in folders(root)
            for name in sorted({svg.name.split(".", 1)[0]
                                for svg in folder.glob("charts/*.svg")})]


CHINESE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
NO_BREAK_BEFORE = set("，。、；：）」』,.;:)")
NO_BREAK_AFTER = set("（「『(")


def _wrap(text: str, figure, size, width: float) -> str:
    """The text in lines no wider than width (display pixels) at that font size: broken at a
    space or next to a Chinese character, never before closing punctuation."""
    def fits(line: str) -> bool:
        probe = figure.text(0, 0, line, fontsize=size)
        wide = probe.get_window_extent().width
        probe.remove()
        return wide <= width

    if fits(text):
        return text
    breaks = [i for i in range(1, len(text)) if text[i] not in NO_BREAK_BEFORE
              and text[i - 1] not in NO_BREAK_AFTER
              and (text[i - 1] == " " or CHINESE.match(text[i - 1]) or CHINESE.match(text[i]))]
    lines, start = [], 0
    while not fits(text[start:].strip()):
        fitting = [b for b in breaks if b > start and fits(text[start:b].strip())]
        cut = fitting[-1] if fitting else next((b for b in breaks if b > start), len(text))
        lines.append(text[start:cut].strip())
        start = cut
        if start >= len(text):
            break
    lines.append(text[start:].strip())
    return "\n".join(line for line in lines if line)


FIGURE_INCHES = (4.4, 3.1)  # 422 x 298 px
SMALLEST_TEXT_PT = 10  # tick labels and the legend (rcParams in _figure)


def draw(spec: dict, scheme: str = "light") -> str:
    """One localized spec as an SVG that carries the spec, in a colour scheme of SCHEMES.

    FIGURE_INCHES wide (422 px) with 10-12 pt text: shown 358 px wide on a 390 px phone, its
    smallest text is still 11.3 px (tests/test_text_sizes.py); a tap opens it full size."""
    import matplotlib.pyplot as plt

    figure = _figure(spec, scheme)
    out = StringIO()
    with warnings.catch_warnings():  # "loc='best' can be slow": it is, slightly
        warnings.simplefilter("ignore", UserWarning)
        figure.savefig(out, format="svg", metadata={"Date": None})
    plt.close(figure)
    comment = f"<!-- chart-data: {json.dumps(spec, sort_keys=True, ensure_ascii=False)} -->\n"
    return out.getvalue().replace("<svg ", comment + "<svg ", 1)


def legend_covers(spec: dict) -> list[str]:
    """The series whose line or markers run under the legend box of a localized spec, as
    drawn: lesson 7's legend once sat on its "no speculation" line."""
    import matplotlib.pyplot as plt

    figure = _figure(spec, "light")
    covered = _covered(figure)
    plt.close(figure)
    return covered


def _covered(figure) -> list[str]:
    axes = figure.axes[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        figure.canvas.draw()
    legend = axes.get_legend() or figure.legends[0]
    box = legend.get_window_extent()
    return [line.get_label() for line in axes.get_lines()
            if line.get_path().transformed(line.get_transform()).intersects_bbox(box, filled=False)]


def _figure(spec: dict, scheme: str):
    """draw's figure, laid out, before it is saved."""
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    colours = SCHEMES[scheme]
    plt.rcParams.update({
        "font.family": ["Noto Sans CJK SC", "DejaVu Sans"], "svg.hashsalt": "course-chart",
        "font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "xtick.labelsize": SMALLEST_TEXT_PT,
        "ytick.labelsize": SMALLEST_TEXT_PT, "legend.fontsize": SMALLEST_TEXT_PT,
        "figure.facecolor": colours["background"], "axes.facecolor": colours["background"],
        "savefig.facecolor": colours["background"], "text.color": colours["text"],
        "axes.labelcolor": colours["text"], "axes.titlecolor": colours["text"],
        "xtick.color": colours["axes"], "ytick.color": colours["axes"],
        "xtick.labelcolor": colours["text"], "ytick.labelcolor": colours["text"],
        "axes.edgecolor": colours["axes"], "grid.color": colours["axes"],
        "legend.facecolor": colours["background"], "legend.edgecolor": colours["axes"],
        "axes.prop_cycle": cycler(color=colours["lines"]),
    })
    figure, axes = plt.subplots(figsize=FIGURE_INCHES)
    for line in spec["series"]:
        axes.plot(line["x"], line["y"], marker="o", markersize=3.5, linewidth=1.8,
                  label=line["label"])
    axes.set(xscale=spec["x"].get("scale", "linear"), yscale=spec["y"].get("scale", "linear"))
    # Titles and labels wrap to the figure (the y label to the plot's height) instead of
    # running off its edges.
    figure.tight_layout()
    labels = plt.rcParams["axes.labelsize"]
    axes.set_xlabel(_wrap(spec["x"]["label"], figure, labels, figure.bbox.width * 0.9))
    axes.set_ylabel(_wrap(spec["y"]["label"], figure, labels, axes.bbox.height))
    figure.tight_layout()
    centre = (axes.bbox.x0 + axes.bbox.x1) / 2  # the title is centred on the plot
    title_width = 2 * min(centre, figure.bbox.width - centre) * 0.92
    axes.set_title(_wrap(spec["title"], figure, plt.rcParams["axes.titlesize"], title_width))
    if "ticks" in spec["x"]:
        axes.set_xticks(*spec["x"]["ticks"])
    if "ticks" in spec["y"]:
        axes.set_yticks(*spec["y"]["ticks"])
    axes.grid(True, which="major", alpha=0.35)
    axes.legend(framealpha=0.85)
    figure.tight_layout()
    if _covered(figure):  # no place in the plot is free: the legend goes under it
        _legend_below(figure, axes, columns=2 if len(spec["series"]) > 2 else 1)
    return figure


def _legend_below(figure, axes, columns: int) -> None:
    """The legend under the plot, the figure that much taller, the plot as tall as before."""
    axes.get_legend().remove()
    for ncol in (columns, 1):  # one column when two run off the figure's sides
        legend = figure.legend(*axes.get_legend_handles_labels(), loc="lower center",
                               ncol=ncol, frameon=False, bbox_to_anchor=(0.5, 0))
        figure.canvas.draw()
        if legend.get_window_extent().width <= figure.bbox.width or ncol == 1:
            break
        legend.remove()
    below = legend.get_window_extent().height / figure.dpi + 0.05  # inches
    width, height = figure.get_size_inches()
    figure.set_size_inches(width, height + below)
    figure.tight_layout(rect=(0, below / (height + below), 1, 1))


def plotted(svg: str) -> dict:
    match = DATA_COMMENT.search(svg)
    if match is None:
        raise ValueError("this SVG carries no chart data: draw it again with npm run charts")
    return json.loads(match[1])


def stale(root: Path, languages: list[str], found: list[Chart] | None = None) -> list[str]:
    """Charts whose SVG is missing or shows other numbers or labels than the spec; `found`:
    charts(root), if already run (it runs every charts.py)."""
    problems = []
    for chart in charts(root) if found is None else found:
        for language, scheme in ((language, scheme) for language in languages
                                 for scheme in SCHEMES):
            path = chart.svg_path(language, scheme)
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


def unknown_svgs(root: Path, languages: list[str], found: list[Chart] | None = None) -> list[str]:
    """SVGs in a charts/ folder that no spec draws (a chart renamed or removed); `found` as
    for stale."""
    drawn = {chart.svg_path(language, scheme) for chart in (charts(root) if found is None else found)
             for language in languages for scheme in SCHEMES}
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
            for scheme in SCHEMES:
                path = chart.svg_path(language, scheme)
                path.parent.mkdir(exist_ok=True)
                path.write_text(draw(localized(chart, language), scheme), "utf-8")
                written.append(path)
    return written
