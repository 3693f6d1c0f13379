"""The lab's capacity prediction and its reader of vLLM's start-up log, offline.

The log lines are built from vLLM 0.26.0's own format strings, read from the release wheel.
"""

import shutil
import subprocess
import sys

import pytest
from kv_cache_size import GIB
from kv_capacity import (
    QWEN_FP8,
    predict,
    predict_from_log,
    read_startup_log,
    reported_tokens,
)

from coursekit import ROOT, vllm_source


def vllm_line(src, lead: str, *args) -> str:
    """A line as vLLM 0.26.0 logs it: its prefix, then its own format string filled in."""
    formats = [fmt for path in vllm_source.files_containing(src, lead)
               for fmt in vllm_source.log_formats(path) if fmt.startswith(lead)]
    assert len(formats) == 1, f"vLLM has {len(formats)} log formats starting {lead!r}"
    return f"INFO 11-29 08:00:00 [vllm.py:1] {formats[0] % args}"


@pytest.fixture
def startup_log(vllm_src):
    def build(available_bytes, tokens, max_model_len, concurrency):
        lines = ["INFO 11-29 07:59:58 [core.py:90] Initializing a V1 LLM engine"]
        if available_bytes is not None:
            # vLLM formats GiB with format_gib: str(round(bytes / GiB, 2)).
            lines.append(vllm_line(vllm_src, "Available KV cache memory:",
                                   str(round(available_bytes / GIB, 2))))
        lines.append(vllm_line(vllm_src, "GPU KV cache size:", f"{tokens:,}"))
        lines.append(vllm_line(vllm_src, "Maximum concurrency for", f"{max_model_len:,}",
                               concurrency))
        return "\n".join(lines)
    return build


def test_reads_what_vllm_prints(startup_log):
    log = read_startup_log(startup_log(int(13.86 * GIB), 519_040, 8192, 63.359375))
    assert (log.available_gib, log.tokens, log.max_model_len, log.max_concurrency,
            log.block_size) == (13.86, 519_040, 8192, 63.36, 16)


def test_reads_a_log_without_available_memory(startup_log):
    log = read_startup_log(startup_log(None, 32_768, 8192, 4.0))
    assert log.available_gib is None and log.tokens == 32_768
    with pytest.raises(ValueError, match="no line like 'Available KV cache memory: X GiB'"):
        predict_from_log(QWEN_FP8, log)


def test_reads_the_block_size_vllm_chose(startup_log):
    text = startup_log(None, 32_768, 8192, 4.0)
    text += ("\nINFO 11-29 08:00:01 [interface.py:635] Setting kv cache block size to 32"
             " for X backend.")
    assert read_startup_log(text).block_size == 32


@pytest.mark.parametrize(("missing", "named"), [
    ("GPU KV cache size", "GPU KV cache size: N tokens"),
    ("Maximum concurrency", "Maximum concurrency for N tokens per request: X.XXx"),
])
def test_missing_line_is_named(startup_log, missing, named):
    text = "\n".join(line for line in startup_log(GIB, 2048, 8192, 4.0).splitlines()
                     if missing not in line)
    with pytest.raises(ValueError, match=f"no line like '{named}'"):
        read_startup_log(text)


def test_prediction_follows_vllm_arithmetic():
    # vLLM 0.26.0: num_blocks = memory // page_size // num_layers, with a per-layer page of
    # block_size * num_kv_heads * 2 * head_size * dtype_bytes; tokens = int(blocks / 512 * 8192).
    memory = 4 * GIB
    page = 16 * 4 * 2 * 128 * 1
    blocks = memory // page // 28
    capacity = predict(QWEN_FP8, memory, 8192)
    assert capacity.num_blocks == blocks == 9362
    assert capacity.tokens == int(blocks / 512 * 8192) == 149_792
    assert f"{capacity.max_concurrency:.2f}" == "18.29"


def test_rounded_memory_gives_a_range(startup_log):
    low, high = predict_from_log(QWEN_FP8, read_startup_log(
        startup_log(int(13.86 * GIB), 519_040, 8192, 63.359375)))
    assert low.tokens < 519_040 < high.tokens
    assert high.num_blocks - low.num_blocks in (23, 24)  # 0.01 GiB / 448 KiB = 23.4 blocks


@pytest.mark.parametrize(("max_model_len", "block_size"), [(8000, 16), (8192, 32), (1, 16)])
def test_prediction_when_length_is_not_a_multiple_of_the_block(max_model_len, block_size):
    memory = 4 * GIB
    blocks = memory // (block_size * 28672)
    per_sequence = -(-max_model_len // block_size)  # vLLM's cdiv
    capacity = predict(QWEN_FP8, memory, max_model_len, block_size)
    assert capacity.num_blocks == blocks
    assert capacity.tokens == int(blocks / per_sequence * max_model_len)
    assert capacity.tokens <= blocks * block_size


def test_a_log_the_calculator_disagrees_with_fails_the_snippet(tmp_path):
    shutil.copytree(ROOT / "snippets/kv-cache", tmp_path, dirs_exist_ok=True)
    log = tmp_path / "vllm_startup.log"
    log.write_text(log.read_text().replace("519,040", "600,000"))
    run = subprocess.run([sys.executable, "kv_capacity.py"], cwd=tmp_path, capture_output=True,
                         text=True)
    assert run.returncode != 0 and "MISMATCH" in run.stderr


@pytest.mark.parametrize(("num_blocks", "max_model_len", "tokens"), [
    (32440, 8192, 519_040),  # blocks x 16, exactly
    (32001, 8000, 512_015),  # one token fewer than blocks x 16: floating point
    (32440, 8190, 518_913),  # the last block of each sequence only partly used
])
def test_reported_tokens_as_vllm_computes_them(num_blocks, max_model_len, tokens):
    # vllm/v1/core/kv_cache_utils.py: get_kv_cache_capacity, int(concurrency * length).
    assert reported_tokens(num_blocks, max_model_len) == (
        tokens, num_blocks / -(-max_model_len // 16))


def test_every_lesson_takes_the_cards_total_from_lesson_1():
    """One figure for an RTX 4090: what CUDA reports (kv_capacity.GPU_GIB), not the 24 GiB
    on the box; no lesson's code writes a card size of its own."""
    import re

    from kv_capacity import GPU_GIB

    from coursekit import ROOT

    assert 23 < GPU_GIB < 24
    own = re.compile(r"\b24 \* GIB\b|^\s*GPU_GIB\b.*=|gpu_gib=24\b", re.M)
    found = [path.relative_to(ROOT).as_posix() for path in (ROOT / "snippets").rglob("*.py")
             if own.search(path.read_text("utf-8")) and path.name != "kv_capacity.py"]
    assert found == []
