"""In-page components: a fence named after a component becomes that component's HTML.

A component lives in a snippet folder, beside the code it mirrors:

    snippets/<slug>/components/<name>/
        template.html   Jinja2; gets `labels` (the page's language), `options` (the fence's
                        `key: value` lines), `data` (from data.py) and `assets`; may import
                        the kit's macros (KIT_TEMPLATE), e.g. {% from "component-kit.html"
                        import step_bar %}
        labels.yml      {zh: {...}, en: {...}}: every text it shows, in both languages
        data.py         optional: data(options) -> dict, computed with the lesson's code
        script.js, style.css   optional: loaded only by the pages that show the component,
                        each after the component kit's (KIT), which they may use; script.js
                        may use a teaching module's JavaScript twin too (see twins)

A page shows it with a fence at the start of a line:

    ```<name>
    option: value
    ```
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import jinja2
import yaml

from coursekit import ROOT
from coursekit.code import folders, load, reading_order
from coursekit.pages import default_language, fences, pages

ASSETS = ("script.js", "style.css")
# The component kit: what the components' scripts share, and what their styles share.
KIT = {"script.js": ROOT / "coursekit" / "component-kit.js",
       "style.css": ROOT / "coursekit" / "component-kit.css"}
# And the HTML they share, as Jinja macros for their templates (not an asset of the site).
KIT_TEMPLATE = ROOT / "coursekit" / "component-kit.html"


@dataclass(frozen=True)
class Component:
    folder: Path  # snippets/<slug>/components/<name>
    root: Path = ROOT

    @property
    def name(self) -> str:
        return self.folder.name

    @cached_property
    def labels(self) -> dict[str, dict]:
        path = self.folder / "labels.yml"
        labels = yaml.safe_load(path.read_text("utf-8")) if path.is_file() else None
        if not isinstance(labels, dict) or not all(isinstance(v, dict) for v in labels.values()):
            raise ValueError(f"{self.where('labels.yml')}: needs one mapping of labels per"
                             " language (zh: {...}, en: {...})")
        return labels

    def where(self, file: str = "") -> str:
        return (self.folder / file).relative_to(self.root).as_posix()

    def assets(self) -> list[Path]:
        return [self.folder / name for name in ASSETS if (self.folder / name).is_file()]

    def modules(self) -> list[Path]:
        """The JavaScript twins its script uses (courseModules.<name>), each after those it
        uses in turn: its own lesson's and earlier lessons' only."""
        script = self.folder / "script.js"
        if not script.is_file():
            return []
        found = twin_files(TWIN_USE.findall(script.read_text("utf-8")), self.root)
        order = reading_order(self.root)
        later = [path.name for path in found
                 if order[path.parent.name] > order[self.folder.parent.parent.name]]
        if later:
            raise ValueError(f"{self.where('script.js')}: uses {', '.join(later)}, of a later"
                             " lesson: a component builds on its own lesson and earlier ones")
        return found

    def parity(self):
        """The parity contract (parity.py), or None: cases() of link states, expected(state)
        -> what each [data-key] element shows (or "error"), BROKEN = (old, new), a wrong
        formula for script.js that the check must catch, and what the course-wide reader
        tests check of it (CONTRACT: FULL_WIDTH, KEY_RESULTS)."""
        source = self.folder / "parity.py"
        if not source.is_file():
            return None
        return load(source, f"parity_{self.name.replace('-', '_')}", self.root)

    def data(self, options: dict) -> dict:
        source = self.folder / "data.py"
        if not source.is_file():
            return {}
        module = load(source, f"component_{self.name.replace('-', '_')}", self.root)
        return module.data(options)

    def render(self, options: dict, language: str, asset_url) -> str:
        """The component's HTML for a page; asset_url(path) -> URL from that page of a file
        the site has at assets/components/<path> (see kit_assets)."""
        if language not in self.labels:
            raise ValueError(f"{self.where('labels.yml')}: no {language} labels")
        environment = jinja2.Environment(
            loader=jinja2.FileSystemLoader([self.folder, KIT_TEMPLATE.parent]), autoescape=True,
            undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
        environment.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False)
        template = environment.get_template("template.html")
        assets = {path.name: asset_url(f"{self.name}/{path.name}") for path in self.assets()}
        html = template.render(labels=self.labels[language], options=options,
                               data=self.data(options), assets=assets)
        # The kit's file before the component's own: deferred scripts run in document order.
        kit = {name: asset_url(KIT[name].name) for name in assets}
        tags = ([f'<link rel="stylesheet" href="{kit["style.css"]}">',
                 f'<link rel="stylesheet" href="{assets["style.css"]}">']
                if "style.css" in assets else [])
        scripts = ([kit["script.js"]] + [asset_url(f"modules/{path.name}") for path in self.modules()]
                   + [assets["script.js"]] if "script.js" in assets else [])
        tags += [f'<script src="{src}" defer></script>' for src in scripts]
        # Every component ends with the kit's line that copies the link to its setup.
        if "script.js" in assets:
            tags.insert(0, str(environment.get_template(KIT_TEMPLATE.name).make_module()
                               .share_link(language)))
        # The tags go inside the template's one root element, at its end: Markdown keeps a raw
        # HTML block only up to the root's closing tag and its first blank line.
        lines = [line for line in html.splitlines() if line.strip()]
        if not lines or not lines[-1].lstrip().startswith("</"):
            raise ValueError(f"{self.where('template.html')}: the template is one root element,"
                             " closed on its own last line")
        return "\n".join(lines[:-1] + tags + lines[-1:])


# What a parity contract holds besides cases(), expected(state) and BROKEN, for the tests
# every component passes (tests/test_readers.py, tests/test_components.py), so that a new
# component needs no edit to them:
#   FULL_WIDTH = {"link": {...}, "ascii": {...}, "typed": (field, typed, value)}: a link in
#       the full-width forms of a Chinese input method (１６，３８４) and the same link in
#       ASCII, which the page must read alike; and a text field, what a reader types into it
#       in full-width forms, and the value the link then holds. "typed": None where no text
#       field takes a number (menus only); FULL_WIDTH = None where nothing does.
#   KEY_RESULTS = [selector, ...]: optional, the key results the compact layout keeps in
#       view while a reader edits (default: the kit's summary, [".ck-summary"]).
CONTRACT = ("cases", "expected", "BROKEN", "FULL_WIDTH")
KEY_RESULTS = [".ck-summary"]


def key_results(contract) -> list[str]:
    """The CSS selectors, within the component, of the key results a contract names."""
    return list(getattr(contract, "KEY_RESULTS", KEY_RESULTS))


def contract_problems(root: Path = ROOT) -> list[str]:
    """Every component has a parity contract that holds what CONTRACT names, and is shown on
    a page (component_pages)."""
    problems, shown = [], component_pages(root)
    for name, component in components(root).items():
        if name not in shown:
            problems.append(f"{component.where()}: no page has a {name} fence")
        contract = component.parity()
        if contract is None:
            problems.append(f"{component.where()}: no parity.py")
            continue
        missing = [item for item in CONTRACT if not hasattr(contract, item)]
        if missing:
            problems.append(f"{component.where('parity.py')}: no {', '.join(missing)}")
        full_width = getattr(contract, "FULL_WIDTH", None)
        if full_width is not None and set(full_width) != {"link", "ascii", "typed"}:
            problems.append(f"{component.where('parity.py')}: FULL_WIDTH holds link, ascii"
                            " and typed")
    return problems


def component_pages(root: Path = ROOT) -> dict[str, str]:
    """Each component a page shows, by name: the URL path, from the site's root in the
    default language (e.g. lessons/kv-cache/), of the first page with its fence (at any
    indent: coursekit.pages reads the fences)."""
    names, found = set(components(root)), {}
    for page in pages(root):
        if page.language != default_language(root):
            continue
        for fence in fences(page.relative, page.source):
            if fence.language in names:
                found.setdefault(fence.language, page.html.removesuffix("index.html"))
    return found


def fill(text: str, **values) -> str:
    """A component's message with its {placeholders} filled in; one with no value stays as it
    is (component-kit.js: fill, its twin)."""
    return re.sub(r"\{(\w+)\}", lambda match: str(values.get(match[1], match[0])), text)


def fence_choice(options: dict, key: str, choices) -> str:
    """The one `key: value` line a component's fence holds, its value one of choices (for
    a data.py)."""
    if set(options) != {key} or options[key] not in choices:
        raise ValueError(f"the fence holds one line, {key}: one of {', '.join(choices)}")
    return options[key]


# The kit's number reader (component-kit.js: number), for the parity contracts to read a
# link, and what a reader types, as the page does.
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_NUMBER = re.compile(r"(\d+(\.\d+)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_GROUPED = re.compile(r"\d{1,3}(,\d{3})+(?=[.eE]|\Z)", re.ASCII)
_SPACES = " \t\u00a0\u3000"


def read_number(text: str) -> float | None:
    """The number a text holds, or None: digits, maybe a fraction, maybe an exponent, no
    sign; full-width forms (８１９２, ８，１９２, ０．９２) as their ASCII ones, commas
    grouping the integer part's digits by three (8,192), spaces around it dropped."""
    plain = text.translate(_FULL_WIDTH).strip(_SPACES)
    if _GROUPED.match(plain):
        plain = plain.replace(",", "")
    if not _NUMBER.fullmatch(plain):
        return None
    value = float(plain)
    return value if math.isfinite(value) else None


