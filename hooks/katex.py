"""Math with KaTeX, rendered when the site is built: pages ship HTML and KaTeX's CSS and fonts
(copied from node_modules), with no math script and no CDN.

pymdownx.arithmatex (generic mode) leaves \\( \\) and \\[ \\] in spans and divs of class
arithmatex; hooks/katex-render.cjs turns them into KaTeX's HTML in one Node process per page.
"""

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

from mkdocs.exceptions import PluginError

ASSETS = ("katex.min.css", "fonts")
MATH = re.compile(r'<(span|div) class="arithmatex">\\([(\[])(.*?)\\[)\]]</\1>', re.S)


def _katex(config) -> Path:
    dist = Path(config.config_file_path).parent / "node_modules" / "katex"
    if not (dist / "dist").is_dir():
        raise PluginError(f"KaTeX is missing at {dist}: run `npm ci` in the repository first.")
    return dist


def _render(formulas: list[dict], config, where: str) -> list[str]:
    """KaTeX's HTML for each formula; a cache file spares Node on rebuilds (mkdocs serve)."""
    katex = _katex(config)
    version = json.loads((katex / "package.json").read_text("utf-8"))["version"]
    cache_file = Path(config.config_file_path).parent / ".cache" / "katex-render.json"
    cache = json.loads(cache_file.read_text("utf-8")) if cache_file.is_file() else {}
    key = lambda f: f"{version}|{int(f['display'])}|{f['tex']}"  # noqa: E731
    missing = [f for f in formulas if key(f) not in cache]
    if missing:
        script = Path(__file__).with_name("katex-render.cjs")
        try:
            result = subprocess.run(["node", str(script), str(katex)], check=True,
                                    input=json.dumps(missing), capture_output=True, text=True)
        except (OSError, subprocess.CalledProcessError) as error:
            raise PluginError(f"{where}: could not run Node to render math: {error}")
        for formula, output in zip(missing, json.loads(result.stdout)):
            if "error" in output:
                raise PluginError(f"{where}: KaTeX cannot render {formula['tex']!r}:"
                                  f" {output['error']}")
            cache[key(formula)] = output["html"]
        cache_file.parent.mkdir(exist_ok=True)
        cache_file.write_text(json.dumps(cache), "utf-8")
    return [cache[key(f)] for f in formulas]


def on_page_content(content, page, config, files):
    found = list(MATH.finditer(content))
    if not found:
        return content
    formulas = [{"tex": html.unescape(m[3]), "display": m[2] == "["} for m in found]
    pieces = iter(_render(formulas, config, page.file.src_uri))
    return MATH.sub(lambda m: f'<{m[1]} class="arithmatex">{next(pieces)}</{m[1]}>', content)


def on_post_build(config):
    dist = _katex(config) / "dist"
    target = Path(config.site_dir) / "assets" / "katex"
    for asset in ASSETS:
        source, dest = dist / asset, target / asset
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest, dirs_exist_ok=True)
        else:
            shutil.copy2(source, dest)
