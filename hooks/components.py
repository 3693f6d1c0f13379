"""Render each lesson's in-page components (coursekit/components.py) on the pages that show
them, and copy their scripts and styles into the site."""

import re
import shutil
from pathlib import Path

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

from coursekit.components import components, kit_assets, kit_files


def _components(config):
    return components(Path(config.config_file_path).parent)


def _url(path: str) -> str:
    return f"assets/components/{path}"


def on_page_markdown(markdown, page, config, files):
    where = page.file.src_uri
    for component in _components(config).values():
        fence = re.compile(rf"^```{re.escape(component.name)}[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)

        def render(match, component=component):
            options = yaml.safe_load(match[1]) or {}
            if not isinstance(options, dict):
                raise PluginError(f"{where}: a {component.name} fence holds `key: value` lines")
            try:
                return component.render(options, page.file.locale,
                                        lambda path: get_relative_url(_url(path), page.url))
            except (ValueError, KeyError) as error:
                raise PluginError(f"{where}: the {component.name} component: {error}") from None

        markdown = fence.sub(render, markdown)
        if f"```{component.name}" in markdown:
            raise PluginError(f"{where}: a {component.name} fence must start at the beginning"
                              " of a line (not inside tabs, lists or admonitions)")
    return markdown


def on_post_build(config):
    copies = [(asset, f"{component.name}/{asset.name}")
              for component in _components(config).values() for asset in component.assets()]
    copies += [(asset, asset.name) for asset in kit_assets()]
    for asset, path in copies:
        target = Path(config.site_dir) / _url(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(asset, target)


def on_serve(server, config, builder):
    # The kit lives outside docs/ and snippets/, which `watch:` in mkdocs.yml already covers.
    for path in kit_files():
        server.watch(str(path))
    return server