def read_whole(text: str, least: int, most: int) -> int | None:
    """A whole number from least to most, read by read_number, or None (component-kit.js:
    whole)."""
    value = read_number(text)
    if value is None or not value.is_integer() or not least <= value <= most:
        return None
    return int(value)


def read_flag(text: str) -> bool | None:
    """A yes or no as a link holds it: 1 or true, 0 or false (any case, spaces around
    dropped), or None (component-kit.js: flag)."""
    return {"1": True, "true": True, "0": False, "false": False}.get(text.strip(_SPACES).lower())


# The teaching modules' JavaScript twins: snippets/<slug>/<module>.js beside <module>.py,
# written to read like it, checked against it in Node (tests/test_js_mirrors.py). Each is
# a classic script that sets courseModules.<module> and reads the twins it uses from
# courseModules too, as a component's script does; the site has it at
# assets/components/modules/<module>.js.
TWIN_USE = re.compile(r"\bcourseModules\.(\w+)")


def twins(root: Path = ROOT) -> dict[str, Path]:
    """Every JavaScript twin, by module name."""
    return {path.stem: path for folder in folders(root) for path in sorted(folder.glob("*.js"))
            if path.with_suffix(".py").is_file()}


def twin_files(names, root: Path = ROOT) -> list[Path]:
    """The twins named and those they use, each after those it uses; a twin that uses a
    later lesson's is refused, as a later lesson's import is."""
    known, order, found = twins(root), reading_order(root), []

    def add(name: str, user: Path | None) -> None:
        if name not in known:
            raise ValueError(f"{user.relative_to(root).as_posix() if user else name}: no twin"
                             f" {name}.js beside a {name}.py in a snippet folder")
        path = known[name]
        if user is not None and order[path.parent.name] > order[user.parent.name]:
            raise ValueError(f"{user.relative_to(root).as_posix()}: uses {path.name}, of a"
                             " later lesson")
        if path in found:
            return
        for used in TWIN_USE.findall(path.read_text("utf-8")):
            if used != name:
                add(used, path)
        found.append(path)

    for name in dict.fromkeys(names):
        add(name, None)
    return found


