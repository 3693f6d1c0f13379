"""Every vLLM name a page or an included snippet quotes, as a claim to check against vLLM's source.

Claims are found, not listed: LLM(...) and SamplingParams(...) keywords and `# default X`
comments in Python snippets, flags of `vllm serve` commands and `--flag` code spans, VLLM_*
environment variables, lines of `.log` snippets and log lines quoted in prose (a code span of
three or more words ending with a full stop), rows of option tables
(| `keyword` | `--flag` | `default` | ... |), every "vLLM x.y.z" / "vllm==x.y.z", and what the
prose says the wheel requires: `package==x.y.z` (its METADATA's Requires-Dist), "CUDA N" (the
CUDA runtime its extensions link) and "Python 3.a–3.b" (its Requires-Python). In every page and
every file of every snippet folder (code, components, GPU checks): each rule cited as
`vllm/<path>.py: <Name.name>`, each source file linked and each `vllm:<metric>` quoted. A rule
cited in, or a link to, a file of vLLM's GPU model runners must be of the runner vLLM gives the
course's model (COURSE_MODEL).

Besides claims, tab_problems finds the labs whose two tabs, a Python `LLM(...)` and a
`vllm serve` command, do not configure the engine the same way.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from coursekit import ROOT
from coursekit import vllm_source as vllm
from coursekit.code import module_files
from coursekit.pages import INCLUDE, fence_lines, pages, snippet_file

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
ENV = re.compile(r"\bVLLM_[A-Z0-9_]+\b")
VERSION = re.compile(r"\b(?:vLLM |vllm==)(\d+\.\d+\.\d+)\b")
CODE_SPAN = re.compile(r"`([^`]+)`")
TABLE_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*`(--[\w-]+)`\s*\|\s*`([^`]*)`\s*\|(.*)\|\s*$")
DEFAULT_COMMENT = re.compile(r"#.*\bdefault ([\w.]+)")
REQUIREMENT = re.compile(r"`([A-Za-z][\w.-]*)==(\d[\w.]*)`")
CUDA = re.compile(r"\bCUDA (\d+)(?:\.\d+)?\b")
PYTHON_RANGE = re.compile(r"\bPython (3\.\d+) ?(?:–|-|to|至|到) ?(3\.\d+)\b")
LOG_SPAN = re.compile(r"[A-Z][\x20-\x7e]*\S \S+ [\x20-\x7e]*\.")
# A citation: the file, then (maybe after a comment sign on the next line) the dotted name of
# the function, class or attribute a rule mirrors.
CITATION = re.compile(r"(vllm/[\w/]+\.py):\s*(?:(?:#|//)\s*)?([A-Za-z_]\w*(?:\.\w+)*)")
METRIC = re.compile(r"\bvllm:[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
# The model every lab of lessons 2-5 serves (its config.json from the presets file): what the
# pages cite of vLLM's GPU model runner must be the runner vLLM gives it.
COURSE_MODEL = "Qwen2.5-7B-Instruct"
# A link to a file of vLLM's source on GitHub (further reading).
SOURCE_LINK = re.compile(r"github\.com/vllm-project/vllm/blob/v[\w.]+/(vllm/[\w/]+\.py)")
PRESETS = "snippets/kv-cache/model_presets.json"
# What Prometheus adds to a metric's name when it exports it.
METRIC_SUFFIXES = ("_total", "_bucket", "_sum", "_count", "_created")


@dataclass(frozen=True)
class Claim:
    where: str  # file:line, and the pages that show it
    kind: str  # keyword, flag, env, default, choice, log, version, source, file, metric
    name: str
    value: str = ""

    def __str__(self):
        value = f" = {self.value}" if self.value else ""
        return f"{self.where}: {self.kind} {self.name}{value}"


def claims(root: Path) -> list[Claim]:
    shown_on = defaultdict(list)
    found = []
    for page in pages(root):
        for include in page.includes:
            shown_on[include].append(f"docs/{page.relative}")
        found += _page_claims(page)
    for include, page_names in sorted(shown_on.items()):
        path = snippet_file(root, include)
        where = f"snippets/{include}:{{}} (shown on {', '.join(sorted(set(page_names)))})"
        found += _snippet_claims(path, where)
    texts = {f"docs/{page.relative}": page.source for page in pages(root)}
    texts |= {path.relative_to(root).as_posix(): path.read_text("utf-8")
              for path in sorted((root / "snippets").rglob("*"))
              if path.suffix in (".py", ".js", ".sh", ".html") and "__pycache__" not in path.parts}
    for name, text in texts.items():
        for number, line in enumerate(text.splitlines(), 1):
            found += [Claim(f"{name}:{number}", "metric", metric) for metric in METRIC.findall(line)]
        found += [Claim(f"{name}:{text.count(chr(10), 0, cited.start()) + 1}", "source", *cited.groups())
                  for cited in CITATION.finditer(text) if cited[1] != "vllm/<path>.py"]
        found += [Claim(f"{name}:{text.count(chr(10), 0, link.start()) + 1}", "file", link[1])
                  for link in SOURCE_LINK.finditer(text)]
    return found


def _page_claims(page) -> list[Claim]:
    found = []
    in_fence = fence_lines(page.source)
    for number, line in enumerate(page.source.splitlines(), 1):
        if number in in_fence:
            continue
        where = f"docs/{page.relative}:{number}"
        found += [Claim(where, "version", "vllm", v) for v in VERSION.findall(line)]
        found += [Claim(where, "env", name) for name in ENV.findall(line)]
        found += [Claim(where, "requires", name, f"=={version}")
                  for name, version in REQUIREMENT.findall(line) if name.lower() != "vllm"]
        found += [Claim(where, "cuda", "CUDA", major) for major in CUDA.findall(line)]
        found += [Claim(where, "python", "Python", f"{low}-{high}")
                  for low, high in PYTHON_RANGE.findall(line)]
        found += [Claim(where, "log", span) for span in CODE_SPAN.findall(line)
                  if LOG_SPAN.fullmatch(span)]
        row = TABLE_ROW.match(line)
        if row:
            keyword, flag, value, rest = row.groups()
            found += [Claim(where, "keyword", f"LLM.{keyword}"), Claim(where, "flag", flag),
                      Claim(where, "default", keyword, value)]
            if keyword in vllm.CHOICES:
                found += [Claim(where, "choice", keyword, choice)
                          for choice in CODE_SPAN.findall(rest)]
        else:
            found += [Claim(where, "flag", span) for span in CODE_SPAN.findall(line)
                      if FLAG.fullmatch(span)]
    return found


def _snippet_claims(path: Path, where: str) -> list[Claim]:
    text = path.read_text("utf-8")
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        found += [Claim(where.format(number), "version", "vllm", v) for v in VERSION.findall(line)]
        found += [Claim(where.format(number), "env", name) for name in ENV.findall(line)]
    if path.suffix == ".py":
        found += _python_claims(text, lines, where)
    elif path.suffix == ".sh":
        found += [Claim(where.format(number), "flag", flag)
                  for number, line in _serve_lines(lines) for flag in FLAG.findall(line)]
    elif path.suffix == ".log":
        found += [Claim(where.format(number), "log", line.strip())
                  for number, line in enumerate(lines, 1) if line.strip()]
    return found


SERVE_COMMAND = re.compile(r"[ \t]*(?:\w+=\S*[ \t]+)*vllm serve ")  # after VAR=value words


def _serve_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(number, line) of a script's `vllm serve` commands, with their continuation lines; not
    the other commands (`python check_gpu.py --installed`, `pkill -f "vllm serve"`)."""
    found, inside = [], False
    for number, line in enumerate(lines, 1):
        inside = inside or SERVE_COMMAND.match(line) is not None
        if inside:
            found.append((number, line))
            inside = line.rstrip().endswith("\\")
    return found


