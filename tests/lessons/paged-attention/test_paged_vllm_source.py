"""What the PagedAttention lesson says of vLLM holds in the pinned release's source: every rule
it cites as `vllm/<path>: <name>` names a function, class or attribute that exists in that
file, every `vllm:` metric it quotes is one vLLM exports, and the simulator's default block
size is vLLM's."""

import ast
import re

import pytest
from block_pool import BLOCK_SIZE

from coursekit import ROOT, vllm_source

LESSON = ROOT / "snippets/paged-attention"
PAGES = sorted((ROOT / "docs/lessons").glob("paged-attention.*.md"))
# A citation: the file, then (maybe after a line break inside a comment or docstring) the
# dotted name of what the rule mirrors.
CITATION = re.compile(r"(vllm/[\w/]+\.py):\s*(?:#\s*)?([A-Za-z_]\w*(?:\.\w+)*)")
METRIC = re.compile(r"\bvllm:[a-z_]+\b")


def lesson_texts():
    files = [p for p in LESSON.rglob("*") if p.is_file() and p.suffix in (".py", ".js", ".sh")]
    return {path.relative_to(ROOT).as_posix(): path.read_text("utf-8")
            for path in sorted(files) + PAGES}


def citations():
    found = set()
    for where, text in lesson_texts().items():
        found |= {(where, path, name) for path, name in CITATION.findall(text)
                  if path != "vllm/<path>.py"}
    return sorted(found)


def defines(tree: ast.AST, name: str) -> ast.AST | None:
    """The function, class or assigned name `name` directly in a module or class body."""
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return node
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(getattr(target, "id", None) == name for target in targets):
            return node
    return None


def test_the_lesson_cites_vllm_where_it_mirrors_it():
    cited = {(path, name) for _, path, name in citations()}
    assert {
        ("vllm/v1/core/block_pool.py", "BlockPool.__init__"),
        ("vllm/v1/core/block_pool.py", "BlockPool.free_blocks"),
        ("vllm/v1/core/block_pool.py", "BlockPool.get_new_blocks"),
        ("vllm/v1/core/block_pool.py", "BlockPool.get_usage"),
        ("vllm/v1/core/kv_cache_utils.py", "get_num_blocks"),
        ("vllm/v1/kv_cache_interface.py", "AttentionSpec.real_page_size_bytes"),
        ("vllm/v1/worker/block_table.py", "_compute_slot_mapping_kernel"),
        ("vllm/v1/core/single_type_kv_cache_manager.py", "SingleTypeKVCacheManager.free"),
    } <= cited


@pytest.mark.parametrize(("where", "path", "name"), citations(),
                         ids=lambda value: str(value))
def test_each_citation_names_what_the_release_has(vllm_src, where, path, name):
    source = vllm_src / path
    assert source.is_file(), f"{where}: vLLM {vllm_source.pinned_version()} has no {path}"
    node = ast.parse(source.read_text("utf-8"))
    for part in name.split("."):
        node = defines(node, part)
        assert node is not None, f"{where}: {path} defines no {name}"


def test_quoted_metrics_are_ones_vllm_exports(vllm_src):
    quoted = {m for text in lesson_texts().values() for m in METRIC.findall(text)}
    assert {"vllm:kv_cache_usage_perc", "vllm:cache_config_info"} <= quoted
    exported = set(re.findall(r'name="(vllm:[a-z_]+)"', vllm_source._texts(vllm_src)[
        vllm_src / "vllm/v1/metrics/loggers.py"]))
    exported |= set(re.findall(r'"(vllm:[a-z_]+_info)"', (
        vllm_src / "vllm/v1/metrics/loggers.py").read_text("utf-8")))
    assert quoted <= exported, f"not exported by vLLM: {sorted(quoted - exported)}"


def test_the_default_block_size_is_vllms(vllm_src):
    assert vllm_source.default(vllm_src, "block_size") == BLOCK_SIZE


def test_a_wrong_citation_is_caught(vllm_src):
    with pytest.raises(AssertionError, match="defines no BlockPool.free_all"):
        test_each_citation_names_what_the_release_has(
            vllm_src, "x", "vllm/v1/core/block_pool.py", "BlockPool.free_all")
