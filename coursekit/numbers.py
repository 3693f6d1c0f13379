"""The numbers guard: both languages of a page state the same numbers, and each has a source.

What counts as prose: a page's Markdown outside its front matter, code fences, raw <pre>
blocks, inline code, HTML comments, tags and entities, and link targets. Math ($...$) is
prose: a formula states numbers too. Inline code is left out because it quotes code
(`seq_len=2048`), and the vLLM claims test checks the vLLM values it quotes. On the glossary
page the prose also holds the terms of hooks/glossary.yml, which the glossary hook puts
there (in the course that holds that file: the tests' fixture course borrows the real
course's hooks).

How a number is read. Thousands separators (a comma, a space or a thin space between groups
of three digits) are dropped and full-width digits read as ASCII digits, so 32,768 and
32 768 are one number; a multiplier right after it applies (万 10^4, 亿 10^8, thousand,
million, billion), so 76.1 亿 and 7.61 billion are one number too. A unit is no part of a
number: 56 KiB and 56KiB both state 56.

What is not a quantity. The kinds below must still be the same in both languages, but need
no source:
- names and versions: a number glued to a letter on its left, directly or through "-", "."
  or "_" (Qwen2.5-7B, H100, fp8, ADR-0004); glued to letters on its right that are no unit
  (7B, 8k); with two or more dots (0.26.0); right after a word with an uppercase letter past
  its first (RTX 4090, vLLM 0.26.0, MkDocs 1.6, SM 8.9); a number with one dot right after a
  capitalized word (Python 3.11); a minimum version ("1.18 or newer", "3.11 及以上");
- dates: a year (1900 to 2099) before 年, next to an English month name, or closing a
  parenthesis ("(2023)", "the vLLM paper, 2023)"); a month or day before 月 or 日, or next
  to an English month name, which then counts as its number (2027 年 5 月 = May 2027);
- structure: the number of a section heading (## 3 · ...) or of an ordered list item.

The rules.
1. For every page pair, the numbers of the prose are the same multiset in both languages.
2. Every quantity is produced by something the page shows, or visibly marked as an
   estimate. Produced: its value appears in one of the page's sources, which are the files
   it includes (--8<--) with the course modules and data files that included code reads,
   the lesson code it offers (```lesson-code), the files of the components and the charts
   it shows, its GPU lab card (the hardware), and the same sources of every course page it
   links to (an interview answer links to the lesson that computes it). Marked: the
   sentence (or table cell) that holds the number says 估计 on a Chinese page or estimate /
   estimated / estimates on an English one, e.g. "约 ¥1（估计）" and "about ¥1 (estimate)".
A value found in a source is enough: the guard catches a typed or drifted number, it does
not prove the arithmetic. Stale translations are no exception: numbers are the same in
every language, so a contributor who cannot translate a change still copies its numbers.

Each problem names the page, the line and the number.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from difflib import SequenceMatcher
from itertools import groupby
from pathlib import Path, PurePosixPath

import yaml

from coursekit import code, components
from coursekit.pages import Page, fence_lines, fences, pages, snippet_file
from coursekit.translations import SOURCE_LANGUAGE

MONTHS = ("January February March April May June July August September October November"
          " December").split()
MONTH = "|".join(MONTHS)
MULTIPLIERS = {"万": 10**4, "亿": 10**8, "thousand": 10**3, "million": 10**6,
               "billion": 10**9}
UNITS = {"KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB", "ms", "s", "x"}
MINIMUM_VERSION = r"\s?(?:or newer|or later|及以上|或更新|或更高)"
FULL_WIDTH = str.maketrans("０１２３４５６７８９．", "0123456789.")
# A number: digits, or groups of three after a separator, then decimal parts.
NUMBER = re.compile(r"(?<![\d.])(\d{1,3}(?:[,\u00a0\u2009\u202f ]\d{3})+(?![\d])|\d+)"
                    r"((?:\.\d+)*)")
SOURCE_NUMBER = re.compile(r"\d[\d_,]*(?:\.\d+)?(?:[eE][+-]?\d+)?")
CODE_SPAN = re.compile(r"(`+).+?\1")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
URL = re.compile(r"https?://\S+")
TAG = re.compile(r"<!--.*?-->|<[^>]+>|&#?\w+;")
HEADING_NUMBER = re.compile(r"^(#{1,6}[ \t]+)\d+(?=[ \t]*·)")
LIST_NUMBER = re.compile(r"^([ \t]*)\d+\.(?=[ \t])")
ADMONITION = re.compile(r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+[\w-]+")
LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")
SENTENCE_END = {"zh": re.compile(r"[。！？；|]"), "en": re.compile(r"[.!?;](?=\s|$)|\|")}
ESTIMATE = {"zh": re.compile(r"估计"), "en": re.compile(r"\bestimate[sd]?\b", re.I)}
GLOSSARY = PurePosixPath("hooks/glossary.yml")
GLOSSARY_MARKER = "<!-- glossary terms -->"


@dataclass(frozen=True)
class Number:
    where: str  # docs/<page>:<line>, and the glossary term it is in
    text: str  # as written
    key: str  # what must match across languages
    kind: str  # quantity, name or date
    values: frozenset[Decimal]  # what a source may print: as written, and with its multiplier
    estimate: bool  # its sentence marks it as an estimate

    def __str__(self) -> str:
        return self.text


def prose_lines(page: Page, root: Path) -> list[tuple[str, str]]:
    """The page's prose, line by line, each with where it is (docs/<page>:<line>)."""
    lines = page.source.splitlines()
    skip = set(fence_lines(page.source))
    if lines and lines[0] == "---":  # front matter
        end = next((i for i in range(1, len(lines)) if lines[i] == "---"), 0)
        skip.update(range(1, end + 2))
    found, in_pre = [], False
    for number, line in enumerate(lines, 1):
        if "<pre" in line:
            in_pre = True
        if in_pre or number in skip:
            in_pre = in_pre and "</pre>" not in line
            continue
        where = f"docs/{page.relative}:{number}"
        if line.strip() == GLOSSARY_MARKER and owns_glossary(root):
            found += [(f"{where} ({GLOSSARY}, term {term_id})", text)
                      for term_id, text in glossary_texts(root, page.language)]
            continue
        found.append((where, line))
    return found