def _python_claims(text: str, lines: list[str], where: str) -> list[Claim]:
    tree = ast.parse(text)
    from_vllm = {alias.asname or alias.name for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "vllm"
                 for alias in node.names}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in from_vllm):
            continue
        for keyword in node.keywords:
            at = where.format(keyword.lineno)
            found.append(Claim(at, "keyword", f"{node.func.id}.{keyword.arg}"))
            comment = DEFAULT_COMMENT.search(lines[keyword.lineno - 1])
            if comment and node.func.id == "LLM":
                found.append(Claim(at, "default", keyword.arg, comment[1]))
    return found


def check(claim: Claim, src: Path) -> str | None:
    """None when vLLM's source agrees with the claim; otherwise what the source says."""
    if claim.kind == "version":
        pinned = vllm.pinned_version()
        return None if claim.value == pinned else f"the course pins vllm=={pinned}"
    if claim.kind == "keyword":
        owner, name = claim.name.split(".")
        known = {"LLM": vllm.llm_keywords, "SamplingParams": vllm.sampling_params}
        if owner not in known:
            return f"no rule here reads the keywords of vllm.{owner}: add one to coursekit/vllm_source.py"
        if name in known[owner](src):
            return None
        return f"vllm.{owner} takes no keyword {name!r} (LLM passes extra keywords to EngineArgs)"
    if claim.kind == "flag":
        known = vllm.serve_flags(src) | vllm.bench_flags(src)
        if claim.name in known:
            return None
        near = sorted(f for f in known if f[2:6] == claim.name[2:6])
        return (f"`vllm serve` has no flag {claim.name}; similar flags: {', '.join(near) or 'none'}"
                " (`vllm bench serve` neither)")
    if claim.kind == "env":
        return None if claim.name in vllm.env_vars(src) else \
            f"vllm/envs.py defines no {claim.name}"
    if claim.kind == "default":
        try:
            accepted = vllm.declared_defaults(src, claim.name)
        except KeyError:
            return f"no rule here reads the default of {claim.name}: add one to coursekit/vllm_source.py"
        if claim.value in [str(value) for value in accepted]:
            return None
        resolved = f" (resolved: {accepted[1]!r})" if len(accepted) > 1 else ""
        return f"the default of {claim.name} is {accepted[0]!r}{resolved}"
    if claim.kind == "requires":
        required = vllm.requires(src).get(claim.name.lower().replace("_", "-"))
        if required == claim.value:
            return None
        return f"vLLM {vllm.pinned_version()} requires {claim.name}{required or ' not at all'}"
    if claim.kind == "cuda":
        major = vllm.cuda_major(src)
        return None if claim.value == str(major) else (
            f"the vLLM {vllm.pinned_version()} wheel links libcudart.so.{major}: CUDA {major}")
    if claim.kind == "python":
        low, high = claim.value.split("-")
        supported = _python_range(vllm.requires_python(src))
        return None if (low, high) == supported else (
            f"vLLM {vllm.pinned_version()} declares Requires-Python {vllm.requires_python(src)}:"
            f" Python {supported[0]} to {supported[1]}")
    if claim.kind == "choice":
        accepted = vllm.choices(src, claim.name)
        if claim.value in accepted:
            return None
        return f"{claim.name} accepts {', '.join(accepted)}; not {claim.value!r}"
    if claim.kind == "log":
        return _check_log_line(claim.name, src)
    if claim.kind == "source":
        return vllm.definition_problem(src, claim.name, claim.value) or runner_problem(
            src, claim.name)
    if claim.kind == "file":
        if not (src / claim.name).is_file():
            return f"vLLM {vllm.pinned_version()} has no {claim.name}"
        return runner_problem(src, claim.name)
    if claim.kind == "metric":
        exported = vllm.metrics(src)
        if claim.name in exported or any(claim.name == metric + suffix for metric in exported
                                         for suffix in METRIC_SUFFIXES):
            return None
        return f"vLLM {vllm.pinned_version()} exports no metric {claim.name}"
    raise ValueError(f"unknown claim kind {claim.kind!r}")


