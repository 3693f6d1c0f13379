"""Every vLLM name the course quotes exists, with that value, in the pinned vLLM release."""

import pytest

from conftest import edit_file
from pages import ROOT
from vllm_claims import Claim, check, claims

CLAIMS = claims(ROOT)


@pytest.mark.parametrize("claim", CLAIMS, ids=str)
def test_vllm_agrees(claim, vllm_src):
    assert check(claim, vllm_src) is None, f"{claim}: {check(claim, vllm_src)}"


def test_the_lesson_quotes_what_the_lab_needs():
    quoted = {(claim.kind, claim.name) for claim in CLAIMS}
    assert {("keyword", "LLM.kv_cache_dtype"), ("flag", "--kv-cache-dtype"),
            ("env", "VLLM_USE_MODELSCOPE"), ("default", "gpu_memory_utilization"),
            ("default", "block_size"), ("choice", "kv_cache_dtype")} <= quoted
    assert sum(claim.kind == "log" for claim in CLAIMS) >= 3


BREAKAGES = {
    "misspelled flag": (
        "snippets/kv-cache/serve_kv.sh", "--kv-cache-dtype fp8", "--kv-cache-dtyp fp8",
        "flag --kv-cache-dtyp", "`vllm serve` has no flag --kv-cache-dtyp"),
    "wrong default": (
        "docs/lessons/kv-cache.zh.md", "| `0.92` |", "| `0.9` |",
        "default gpu_memory_utilization = 0.9", "the default of gpu_memory_utilization is 0.92"),
    "unknown keyword": (
        "snippets/kv-cache/serve_kv.py", "max_model_len=8192", "max_seq_len=8192",
        "keyword LLM.max_seq_len", "vllm.LLM takes no keyword 'max_seq_len'"),
    "invented log line": (
        "snippets/kv-cache/vllm_startup.log", "GPU KV cache size:", "GPU KV cache blocks:",
        "log GPU KV cache blocks", "no log format in vLLM's source prints this line"),
    "other version": (
        "snippets/kv-cache/install.sh", "vllm==0.26.0", "vllm==0.25.1",
        "version vllm = 0.25.1", "the course pins vllm==0.26.0"),
}


@pytest.mark.parametrize("breakage", BREAKAGES.values(), ids=BREAKAGES.keys())
def test_claims_fail_on_broken_copy(breakage, repo_copy, vllm_src):
    file, old, new, claim_text, expected = breakage
    edit_file(repo_copy / file, old, new)
    failures = [f"{claim}: {check(claim, vllm_src)}" for claim in claims(repo_copy)
                if check(claim, vllm_src) is not None]
    assert len(failures) == 1 and claim_text in failures[0] and expected in failures[0], failures


def test_claim_names_page_claim_and_source(vllm_src):
    claim = Claim("docs/x.zh.md:3", "flag", "--kv-cache-dtpe")
    assert check(claim, vllm_src).startswith(
        "`vllm serve` has no flag --kv-cache-dtpe; similar flags: --kv-cache-dtype,")
