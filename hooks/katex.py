"""Copy KaTeX from node_modules into the built site, so math renders with no CDN."""

import shutil
from pathlib import Path

from mkdocs.exceptions import PluginError

ASSETS = ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js", "fonts")


def on_post_build(config):
    dist = Path(config.config_file_path).parent / "node_modules" / "katex" / "dist"
    if not dist.is_dir():
        raise PluginError(f"KaTeX is missing at {dist}: run `npm ci` in the repository first.")
    target = Path(config.site_dir) / "assets" / "katex"
    for asset in ASSETS:
        source, dest = dist / asset, target / asset
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest, dirs_exist_ok=True)
        else:
            shutil.copy2(source, dest)