def course_model_config() -> dict:
    presets = json.loads((ROOT / PRESETS).read_text("utf-8"))["models"]
    return next(model["config"] for model in presets if model["name"] == COURSE_MODEL)


def runner_problem(src: Path, relative: str, config: dict | None = None) -> str | None:
    """None unless `relative` is a file of the GPU model runner that vLLM does not give the
    course's model (or the model of `config`)."""
    runner = vllm.model_runner(src, config or course_model_config())
    other = "V1" if runner == "V2" else "V2"
    if relative not in vllm.runner_files(src)[other]:
        return None
    return (f"{COURSE_MODEL if config is None else 'this model'} runs vLLM {vllm.pinned_version()}'s"
            f" {runner} model runner (vllm/config/vllm.py: VllmConfig.use_v2_model_runner), but"
            f" {relative} is the {other} runner's: cite the file that runs")


def _python_range(specifier: str) -> tuple[str, str]:
    """`<3.15,>=3.10` -> ("3.10", "3.14"): the first and the last supported minor version."""
    low = re.search(r">=\s*3\.(\d+)", specifier)
    below = re.search(r"<\s*3\.(\d+)", specifier)
    if not (low and below):
        raise ValueError(f"no rule here reads Requires-Python {specifier!r}")
    return f"3.{low[1]}", f"3.{int(below[1]) - 1}"


