"""The lesson's charts plot what the calculator computes now, in each page's language."""

import shutil

from make_charts import CHARTS, plotted, stale_charts


def test_committed_charts_plot_the_calculators_numbers():
    assert stale_charts() == []


def test_each_language_has_its_own_labels(site):
    for chart in ("kv-vs-context", "sequences-on-24gb"):
        zh = (site / "assets/charts" / f"{chart}.svg").read_bytes()
        en = (site / "en/assets/charts" / f"{chart}.svg").read_bytes()
        assert zh != en and plotted(zh.decode()) == plotted(en.decode()), chart


def test_a_chart_with_old_numbers_is_caught(tmp_path):
    copy = tmp_path / "charts"
    shutil.copytree(CHARTS, copy)
    chart = copy / "sequences-on-24gb.en.svg"
    chart.write_text(chart.read_text("utf-8").replace('"awq/1": [677', '"awq/1": [676'), "utf-8")
    assert stale_charts(copy) == ["sequences-on-24gb.en.svg: plots old numbers; run npm run charts"]
