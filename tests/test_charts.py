"""Lesson charts (coursekit/charts.py): every committed SVG shows what its snippet folder's
charts.py computes now, in each language, and a chart that no longer does is caught."""

import shutil
from pathlib import Path

import pytest

from coursekit import ROOT
from coursekit.charts import SCHEMES, Chart, charts, legend_covers, localized, numbers, plotted, stale, unknown_svgs
from coursekit.code import course_imports
from coursekit.pages import languages

LANGUAGES = languages(ROOT)


@pytest.fixture(scope="session")
def course_charts(once_per_run) -> list[Chart]:
    """charts(ROOT), run once per test run, by the first of pytest-xdist's workers that asks:
    lesson 6's charts.py runs its performance model for seconds."""
    found = once_per_run("charts", lambda: [(str(chart.folder), chart.name, chart.spec)
                                             for chart in charts(ROOT)])
    return [Chart(Path(folder), name, spec) for folder, name, spec in found]


def test_committed_charts_are_not_stale(course_charts):
    assert stale(ROOT, LANGUAGES, course_charts) == []


@pytest.mark.parametrize("language", ["zh", "en"])
def test_no_chart_has_its_legend_on_a_line(course_charts, language):
    """Lesson 7's speed-up chart had its legend on the "no speculation" line, and lessons 1
    and 2 had theirs on several: where no place in the plot is free, it goes under it."""
    covered = {chart.name: legend_covers(localized(chart, language)) for chart in course_charts}
    assert covered and all(lines == [] for lines in covered.values()), covered


def test_every_chart_svg_is_drawn_by_a_spec(course_charts):
    assert unknown_svgs(ROOT, LANGUAGES, course_charts) == []


def test_each_language_has_its_own_labels_and_the_same_numbers(course_charts, site):
    for chart in course_charts:
        svgs = {language: (site / chart.url(language)).read_text("utf-8")
                for language in LANGUAGES}
        first, *others = LANGUAGES
        for language in others:
            assert svgs[language] != svgs[first], f"{chart.name}: {language} = {first}"
            assert numbers(plotted(svgs[language])) == numbers(plotted(svgs[first])), \
                f"{chart.name}: {language} and {first} plot other numbers"


def test_each_chart_has_a_dark_drawing_of_the_same_chart(course_charts, site):
    for chart in course_charts:
        for language in LANGUAGES:
            light, dark = ((site / chart.url(language, scheme)).read_text("utf-8")
                           for scheme in ("light", "dark"))
            assert plotted(dark) == plotted(light), f"{chart.name}.{language}: other data"
            background = SCHEMES["dark"]["background"]
            assert background in dark and background not in light, chart.name


# The changed-chart tests run on a copy of the first chart's snippet folder (and the folders
# it imports from), never on the real lessons: the copy's charts.py gets a wrapper that changes
# what its first chart computes.
CHANGE = '''

_drawn_charts = charts


def charts():
    specs = _drawn_charts()
    spec = next(iter(specs.values()))
{change}
    return specs
'''


def changed_copy(course_charts, tmp_path, change: str):
    """A copy of the first chart's snippet folder, and of those its charts.py imports from
    (and theirs, whose charts.py run too), whose first chart is changed; the chart."""
    chart = next(iter(course_charts), None)
    if chart is None:
        pytest.fail("no snippet folder declares a chart: nothing to check")
    copied, todo = set(), [chart.folder]
    while todo:
        folder = todo.pop()
        if folder in copied:
            continue
        copied.add(folder)
        shutil.copytree(folder, tmp_path / "snippets" / folder.name,
                        ignore=shutil.ignore_patterns("__pycache__"))
        if (folder / "charts.py").is_file():
            todo += [module.parent for module in course_imports(folder / "charts.py")]
    spec_file = tmp_path / "snippets" / chart.folder.name / "charts.py"
    spec_file.write_text(spec_file.read_text("utf-8") + CHANGE.format(change=change), "utf-8")
    return chart


def expected_problems(chart, what: str) -> list[str]:
    return [f"snippets/{chart.folder.name}/charts/{chart.file_name(language, scheme)}: {what}"
            f" {chart.folder.name}/charts.py {'computes' if 'numbers' in what else 'gives'};"
            " run npm run charts" for language in LANGUAGES for scheme in SCHEMES]


