"""Show a lesson's chart (coursekit/charts.py) where a page has a chart fence:

    ```chart
    name: kv-vs-context
    alt: what the chart shows, in the page's language
    ```

Each line is `key: value`, the value taken as written (no quotes needed, a colon in the alt text
is fine). Every lesson's chart SVGs are copied into the site."""

import html
import re
import shutil
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

from coursekit.charts import charts

FENCE = re.compile(r"^```chart[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


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
    return {chart.name: chart for chart in charts(Path(config.config_file_path).parent)}


def on_page_markdown(markdown, page, config, files):
    if "```chart" not in markdown:
        return markdown
    where, known = page.file.src_uri, _charts(config)

    def render(match):
        options = _options(match[1])
        if options is None or set(options) != {"name", "alt"} or not all(options.values()):
            raise PluginError(f"{where}: a chart fence holds two lines, name: <chart> and"
                              " alt: <what it shows, in the page's language>; it holds"
                              f" {match[1].strip()!r}")
        chart = known.get(options["name"])
        if chart is None:
            raise PluginError(f"{where}: no charts.py of any snippet folder draws a chart"
                              f" named {options['name']!r}; known: {', '.join(sorted(known))}")
        if not chart.svg_path(page.file.locale).is_file():
            raise PluginError(f"{where}: chart {chart.name!r} has no"
                              f" {chart.svg_path(page.file.locale).name} yet; run npm run charts")
        src = get_relative_url(chart.url(page.file.locale), page.url)
        return (f'<p><img class="course-chart" src="{html.escape(src)}"'
                f' alt="{html.escape(options["alt"])}"></p>')

    markdown = FENCE.sub(render, markdown)
    if "```chart" in markdown:
        raise PluginError(f"{where}: a chart fence must start at the beginning of a line")
    return markdown


def on_post_build(config):
    for chart in _charts(config).values():
        for svg in chart.folder.glob(f"charts/{chart.name}.*.svg"):
            target = Path(config.site_dir) / "assets" / "charts" / chart.folder.name / svg.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(svg, target)
