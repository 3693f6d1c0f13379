"""Render a ```gpu-lab fence as the course's GPU lab card, labelled in the page's language.

The fence holds one `field: value` line per field; the labels come from `extra.gpu_lab`
of the language being built (mkdocs.yml, plugins.i18n.languages).
"""

import yaml
from mkdocs.exceptions import PluginError

FIELDS = ("min_vram", "card", "time_cost", "platform", "other_platforms")


def card(body: str, labels: dict, where: str) -> str:
    try:
        values = yaml.safe_load(body)
    except yaml.YAMLError as error:
        raise PluginError(f"{where}: the gpu-lab card is not valid `field: value` lines: {error}")
    if not isinstance(values, dict):
        raise PluginError(f"{where}: the gpu-lab card needs `field: value` lines")
    missing = [field for field in FIELDS if field not in values]
    unknown = [field for field in values if field not in FIELDS]
    if missing or unknown:
        raise PluginError(
            f"{where}: gpu-lab card fields must be exactly {', '.join(FIELDS)};"
            f" missing: {missing or 'none'}, unknown: {unknown or 'none'}"
        )
    rows = "\n".join(f"    - **{labels[field]}** {values[field]}" for field in FIELDS)
    return f'!!! gpu-lab "{labels["title"]}"\n\n{rows}\n'


def course_fences(config) -> dict:
    """hooks/fences.py: a gpu-lab fence becomes the card, in tabs and admonitions too."""
    return {"gpu-lab": render}


def render(body: str, page, config) -> str:
    return card(body, config.extra["gpu_lab"], page.file.src_uri)
