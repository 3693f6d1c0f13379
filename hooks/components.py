"""Render each lesson's in-page components (coursekit/components.py) where a page has a fence
named after one (hooks/fences.py finds it), and copy their scripts and styles, the kit's and the
teaching modules' JavaScript twins into the site."""

import shutil
from functools import partial
from pathlib import Path

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

from coursekit.components import components, kit_assets, kit_files, twins
from coursekit.pages import Html


def _components(config):
    return components(Path(config.config_file_path).parent)


def _url(path: str) -> str:
    return f"assets/components/{path}"


def course_fences(config) -> dict:
    """hooks/fences.py: a fence named after a component becomes the component."""
    return {component.name: partial(render, component) for component in _components(config).values()}


def render(component, body: str, page, config) -> Html:
    where = page.file.src_uri
    options = yaml.safe_load(body) or {}
    if not isinstance(options, dict):
        raise PluginError(f"{where}: a {component.name} fence holds `key: value` lines")
    try:
        # The id: the lesson's opening box links to it (hooks/lesson_meta.py).
        return Html(f'<span id="{component.name}"></span>' + component.render(
            options, page.file.locale, lambda path: get_relative_url(_url(path), page.url)))
    except (ValueError, KeyError) as error:
        raise PluginError(f"{where}: the {component.name} component: {error}") from None


def on_post_build(config):
    copies = [(asset, f"{component.name}/{asset.name}")
              for component in _components(config).values() for asset in component.assets()]
    copies += [(asset, asset.name) for asset in kit_assets()]
    copies += [(twin, f"modules/{twin.name}") for twin in twins(Path(config.config_file_path).parent).values()]
    for asset, path in copies:
        target = Path(config.site_dir) / _url(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(asset, target)


def on_serve(server, config, builder):
    # The kit lives outside docs/ and snippets/, which `watch:` in mkdocs.yml already covers.
    for path in kit_files():
        server.watch(str(path))
    return server
