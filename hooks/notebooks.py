"""Notebooks as pages of the two-language site.

mkdocs-static-i18n rebuilds the file list after mkdocs-jupyter has marked the notebooks as
pages, so they end up copied raw, as JSON, under a page's URL (mkdocs-static-i18n issue #198),
and `mkdocs build --strict` says nothing. This hook marks them again, after the i18n plugin,
keeping the localized URL it gave them; mkdocs-jupyter then renders them. It also strips what
a notebook page would load from elsewhere (see UNWANTED).
"""

import re

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs_jupyter.plugin import NotebookFile


def _as_page(file, config):
    page = NotebookFile(file, **config)
    page.dest_path, page.abs_dest_path, page.url = file.dest_path, file.abs_dest_path, file.url
    return page


@event_priority(-110)  # mkdocs-static-i18n builds its file list at -100
def on_files(files, config):
    # Change the i18n plugin's own file list in place: it keeps state the nav needs.
    for file in [f for f in files if f.src_uri.endswith(".ipynb")]:
        if not file.is_documentation_page():
            files.remove(file)
            files.append(_as_page(file, config))
    return files


# What mkdocs-jupyter puts in a notebook page that this site must not load: JupyterLab's whole
# theme (570 KB of CSS, while Material styles the cells well enough), a MathJax loader with an
# empty URL (KaTeX renders the math), and a Mermaid loader that imports from a CDN.
UNWANTED = {
    "JupyterLab theme CSS": re.compile(r'<style[^>]*>\s*@charset "UTF-8";\.jupyter-wrapper\{.*?</style>', re.S),
    "MathJax loader": re.compile(r'<!-- Load mathjax -->\s*<script src="[^"]*">\s*</script>', re.S),
    "MathJax configuration": re.compile(
        r'<!-- MathJax configuration -->\s*<script type="text/x-mathjax-config">.*?</script>', re.S),
    "Mermaid loader": re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid.*?</script>', re.S),
}


def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    for what, pattern in UNWANTED.items():
        output, found = pattern.subn("", output)
        if not found:
            raise PluginError(f"{page.file.src_uri}: the notebook page has no {what} any more;"
                              " update hooks/notebooks.py to the new mkdocs-jupyter")
    return output
