"""Every vLLM name the course quotes exists, with that value, in the pinned vLLM release; each
kind of claim fails on a broken copy of the fixture course."""

import pytest

from coursekit import ROOT
from coursekit.vllm_claims import Claim, check, claims

CLAIMS = claims(ROOT)


@pytest.mark.parametrize("claim", CLAIMS, ids=str)
def test_vllm_agrees(claim, vllm_src):
    assert check(claim, vllm_src) is None, f"{claim}: {check(claim, vllm_src)}"


def test_the_kv_cache_lesson_quotes_what_its_lab_needs():
    quoted = {(claim.kind, claim.name) for claim in CLAIMS if "kv-cache" in claim.where}
    assert {("keyword", "LLM.kv_cache_dtype"), ("flag", "--kv-cache-dtype"),
            ("env", "VLLM_USE_MODELSCOPE"), ("default", "gpu_memory_utilization"),
            ("default", "block_size"), ("choice", "kv_cache_dtype")} <= quoted
    assert sum(claim.kind == "log" and "kv-cache" in claim.where for claim in CLAIMS) >= 3


BREAKAGES = {
    "misspelled flag": (
        "snippets/first/serve.sh", "--kv-cache-dtype fp8", "--kv-cache-dtyp fp8",
        "flag --kv-cache-dtyp", "`vllm serve` has no flag --kv-cache-dtyp"),
    "wrong default": (
        "docs/lessons/first.zh.md", "| `0.92` |", "| `0.9` |",
        "default gpu_memory_utilization = 0.9", "the default of gpu_memory_utilization is 0.92"),
    "unaccepted value": (
        "docs/lessons/first.en.md", "`auto`, `fp8` |", "`auto`, `fp7` |",
        "choice kv_cache_dtype = fp7", "kv_cache_dtype accepts"),
    "unknown keyword": (
        "snippets/second/second_lab.py", "max_model_len=2048", "max_seq_len=2048",
        "keyword LLM.max_seq_len", "vllm.LLM takes no keyword 'max_seq_len'"),
    "invented log line": (
        "snippets/first/startup.log", "GPU KV cache size:", "GPU KV cache blocks:",
        "log GPU KV cache blocks", "no log format in vLLM's source prints this line"),
    "other version": (
        "snippets/first/install.sh", "vllm==0.26.0", "vllm==0.25.1",
        "version vllm = 0.25.1", "the course pins vllm==0.26.0"),
}


def test_fixture_course_claims_hold(pristine_fixture, vllm_src):
    assert [str(c) for c in claims(pristine_fixture) if check(c, vllm_src)] == []


@pytest.mark.parametrize("breakage", BREAKAGES.values(), ids=BREAKAGES.keys())
def test_claims_fail_on_broken_copy(breakage, course, vllm_src, edit):
    file, old, new, claim_text, expected = breakage
    edit(course / file, old, new)
    failures = [f"{claim}: {check(claim, vllm_src)}" for claim in claims(course)
                if check(claim, vllm_src) is not None]
    assert len(failures) == 1 and claim_text in failures[0] and expected in failures[0], failures


def test_claim_names_page_claim_and_source(vllm_src):
    claim = Claim("docs/x.zh.md:3", "flag", "--kv-cache-dtpe")
    assert check(claim, vllm_src).startswith(
        "`vllm serve` has no flag --kv-cache-dtpe; similar flags: --kv-cache-dtype,")
