"""Show a lesson's chart (coursekit/charts.py) where a page has a chart fence (hooks/fences.py
finds it, in tabs and admonitions too):

    ```chart
    name: kv-vs-context
    alt: what the chart shows, in the page's language
    ```

Each line is `key: value`, the value taken as written (no quotes needed, a colon in the alt text
is fine). Every lesson's chart SVGs are copied into the site.

The page shows the light drawing in Material's light scheme and the dark one in its dark
scheme (docs/stylesheets/course.css hides the other; being lazy, the hidden one is not even
fetched); each is a link to itself, so that a tap on a phone opens the chart full size."""

import html
import re
import shutil
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

from coursekit.charts import SCHEMES, drawn_charts
from coursekit.pages import Html

SIZE = re.compile(r'<svg\b[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"')


def _options(body: str) -> dict[str, str] | None:
    """The fence's `key: value` lines, or None when a line is not one."""
    options = {}
    for line in body.splitlines():
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if not colon or key.strip() in options:
            return None
        options[key.strip()] = value.strip()
    return options


def _charts(config):
    return {chart.name: chart for chart in drawn_charts(Path(config.config_file_path).parent)}


def course_fences(config) -> dict:
    """hooks/fences.py: a chart fence becomes the chart."""
    return {"chart": render}


def render(body: str, page, config) -> Html:
    where, known = page.file.src_uri, _charts(config)
    options = _options(body)
    if options is None or set(options) != {"name", "alt"} or not all(options.values()):
        raise PluginError(f"{where}: a chart fence holds two lines, name: <chart> and"
                          " alt: <what it shows, in the page's language>; it holds"
                          f" {body.strip()!r}")
    chart = known.get(options["name"])
    if chart is None:
        raise PluginError(f"{where}: no snippet folder has drawings of a chart named"
                          f" {options['name']!r} (run npm run charts); known:"
                          f" {', '.join(sorted(known))}")
    drawings = []
    for scheme in SCHEMES:
        svg = chart.svg_path(page.file.locale, scheme)
        if not svg.is_file():
            raise PluginError(f"{where}: chart {chart.name!r} has no {svg.name} yet;"
                              " run npm run charts")
        size = SIZE.search(svg.read_text("utf-8"))
        box = (f' width="{round(float(size[1]) * 4 / 3)}"'
               f' height="{round(float(size[2]) * 4 / 3)}"') if size else ""
        src = html.escape(get_relative_url(chart.url(page.file.locale, scheme), page.url))
        drawings.append(f'<a class="course-chart__{scheme}" href="{src}"><img src="{src}"'
                        f' alt="{html.escape(options["alt"])}"{box} loading="lazy"></a>')
    return Html(f'<p class="course-chart">{"".join(drawings)}</p>')


def on_post_build(config):
    for chart in _charts(config).values():
        for svg in chart.folder.glob(f"charts/{chart.name}.*.svg"):
            target = Path(config.site_dir) / "assets" / "charts" / chart.folder.name / svg.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(svg, target)