def _specific(log_format: str) -> bool:
    """Whether a format says something after its first value (`Using %s backend.`), so that
    matching it means something (`Using %s` or `%s %s` would match any line)."""
    literals = re.split(r"%[-+ #0]*\d*(?:\.\d+)?[sdfgx]", log_format)
    return re.search(r"[A-Za-z]", "".join(literals[1:])) is not None


def _check_log_line(line: str, src: Path) -> str | None:
    """A line as vLLM prints it, or one of vLLM's format strings itself (`... %s ...`)."""
    # The words before the first value (a number, a %-placeholder, or a dotted or underscored
    # name such as AttentionBackendEnum.TRITON_ATTN); a format starts a string literal.
    words = []
    for word in line.split(" "):
        if re.search(r"[\d%]|\w[._]\w", word):
            break
        words.append(word)
    lead = " ".join(words)
    files = vllm.files_containing(src, '"' + lead)
    # A message written as several string literals: look for its first words only.
    while not files and len(words) > 3:
        words.pop()
        files = vllm.files_containing(src, '"' + " ".join(words))
    if any(fmt == line or (_specific(fmt) and vllm.format_regex(fmt).match(line))
           for path in files for fmt in vllm.log_formats(path)):
        return None
    names = ", ".join(path.name for path in files[:8]) or "none"
    return f"no log format in vLLM's source prints this line (files with {lead!r}: {names})"


# -- the two tabs of a lab ---------------------------------------------------------------------

TAB = re.compile(r'^( *)=== "([^"]*)"')
# Options that LLM() and `vllm serve` resolve differently when they are not set, in vLLM 0.26.0.
# None: it depends on the machine, so both tabs must set it (EngineArgs.get_batch_defaults, by
# usage context and GPU memory: on a card under 70 GiB, LLM() 8192 and `vllm serve` 2048 tokens
# per step; 256 sequences each on a GPU, but 256 and 128 on a CPU). A pair: (LLM()'s, `vllm
# serve`'s) default, for an option that changes only what the engine logs and exports, which a
# tab may leave alone; one that sets it must match the other's value (LLM.__init__ sets
# disable_log_stats=True unless given; EngineArgs says False).
CONTEXT_DEFAULTS = {
    "max_num_batched_tokens": None,
    "max_num_seqs": None,
    "disable_log_stats": (True, False),
}


@dataclass(frozen=True)
class Tab:
    title: str
    line: int  # 1-based line of `=== "title"` in the page
    includes: tuple[str, ...]  # the snippets its content includes


def tab_groups(source: str) -> list[list[Tab]]:
    """The content tabs of a page (pymdownx.tabbed), grouped as they render: consecutive
    `=== "title"` lines at one indent, each with the lines indented below it."""
    lines = source.splitlines()
    groups, current, number = [], [], 0
    while number < len(lines):
        match = TAB.match(lines[number])
        if not match:
            if lines[number].strip():
                current = []  # anything else at this level ends a group
            number += 1
            continue
        indent, start = len(match[1]), number
        number += 1
        while number < len(lines) and (not lines[number].strip() or
                                       len(lines[number]) - len(lines[number].lstrip()) > indent):
            number += 1
        body = "\n".join(lines[start + 1:number])
        tab = Tab(match[2], start + 1, tuple(m["path"] for m in INCLUDE.finditer(body)))
        if not current:
            groups.append(current)
        current.append(tab)
    return [group for group in groups if len(group) > 1]