def owns_glossary(root: Path) -> bool:
    """The course holds its own glossary data (the fixture course borrows the real hooks)."""
    return (root / GLOSSARY).is_file() and not (root / GLOSSARY.parent).is_symlink()


def glossary_texts(root: Path, language: str) -> list[tuple[str, str]]:
    """What the glossary hook puts on the glossary page: each term's name and definition."""
    terms = yaml.safe_load((root / GLOSSARY).read_text("utf-8"))
    return [(term["id"], f"{term[language]}: {term['definition'][language]}") for term in terms]


def _clean(line: str) -> str:
    line = line.translate(FULL_WIDTH)
    line = HEADING_NUMBER.sub(r"\1", line)
    line = LIST_NUMBER.sub(r"\1", line)
    line = ADMONITION.sub("", line)
    for pattern in (CODE_SPAN, LINK_TARGET, URL, TAG):
        line = pattern.sub(lambda match: "]" if match[0].startswith("]") else " ", line)
    return line.replace(r"\,", " ")


def numbers_in(text: str, where: str, language: str) -> list[Number]:
    text = _clean(text)
    found = []
    for match in NUMBER.finditer(text):
        digits = re.sub(r"[,\u00a0\u2009\u202f ]", "", match[1])
        written = digits + match[2]
        before, after = text[: match.start()], text[match.end():]
        kind = _kind(written, before, after)
        value = Decimal(written) if written.count(".") <= 1 else None
        values = {value} if value is not None else set()
        key = written
        if kind == "quantity":
            multiplier = next((factor for word, factor in MULTIPLIERS.items()
                               if re.match(rf"\s?{word}", after)), 1)
            values.add(value * multiplier)
            key = _canonical(value * multiplier)
        sentence_start = max((m.end() for m in SENTENCE_END[language].finditer(before)),
                             default=0)
        ends = SENTENCE_END[language].search(after)
        sentence = text[sentence_start: match.end() + (ends.start() if ends else len(after))]
        found.append(Number(where, match[0], key, kind, frozenset(values),
                            bool(ESTIMATE[language].search(sentence))))
        if kind == "date" and (month := re.match(rf"\s({MONTH})\b", after)):
            found.append(Number(where, month[1], str(MONTHS.index(month[1]) + 1), "date",
                                frozenset(), False))
    for month in re.finditer(rf"\b({MONTH})\s(?=\d{{4}}\b)", text):
        if not re.search(r"\d\s$", text[: month.start()]):  # counted with the day before it
            found.append(Number(where, month[1], str(MONTHS.index(month[1]) + 1), "date",
                                frozenset(), False))
    return found


def _kind(written: str, before: str, after: str) -> str:
    glued_left = re.search(r"[A-Za-z]$|[A-Za-z0-9][-._]$", before)
    glued_right = re.match(r"[A-Za-z]+", after)
    if (glued_left or written.count(".") >= 2
            or (glued_right and glued_right[0] not in UNITS)
            or re.search(r"(?<![A-Za-z])[A-Za-z]+[A-Z][A-Za-z]*\s$", before)
            or (written.count(".") == 1 and re.search(r"(?<![A-Za-z])[A-Z][a-z]+\s$", before))
            or re.match(MINIMUM_VERSION, after)):
        return "name"
    is_year = len(written) == 4 and 1900 <= int(written.split(".")[0]) <= 2099
    if (is_year and (re.match(r"\s?年|\s?[)）]", after) or re.search(rf"({MONTH})\s$", before))
            or re.match(r"\s?[月日]", after) or re.match(rf"\s({MONTH})\b", after)):
        return "date"
    return "quantity"


