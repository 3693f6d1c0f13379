"""A lesson's code to download: the fence

    ```lesson-code
    snippets: <slug>
    ```

on docs/lessons/<slug>.<lang>.md (hooks/fences.py finds it) becomes a box with a link to
snippets/<slug>/ as one zip (with the modules it imports from earlier lessons, coursekit/code.py),
naming those lessons. The zips are written with the site, each with a README.md in both
languages (coursekit.code.readme) and the lab notebooks in both (coursekit/lab_notebooks.py).
(An empty fence would confuse pytest-examples' fence matching.)

Labels come from `extra.lesson_code` of the language being built (mkdocs.yml)."""

import re
import zipfile
from pathlib import Path

import nbformat
from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

from coursekit.code import borrowed, bundle, readme
from coursekit.lab_notebooks import STEPS, file_name, lab_notebooks, language_extras

BODY = re.compile(r"snippets: *(?P<slug>[\w-]+)[ \t]*\n")


def archive_url(slug: str) -> str:
    return f"assets/code/{slug}.zip"


def _lesson_title(docs: Path, slug: str, language: str) -> str | None:
    page = docs / "lessons" / f"{slug}.{language}.md"
    if not page.is_file():
        return None
    title = next((line for line in page.read_text("utf-8").splitlines()
                  if line.startswith("# ")), f"# {slug}")
    return title[2:].strip()


def course_fences(config) -> dict:
    """hooks/fences.py: a lesson-code fence becomes the box."""
    return {"lesson-code": render}


def render(body: str, page, config) -> str:
    where, root = page.file.src_uri, Path(config.config_file_path).parent
    given = BODY.fullmatch(body)
    if given is None:
        raise PluginError(f"{where}: a lesson-code fence holds one line, snippets: <snippet folder>;"
                          f" it holds {body.strip()!r}")
    folder = root / "snippets" / given["slug"]
    if not folder.is_dir():
        raise PluginError(f"{where}: lesson-code names snippets/{folder.name}/, which does not exist")
    return box(root, folder, config, page, page.file.locale)


def box(root, folder, config, page, language) -> str:
    slug = folder.name
    labels = config.extra["lesson_code"]
    href = get_relative_url(archive_url(slug), page.url)
    lines = [f'!!! example "{labels["title"]}"', "",
             f'    {labels["download"]} <a href="{href}" download>{slug}.zip</a>']
    if (folder / STEPS).is_file():
        # The lab notebook's page is the lesson page's sibling, in each language (hooks/notebooks.py).
        name = file_name(slug, language)
        lines += ["", "    " + labels["notebook"].format(
            download=f'<a href="../{slug}-lab/{name}" download>{name}</a>',
            view=f'<a href="../{slug}-lab/">{labels["view"]}</a>')]
    for other, modules in borrowed(folder, root).items():
        names = labels["separator"].join(f"`{name}`" for name in modules)
        title = _lesson_title(Path(config.docs_dir), other, language)
        source = f"[{title}]({other}.md)" if title else f"`snippets/{other}/`"
        lines += ["", f"    {labels['imports'].format(modules=names, lesson=source)}"]
    return "\n".join(lines) + "\n"


def on_post_build(config):
    root = Path(config.config_file_path).parent
    notebooks = lab_notebooks(config, root)
    for page in sorted((root / "docs" / "lessons").glob("*.md")):
        slug = page.name.split(".")[0]
        folder = root / "snippets" / slug
        target = Path(config.site_dir) / archive_url(slug)
        if not folder.is_dir() or target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, source in bundle(folder, root).items():
                # A fixed date: the same code gives the same zip.
                info = zipfile.ZipInfo(f"{slug}/{name}", date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, source.read_bytes())
            written = {name: nbformat.writes(book).encode("utf-8")
                       for (lesson, language), book in notebooks.items() if lesson == slug
                       for name in [file_name(slug, language)]}
            written["README.md"] = _readme(root, folder, config).encode("utf-8")
            for name, data in written.items():
                info = zipfile.ZipInfo(f"{slug}/{name}", date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)


def _readme(root: Path, folder: Path, config) -> str:
    """The zip's README.md, in each language the lesson page is written in."""
    docs, languages = Path(config.docs_dir), list(language_extras(config))
    pages = {}
    for language in languages:
        page = docs / "lessons" / f"{folder.name}.{language}.md"
        if page.is_file():
            pages[language] = (_lesson_title(docs, folder.name, language),
                               page.read_text("utf-8"))
    titles = {other: {language: _lesson_title(docs, other, language) or other
                      for language in languages}
              for other in borrowed(folder, root)}
    return readme(folder, pages, root, titles)