def _value(node: ast.expr, tree: ast.Module, root: Path):
    """A keyword's value: a literal, or a name assigned a literal in this file or in the course
    module it is imported from (read, never run)."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    if isinstance(node, ast.Name):
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and any(
                    getattr(target, "id", None) == node.id for target in statement.targets):
                return _value(statement.value, tree, root)
            if isinstance(statement, ast.ImportFrom) and any(
                    (alias.asname or alias.name) == node.id for alias in statement.names):
                name = next(alias.name for alias in statement.names
                            if (alias.asname or alias.name) == node.id)
                files = module_files(root).get(statement.module or "")
                if files:
                    module = ast.parse(files[0].read_text("utf-8"))
                    return _value(ast.Name(name), module, root)
    raise ValueError(f"cannot read the value {ast.unparse(node)} without running the code")


def llm_options(path: Path, root: Path) -> dict[str, object] | None:
    """The options of the LLM(...) call of a Python file, `model` included; None without one."""
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "LLM"
                                           or getattr(node.func, "attr", None) == "LLM"):
            options = {keyword.arg: _value(keyword.value, tree, root)
                       for keyword in node.keywords if keyword.arg}
            if node.args:
                options["model"] = _value(node.args[0], tree, root)
            return options
    return None


def serve_options(path: Path) -> dict[str, object] | None:
    """The options of the `vllm serve MODEL --flags...` command of a script, `model` included
    (`--x-y V` is x_y, a flag alone True, `--no-x-y` False); None without one."""
    words = shlex.split(path.read_text("utf-8").replace("\\\n", " "), comments=True)
    for start in range(len(words) - 1):
        if words[start:start + 2] == ["vllm", "serve"]:
            break
    else:
        return None
    options, rest = {}, words[start + 2:]
    index = 0
    while index < len(rest):
        word = rest[index]
        if not word.startswith("--"):
            if "model" in options:
                break  # the command's end (a pipe, a next command)
            options["model"], index = word, index + 1
            continue
        name, _, value = word[2:].partition("=")
        if not value and index + 1 < len(rest) and not rest[index + 1].startswith("-"):
            value, index = rest[index + 1], index + 1
        index += 1
        if name.startswith("no-") and not value:
            options[name[3:].replace("-", "_")] = False
        else:
            options[name.replace("-", "_")] = _cli_value(value) if value else True
    return options


def _cli_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return str(a) == str(b)


def tab_problems(root: Path) -> list[str]:
    """For every tab group that shows a lab twice, as a Python LLM(...) and as `vllm serve`:
    the options the two set differently, set in one tab only, or left to defaults that differ
    between LLM() and `vllm serve`."""
    problems = []
    for page in pages(root):
        for group in tab_groups(page.source):
            python, serve = [], []
            for tab in group:
                for include in tab.includes:
                    path = snippet_file(root, include)
                    if path.suffix == ".py" and (options := llm_options(path, root)) is not None:
                        python.append((include, options))
                    elif path.suffix == ".sh" and (options := serve_options(path)) is not None:
                        serve.append((include, options))
            for (py_file, py), (sh_file, sh) in zip(python, serve):
                where = f"docs/{page.relative}:{group[0].line}: {py_file} and {sh_file}"
                problems += [f"{where}: {problem}" for problem in _differences(py, sh)]
    return problems


def _differences(python: dict, serve: dict) -> list[str]:
    found = []
    for name in sorted(set(python) | set(serve) | set(CONTEXT_DEFAULTS)):
        in_python, in_serve = name in python, name in serve
        if in_python and in_serve:
            if not _same(python[name], serve[name]):
                found.append(f"{name} is {python[name]!r} in LLM(...) but {serve[name]!r} in"
                             " `vllm serve`")
            continue
        defaults = CONTEXT_DEFAULTS.get(name, "same")
        side = "LLM(...)" if in_python else "`vllm serve`"
        if defaults is None:
            only = f"only {side} sets {name}, and " if in_python or in_serve else ""
            found.append(f"{only}LLM() and `vllm serve` default {name} differently (by the"
                         " machine): set it in both tabs")
        elif defaults != "same":
            if not (in_python or in_serve):
                continue
            python_value = python.get(name, defaults[0])
            serve_value = serve.get(name, defaults[1])
            if not _same(python_value, serve_value):
                found.append(f"{name} is {python_value!r} for LLM(...) but {serve_value!r} for"
                             " `vllm serve` (its default there): set it in both tabs")
        else:
            found.append(f"only {side} sets {name}: set it in both tabs, or in neither")
    return found