def _canonical(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def page_numbers(page: Page, root: Path) -> list[Number]:
    return [number for where, text in prose_lines(page, root)
            for number in numbers_in(text, where, page.language)]


def own_sources(page: Page, root: Path) -> list[str]:
    """The texts whose numbers the page shows: see the module's docstring."""
    files, texts = [], []
    for include in page.includes:
        try:
            files.append(snippet_file(root, include))
        except FileNotFoundError:
            continue  # the build and languages_match report it
    shown = components.components(root)
    for fence in fences(page.relative, page.source):  # as written: nothing is included
        body = fence.body.strip()
        if fence.language == "lesson-code" and body.startswith("snippets:"):
            folder = root / "snippets" / body.split(":", 1)[1].strip()
            files += list(code.bundle(folder, root).values()) if folder.is_dir() else []
        elif fence.language == "gpu-lab":  # the lab card: the hardware the lab needs
            texts.append(body)
        elif fence.language == "chart" and (name := re.match(r"name: *(\S+)", body)):
            files += (root / "snippets").glob(f"*/charts/{name[1]}.{page.language}.svg")
        elif fence.language in shown:
            files += [path for path in shown[fence.language].folder.iterdir() if path.is_file()]
    for path in list(files):
        if path.suffix == ".py":
            for module in (path, *code.course_imports(path, root), *_same_folder_imports(path)):
                files += [module, *code.data_files(module)]
    return texts + [_read(path) for path in sorted(set(files))]


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace")
    except OSError:  # gone since the folder was listed
        return ""


def _same_folder_imports(path: Path) -> list[Path]:
    seen, todo = set(), [path]
    while todo:
        for name in code.imported_names(todo.pop()):
            module = path.parent / f"{name}.py"
            if module.is_file() and module not in seen:
                seen.add(module)
                todo.append(module)
    return sorted(seen)


def linked_pages(page: Page, by_path: dict[Path, Page]) -> list[Page]:
    """The course pages a page links to, in its language."""
    linked = []
    for target in LINK.findall(page.source):
        path = (page.path.parent / target).resolve()
        candidate = path.with_name(f"{path.name.removesuffix('.md')}.{page.language}.md")
        if candidate in by_path:
            linked.append(by_path[candidate])
    return linked


def source_values(texts: list[str]) -> set[Decimal]:
    """Every number the texts hold: 7.61e9 gives 7.61e9 and 7.61, 7_615_616_512 one number."""
    values = set()
    for text in texts:
        for match in SOURCE_NUMBER.finditer(text):
            number = match[0].replace("_", "").replace(",", "")
            for candidate in (number, re.split(r"[eE]", number)[0]):
                try:
                    values.add(Decimal(candidate))
                except InvalidOperation:
                    pass
    return values


def prose_numbers(root: Path) -> list[str]:
    """The numbers guard (see the module's docstring): unsourced numbers, then numbers that
    one language states and the other does not."""
    all_pages = pages(root)
    by_path = {page.path.resolve(): page for page in all_pages}
    own = {page.path: source_values(own_sources(page, root)) for page in all_pages}
    found = {page.path: page_numbers(page, root) for page in all_pages}
    problems = []
    for page in all_pages:
        known = own[page.path].union(*(own[linked.path]
                                       for linked in linked_pages(page, by_path)))
        problems += [
            f"{number.where}: {number} has no source on the page: print it with a snippet"
            " the page shows, or mark it as an estimate in its sentence (估计 / estimate)"
            for number in found[page.path]
            if number.kind == "quantity" and not number.estimate and not number.values & known
        ]
    by_name = defaultdict(dict)
    for page in all_pages:
        by_name[page.name][page.language] = page
    for _, versions in sorted(by_name.items()):
        source = versions.get(SOURCE_LANGUAGE)
        for language, other in sorted(versions.items()):
            if source is not None and language != SOURCE_LANGUAGE:
                problems += _mismatches(source, found[source.path], other, found[other.path])
    return problems


def _mismatches(first: Page, first_numbers: list[Number], other: Page,
                other_numbers: list[Number]) -> list[str]:
    """The numbers one language states more often than the other, each reported on a line
    where the two pages differ: the lines are aligned by the numbers they state."""
    lines = {page.path: [list(group) for _, group in groupby(numbers, lambda n: n.where)]
             for page, numbers in ((first, first_numbers), (other, other_numbers))}
    shapes = {path: [tuple(sorted(n.key for n in line)) for line in found]
              for path, found in lines.items()}
    suspects = {first.path: [], other.path: []}  # numbers on lines that differ
    matcher = SequenceMatcher(None, shapes[first.path], shapes[other.path], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            suspects[first.path] += [n for line in lines[first.path][i1:i2] for n in line]
            suspects[other.path] += [n for line in lines[other.path][j1:j2] for n in line]
    first_keys = Counter(n.key for n in first_numbers)
    other_keys = Counter(n.key for n in other_numbers)
    problems = []
    for page, numbers, extra, missing_in in (
        (first, first_numbers, first_keys - other_keys, other),
        (other, other_numbers, other_keys - first_keys, first),
    ):
        for key, count in extra.items():
            candidates = [n for n in suspects[page.path] if n.key == key]
            candidates += [n for n in reversed(numbers) if n.key == key and n not in candidates]
            problems += [f"{n.where}: {n} is not in docs/{missing_in.relative} (the"
                         f" {page.language} page states a number the other language does not)"
                         for n in candidates[:count]]
    return problems