def test_a_chart_whose_numbers_changed_is_stale(course_charts, tmp_path):
    chart = changed_copy(course_charts, tmp_path, '    spec["series"][0]["y"][0] += 1')
    assert stale(tmp_path, LANGUAGES) == expected_problems(chart, "plots other numbers than")


def test_a_chart_whose_label_changed_is_stale(course_charts, tmp_path):
    chart = changed_copy(course_charts, tmp_path, '    spec["title"] = "A new title"')
    assert stale(tmp_path, LANGUAGES) == expected_problems(chart, "shows other labels than")


def test_a_missing_svg_is_reported(course_charts, tmp_path):
    chart = changed_copy(course_charts, tmp_path, "")
    svg = tmp_path / "snippets" / chart.folder.name / "charts" / f"{chart.name}.{LANGUAGES[0]}.svg"
    svg.unlink()
    assert stale(tmp_path, LANGUAGES) == [
        f"{svg.relative_to(tmp_path).as_posix()}: missing; run npm run charts"]


GOOD = {
    "title": {"zh": "标题", "en": "Title"},
    "x": {"label": {"zh": "横轴", "en": "x axis"}, "scale": "log", "ticks": [[1, 2], ["1", "2"]]},
    "y": {"label": "y"},
    "series": [{"label": "one line", "x": [1, 2], "y": [3, 4]}],
}


def course_with_spec(tmp_path, spec: dict):
    folder = tmp_path / "snippets" / "demo"
    folder.mkdir(parents=True)
    (folder / "charts.py").write_text(f"def charts():\n    return {{'demo-chart': {spec!r}}}\n",
                                      "utf-8")
    return tmp_path


def test_a_good_spec_is_only_missing_its_svgs(tmp_path):
    root = course_with_spec(tmp_path, GOOD)
    assert stale(root, LANGUAGES) == [
        f"snippets/demo/charts/demo-chart.{language}{'' if scheme == 'light' else '.dark'}.svg:"
        " missing; run npm run charts" for language in LANGUAGES for scheme in SCHEMES]


@pytest.mark.parametrize(("change", "problem"), [
    (lambda spec: spec.pop("title"), "missing key(s) ['title']"),
    (lambda spec: spec.update(colour="red"), "unknown key(s) ['colour']"),
    (lambda spec: spec["x"].pop("label"), "axis x: missing key(s) ['label']"),
    (lambda spec: spec["series"][0].update(label=42), "series 1, label: needs a string or a"),
    (lambda spec: spec["x"].update(label={"zh": "横轴"}), "axis x, label: has no 'en' text"),
    (lambda spec: spec["series"][0].update(y=[3]), "series 1: x has 2 values and y 1"),
    (lambda spec: spec["series"][0].update(y=[3, "4"]), "series 1, y: needs a non-empty list"),
    (lambda spec: spec["y"].update(scale="square"), "axis y: scale is one of"),
])
def test_a_bad_spec_names_the_chart_and_the_problem(tmp_path, change, problem):
    spec = {key: (dict(value) if isinstance(value, dict) else [dict(line) for line in value])
            for key, value in GOOD.items()}
    change(spec)
    root = course_with_spec(tmp_path, spec)
    with pytest.raises(ValueError) as error:
        stale(root, LANGUAGES)
    assert "demo/charts.py, chart 'demo-chart'" in str(error.value)
    assert problem in str(error.value)


def test_the_site_finds_the_charts_by_their_drawings_without_running_charts_py(course_charts,
                                                                              monkeypatch):
    """A build shows the drawings; running every charts.py (lesson 6's runs its performance
    model) made each build take 100 s instead of 8."""
    import coursekit.charts

    expected = {(chart.folder, chart.name) for chart in course_charts}

    def refuse(*_):
        raise AssertionError("the site build ran a charts.py")

    monkeypatch.setattr(coursekit.charts, "load", refuse)
    assert {(c.folder, c.name) for c in coursekit.charts.drawn_charts()} == expected
