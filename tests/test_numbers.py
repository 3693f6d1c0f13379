"""How the numbers guard (coursekit/numbers.py) reads the numbers of a line of prose; the guard
itself is shown failing on the fixture course in tests/test_guards.py."""

import pytest

from coursekit.numbers import numbers_in


def read(text: str, language: str = "en") -> list[tuple[str, str]]:
    return [(number.key, number.kind) for number in numbers_in(text, "x.md:1", language)]


@pytest.mark.parametrize(("zh", "en"), [
    ("按它的 32 768 token", "at its 32,768 tokens"),
    ("每个 token ５６ KiB", "56KiB per token"),
    ("76.1 亿个参数", "7.61 billion parameters"),
    ("在 2027 年 5 月之前", "before May 2027"),
    ("（vLLM 论文，2023）", "(the vLLM paper, 2023)"),
])
def test_both_languages_read_the_same(zh, en):
    assert read(zh, "zh") == read(en) != []


@pytest.mark.parametrize(("text", "expected"), [
    ("Qwen2.5-7B-Instruct on an H100", [("2.5", "name"), ("7", "name"), ("100", "name")]),
    ("vLLM 0.26.0 and MkDocs 1.6 on an RTX 4090", [
        ("0.26.0", "name"), ("1.6", "name"), ("4090", "name")]),
    ("`seq_len=2048` takes [ADR-0004](adr/0004-x.md)", [("0004", "name")]),
    ("## 3 · Principles", []),
    ("2. Note the full SHA", []),
    ("$2 \\times 28 = 56$ KiB", [("2", "quantity"), ("28", "quantity"), ("56", "quantity")]),
    ("modelscope (1.18 or newer)", [("1.18", "name")]),
    ("RTX 4090（SM 8.9）；CUDA 13 要求", [("4090", "name"), ("8.9", "name"), ("13", "name")]),
])
def test_names_versions_and_structure(text, expected):
    assert read(text) == expected


def test_an_estimate_is_marked_in_its_own_sentence():
    marked = numbers_in("About ¥1 (estimate). Then 2 more.", "x.md:1", "en")
    assert [(n.key, n.estimate) for n in marked] == [("1", True), ("2", False)]
    marked = numbers_in("约 ¥1（估计）。再加 2 个。", "x.md:1", "zh")
    assert [(n.key, n.estimate) for n in marked] == [("1", True), ("2", False)]