def run_twins(names, driver: str, given, root: Path = ROOT):
    """What a Node script (driver) answers, as JSON on its stdout, to `given`, as JSON on its
    stdin: the tests hold each twin to its Python this way. Its first argument is the list of
    the twins' files (twin_files(names)), to load in that order as the browser does."""
    files = [str(path) for path in twin_files(names, root)]
    done = subprocess.run(["node", "-e", driver, json.dumps(files)], input=json.dumps(given),
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise AssertionError(f"node failed on the twins {', '.join(names)}:\n{done.stderr}")
    return json.loads(done.stdout)


def kit_assets() -> list[Path]:
    """The component kit's files, which the site has at assets/components/<file name>."""
    return list(KIT.values())


def kit_files() -> list[Path]:
    """Every file of the component kit: its assets and its template macros."""
    return [*kit_assets(), KIT_TEMPLATE]


def components(root: Path = ROOT) -> dict[str, Component]:
    """Every component of every snippet folder, by name."""
    found = {}
    for folder in folders(root):
        for path in sorted((folder / "components").glob("*/template.html")):
            component = Component(path.parent, root)
            if component.name in found:
                raise ValueError(f"{component.where()} and {found[component.name].where()}:"
                                 " two components with one name")
            found[component.name] = component
    return found


def label_problems(root: Path, languages: list[str]) -> list[str]:
    """Every component has the same labels in every language."""
    problems = []
    for component in components(root).values():
        try:
            labels = component.labels
        except ValueError as error:
            problems.append(str(error))
            continue
        keys = {language: _keys(labels.get(language, {})) for language in languages}
        first, *others = languages
        problems += [f"{component.where('labels.yml')}: {language} lacks"
                     f" {sorted(keys[first] - keys[language])}, has extra"
                     f" {sorted(keys[language] - keys[first])} compared with {first}"
                     for language in others if keys[language] != keys[first]]
    return problems


def _keys(labels: dict, prefix: str = "") -> set[str]:
    keys = set()
    for key, value in labels.items():
        keys |= _keys(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key}
    return keys
