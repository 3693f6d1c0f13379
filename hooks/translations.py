"""Show a notice on a translated page whose source page changed after it was translated
(coursekit/translations.py)."""

from pathlib import Path

from mkdocs.utils import get_relative_url

from coursekit.translations import SOURCE_LANGUAGE, is_stale, recorded_hash


def on_page_markdown(markdown, page, config, files):
    if page.file.locale == SOURCE_LANGUAGE:
        return markdown
    # The hash as written, not page.meta's: YAML reads a hash of digits only as a number.
    path = Path(page.file.abs_src_path)
    if not is_stale(path, recorded_hash(path.read_text("utf-8"))):
        return markdown
    labels = config.extra["translation"]
    source_url = page.url.split("/", 1)[1]  # en/lessons/kv-cache/ -> lessons/kv-cache/
    link = get_relative_url(source_url, page.url)
    notice = f'!!! warning "{labels["stale_title"]}"\n    {labels["stale_text"]} [{labels["source"]}]({link})\n\n'
    title_end = markdown.find("\n", markdown.find("# ")) + 1 if markdown.startswith("# ") else 0
    return markdown[:title_end] + "\n" + notice + markdown[title_end:]
