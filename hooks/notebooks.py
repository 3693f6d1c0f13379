"""Notebooks as pages of the two-language site.

mkdocs-static-i18n rebuilds the file list after mkdocs-jupyter has marked the notebooks as
pages, so they end up copied raw, as JSON, under a page's URL (mkdocs-static-i18n issue #198),
and `mkdocs build --strict` says nothing. This hook marks them again, after the i18n plugin,
keeping the localized URL it gave them; mkdocs-jupyter then renders them. It also strips what
a notebook page would load from elsewhere (see UNWANTED).

The i18n plugin took the notebooks for plain files, so it gave them no page in the other
language (its language switcher then goes to the home page) and left them out of sitemap.xml:
both are given back here. nbconvert's heading ids drop Chinese (empty or clashing ids) and
end in its own "¶" link, which search indexed as part of the title: headings get the ids and
permalinks of the Markdown pages.

Each lesson with a GPU lab also gets its lab as a notebook in each language, written at every
build from the lesson's files (coursekit/lab_notebooks.py) into a folder of this process, and
made a page here as the notebooks of docs/ are: lessons/<slug>-lab/.
"""

import html
import re
import tempfile
from pathlib import Path
from types import SimpleNamespace

import nbformat
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from coursekit.lab_notebooks import STEPS, file_name, lab_notebooks

_generated = Path(tempfile.mkdtemp(prefix="lab-notebooks-"))


def _as_page(file, config):
    # Imported here: the course's tooling loads the hooks with mkdocs.yml, and importing
    # mkdocs-jupyter (nbconvert) costs each of its processes 1.5 s.
    from mkdocs_jupyter.plugin import NotebookFile

    page = NotebookFile(file, **config)
    page.dest_path, page.abs_dest_path, page.url = file.dest_path, file.abs_dest_path, file.url
    return page


def _alternates(page, file, i18n, config) -> dict:
    """The notebook page in each language it is written in, as the i18n plugin lists a
    Markdown page's: {language: something with the page's url}."""
    here = i18n.current_language

    def prefix(language):
        return "" if language == i18n.default_language else f"{language}/"

    path = page.url.removeprefix(prefix(here))
    alternates = {here: page}
    for language in i18n.build_languages:
        source = Path(file.abs_src_path).with_name(
            Path(file.src_uri).name.replace(f".{file.locale}.ipynb", f".{language}.ipynb"))
        if language != here and source.is_file():
            alternates[language] = SimpleNamespace(url=prefix(language) + path, page=None)
    return alternates


@event_priority(-110)  # mkdocs-static-i18n builds its file list at -100
def on_files(files, config):
    i18n = config.plugins.get("i18n")
    # Change the i18n plugin's own file list in place: it keeps state the nav needs.
    for file in [f for f in files if f.src_uri.endswith(".ipynb")]:
        if not file.is_documentation_page():
            files.remove(file)
            page = _as_page(file, config)
            if i18n is not None and getattr(file, "locale", None):
                page.alternates = _alternates(page, file, i18n, config)
                # The pages sitemap.xml lists, taken before the notebooks were pages.
                i18n.i18n_files_per_language[i18n.current_language].append(page)
            files.append(page)
    for file in lab_notebook_files(config, i18n):
        page = _as_page(file, config)
        if i18n is not None:
            page.alternates = _alternates(page, file, i18n, config)
            i18n.i18n_files_per_language[i18n.current_language].append(page)
        files.append(page)
    return files


def lab_notebook_files(config, i18n) -> list[File]:
    """The lab notebooks of the language being built, written with their other languages
    (for the language switcher) to this process's folder."""
    here = i18n.current_language if i18n is not None else config.theme.get("language", "en")
    default = i18n.default_language if i18n is not None else here
    try:
        books = lab_notebooks(config, Path(config.config_file_path).parent)
    except ValueError as error:
        raise PluginError(str(error)) from None
    made = []
    (_generated / "lessons").mkdir(exist_ok=True)
    for (slug, language), book in books.items():
        nbformat.write(book, _generated / "lessons" / file_name(slug, language))
        if language != here:
            continue
        file = File(f"lessons/{file_name(slug, here)}", str(_generated), config.site_dir,
                    config.use_directory_urls)
        # "Edit this page" opens what the lab's cells come from.
        file.edit_uri = f"../snippets/{slug}/{STEPS}"
        prefix = "" if here == default else f"{here}/"
        file.url = f"{prefix}lessons/{slug}-lab/"
        file.dest_uri = f"{prefix}lessons/{slug}-lab/index.html"
        file.abs_dest_path = str(Path(config.site_dir) / file.dest_uri)
        file.locale = file.locale_alternate_of = here
        made.append(file)
    return made


NB_HEADING = re.compile(r'<h([1-6]) id="[^"]*">(.*?)<a class="anchor-link" href="#[^"]*">¶</a>'
                        r"</h\1>", re.S)


def on_page_content(content, page, config, files):
    """Headings as on the Markdown pages: the site's slugify, unique ids, Material's permalink."""
    if not page.file.src_uri.endswith(".ipynb"):
        return content
    slugify = config.mdx_configs.get("toc", {}).get("slugify")
    if slugify is None:
        from markdown.extensions.toc import slugify
    seen, first_ids = set(), []

    def heading(match):
        level, inner = match[1], match[2]
        text = html.unescape(re.sub(r"<[^>]+>", "", inner)).strip()
        slug = base = slugify(text, "-") or "section"
        number = 0
        while slug in seen:
            number += 1
            slug = f"{base}_{number}"
        seen.add(slug)
        first_ids.append(slug)
        return (f'<h{level} id="{slug}">{inner}<a class="headerlink" href="#{slug}"'
                f' title="Permanent link">&para;</a></h{level}>')

    content = NB_HEADING.sub(heading, content)
    # mkdocs-jupyter's table of contents (the title, toc_depth 1) links to its own id.
    for item, slug in zip(page.toc, first_ids):
        item.id = slug
    return content


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
