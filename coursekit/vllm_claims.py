"""Every vLLM name a page or an included snippet quotes, as a claim to check against vLLM's source.

Claims are found, not listed: LLM(...) and SamplingParams(...) keywords and `# default X`
comments in Python snippets, flags of `vllm serve` commands and `--flag` code spans, VLLM_*
environment variables, lines of `.log` snippets, rows of option tables
(| `keyword` | `--flag` | `default` | ... |) and every "vLLM x.y.z" / "vllm==x.y.z".
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from coursekit import vllm_source as vllm
from coursekit.pages import fence_lines, pages, snippet_file

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
ENV = re.compile(r"\bVLLM_[A-Z0-9_]+\b")
VERSION = re.compile(r"\b(?:vLLM |vllm==)(\d+\.\d+\.\d+)\b")
CODE_SPAN = re.compile(r"`([^`]+)`")
TABLE_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*`(--[\w-]+)`\s*\|\s*`([^`]*)`\s*\|(.*)\|\s*$")
DEFAULT_COMMENT = re.compile(r"#.*\bdefault ([\w.]+)")


@dataclass(frozen=True)
class Claim:
    where: str  # file:line, and the pages that show it
    kind: str  # keyword, flag, env, default, choice, log, version
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
    elif path.suffix == ".sh" and "vllm serve" in text:
        found += [Claim(where.format(number), "flag", flag)
                  for number, line in enumerate(lines, 1) for flag in FLAG.findall(line)]
    elif path.suffix == ".log":
        found += [Claim(where.format(number), "log", line.strip())
                  for number, line in enumerate(lines, 1) if line.strip()]
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
        if claim.name in vllm.serve_flags(src):
            return None
        near = sorted(f for f in vllm.serve_flags(src) if f[2:6] == claim.name[2:6])
        return f"`vllm serve` has no flag {claim.name}; similar flags: {', '.join(near) or 'none'}"
    if claim.kind == "env":
        return None if claim.name in vllm.env_vars(src) else \
            f"vllm/envs.py defines no {claim.name}"
    if claim.kind == "default":
        try:
            actual = vllm.default(src, claim.name)
        except KeyError:
            return f"no rule here reads the default of {claim.name}: add one to coursekit/vllm_source.py"
        return None if claim.value == str(actual) else f"the default of {claim.name} is {actual!r}"
    if claim.kind == "choice":
        accepted = vllm.choices(src, claim.name)
        if claim.value in accepted:
            return None
        return f"{claim.name} accepts {', '.join(accepted)}; not {claim.value!r}"
    if claim.kind == "log":
        return _check_log_line(claim.name, src)
    raise ValueError(f"unknown claim kind {claim.kind!r}")


def _check_log_line(line: str, src: Path) -> str | None:
    lead = re.split(r"[\d,.]+", line, maxsplit=1)[0]
    files = vllm.files_containing(src, lead)
    if any(vllm.format_regex(fmt).match(line) for path in files for fmt in vllm.log_formats(path)):
        return None
    names = ", ".join(path.name for path in files) or "none"
    return f"no log format in vLLM's source prints this line (files mentioning {lead!r}: {names})"
