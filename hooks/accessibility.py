"""What Material's pages lack for assistive technology and small screens, added to every page
(the search dialog's name is in overrides/partials/search.html).

- A content table gets what it needs to stack on a phone (docs/stylesheets/course.css): each
  cell carries its column's header as `data-label`, shown before it when the rows become
  cards, and the table's parts carry their roles explicitly, since a browser drops a table's
  semantics when CSS changes its display. A column whose every cell is short (an order, a
  status: SHORT characters at most) marks its cells `data-short`: on a phone they share a line
  with their neighbours instead of taking a line each.
"""

import html
import re

# A Markdown table: a bare <table> with a header row (Material styles `table:not([class])`).
TABLE = re.compile(r"<table>(\s*<thead>.*?)</table>", re.S)
HEADER = re.compile(r"<th\b([^>]*)>(.*?)</th>", re.S)
ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
CELL = re.compile(r"<td\b([^>]*)>")
TAGS = re.compile(r"<[^>]+>")
CELL_TEXT = re.compile(r"<td\b[^>]*>(.*?)</td>", re.S)
SHORT = 12


def _text(cell: str) -> str:
    return html.unescape(TAGS.sub("", cell)).strip()


def short_columns(rows: str, columns: int) -> set[int]:
    """The columns whose every cell holds SHORT characters or fewer (never all of them)."""
    cells = [[_text(cell) for cell in CELL_TEXT.findall(row)] for row in ROW.findall(rows)]
    short = {column for column in range(columns)
             if all(column < len(row) and len(row[column]) <= SHORT for row in cells)}
    return short if len(short) < columns else set()


def stackable(table: re.Match) -> str:
    body = table[1]
    head, _, rows = body.partition("</thead>")
    labels = [html.escape(html.unescape(TAGS.sub("", cell[2])).strip()) for cell in HEADER.finditer(head)]
    if not labels or not rows:
        return table[0]
    head = HEADER.sub(r'<th role="columnheader"\1>\2</th>', head)
    short = short_columns(rows, len(labels))

    def row(match):
        cells = iter(enumerate(labels))

        def cell(found):
            column, label = next(cells, (None, ""))
            mark = " data-short" if column in short else ""
            return f'<td role="cell" data-label="{label}"{mark}{found[1]}>'

        return '<tr role="row">' + CELL.sub(cell, match[1]) + "</tr>"

    head, rows = ROW.sub(lambda m: f'<tr role="row">{m[1]}</tr>', head), ROW.sub(row, rows)
    head = head.replace("<thead>", '<thead role="rowgroup">', 1)
    rows = rows.replace("<tbody>", '<tbody role="rowgroup">', 1)
    return f'<table role="table" data-stack>{head}</thead>{rows}</table>'


def on_page_content(content, page, config, files):
    return TABLE.sub(stackable, content)
