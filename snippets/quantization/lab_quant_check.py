"""The lab's predictions, and a saved run checked against them.

Run: python lab_quant_check.py                      (the predictions)
     python lab_quant_check.py FORMAT LOG [SPEED]   (FORMAT: bf16, fp8, awq or gptq;
       LOG: what the lab printed, vLLM's log included; SPEED: lab_speed_send.py's output
       when LOG is a server's)
     python lab_quant_check.py versus BF16_LOG INT4_LOG   (lab_awq.py's speeds against
       lab_bf16.py's, measured and predicted)

The four labs time decoding with decode_speed below: one request generates 1 token,
then 1 + DECODE_TOKENS tokens; the second takes DECODE_TOKENS more decode steps than the
first, and everything else (prefill, scheduling, start of the request) cancels out.
batch_speed does the same with BATCH requests at once, which decode together. Then
quality below measures the perplexity of the model on a fixed text, from vLLM's prompt
logprobs, twice.

For each format: vLLM's "Model loading took X GiB" against load_memory's parts (the
weights, the allocator's rounding, RoPE's table, small buffers),
the dtype the engine computes in, the kernel line vLLM logs on an RTX 4090, the KV
capacity against lesson 1's calculator for the logged KV memory, and the decode speed
at concurrency 1 and BATCH against section 3's floors (quant_memory.decode_floor_ms
for the reads, decode_floor.compute_floor_ms for the math: 16-bit, or FP8 for fp8's
linear layers), a ceiling no run can pass.
"""

import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from decode_floor import compute_floor_ms
from hf_config import bytes_per_token, read_presets
from kv_capacity import blocks_per_sequence, predict_from_log, read_startup_log
from load_memory import ROUNDING_GIB, loading_figures, logged_as_counted
from quant_memory import decode_floor_ms, kv_left

PRESET = "Qwen2.5-7B-Instruct"
# PROMPT's tokens, at most: a step reads the KV of the prompt and output
PROMPT_TOKENS = 16


PROMPT = "Why is LLM decode memory-bound?"
DECODE_TOKENS = 128  # decode steps timed
BATCH = 256  # requests decoding together in batch_speed: the labs' max_num_seqs
# The fixed text of the perplexity: Jane Austen, Pride and Prejudice (1813), in the
# public domain. Use a text of your own task: a famous one may be partly remembered.
QUALITY_TEXT = (
    "It is a truth universally acknowledged, that a single man in possession of a good"
    " fortune, must be in want of a wife. However little known the feelings or views of"
    " such a man may be on his first entering a neighbourhood, this truth is so well"
    " fixed in the minds of the surrounding families, that he is considered the"
    ' rightful property of some one or other of their daughters. "My dear Mr. Bennet,"'
    " said his"
    ' lady to him one day, "have you heard that Netherfield Park is let at last?" Mr.'
    ' Bennet replied that he had not. "But it is," returned she; "for Mrs. Long has'
    ' just been here, and she told me all about it." Mr. Bennet made no answer.'
)


def timed(llm, max_tokens, requests=1):
    """Seconds `requests` copies of PROMPT, sent at once, take to generate max_tokens
    tokens each, and their outputs."""
    from vllm import (
        SamplingParams,  # here: the GPU checks import this file, not vLLM
    )

    # ignore_eos: exactly max_tokens tokens; temperature 0: the same text every run
    params = SamplingParams(max_tokens=max_tokens, temperature=0, ignore_eos=True)
    start = time.perf_counter()
    outputs = llm.generate([PROMPT] * requests, params, use_tqdm=False)
    return time.perf_counter() - start, [output.outputs[0] for output in outputs]


def decode_speed(llm):
    """Print the decode speed of one sequence, and what it generated."""
    timed(llm, 8)  # warm-up: the first request pays for one-time work
    first, _ = timed(llm, 1)
    total, [output] = timed(llm, 1 + DECODE_TOKENS)
    assert len(output.token_ids) == 1 + DECODE_TOKENS, len(output.token_ids)
    rate = DECODE_TOKENS / (total - first)
    print(
        f"decode at concurrency 1: {rate:.1f} tokens/s"
        f" ({DECODE_TOKENS} steps in {total - first:.3f} s)"
    )
    print(f"text: {output.text[:300]!r}")


def batch_speed(llm):
    """Print the decode throughput of BATCH sequences decoding together: the same two
    timings as decode_speed, each with BATCH requests at once."""
    timed(llm, 8, BATCH)  # warm-up
    first, _ = timed(llm, 1, BATCH)
    total, outputs = timed(llm, 1 + DECODE_TOKENS, BATCH)
    generated = {len(output.token_ids) for output in outputs}
    assert len(outputs) == BATCH and generated == {1 + DECODE_TOKENS}, generated
    rate = BATCH * DECODE_TOKENS / (total - first)
    print(
        f"decode at concurrency {BATCH}: {rate:.1f} tokens/s"
        f" ({DECODE_TOKENS} steps of {BATCH} sequences in {total - first:.3f} s)"
    )


def quality(llm):
    """Print the perplexity of the model on QUALITY_TEXT, twice: exp of minus the mean
    log-probability the model gives each token of the text after the first, as vLLM
    returns them with prompt_logprobs=0 (the token's own, no others)."""
    from vllm import SamplingParams

    params = SamplingParams(max_tokens=1, temperature=0, prompt_logprobs=0)
    for attempt in ("first", "again"):
        output = llm.generate([QUALITY_TEXT], params, use_tqdm=False)[0]
        # The first token has no logprob (None); then a token id -> Logprob per token.
        tokens = output.prompt_token_ids[1:]
        logprobs = [lp[t].logprob for t, lp in zip(tokens, output.prompt_logprobs[1:])]
        perplexity = math.exp(-sum(logprobs) / len(logprobs))
        print(
            f"perplexity ({attempt}): {perplexity:.4f} over {len(logprobs)} tokens,"
            f" {output.num_cached_tokens} of the prompt's tokens read from the cache"
        )


@dataclass(frozen=True)
class Variant:
    script: str
    fmt: str  # quant_memory's name for the weights' format
    kernel_line: str | None  # what vLLM 0.26.0 logs when it picks the linear kernel
    # What the engine computes in with dtype="auto": the checkpoint's torch_dtype
    # (vllm/config/model.py: _get_and_verify_dtype, _resolve_auto_dtype). Qwen's AWQ and
    # GPTQ checkpoints declare float16, the original bfloat16.
    dtype: str


VARIANTS = {
    "bf16": Variant("lab_bf16.py", "bf16", None, "bfloat16"),
    # vllm/model_executor/kernels/linear/__init__.py: init_fp8_linear_kernel
    "fp8": Variant(
        "lab_fp8.py",
        "fp8",
        "Selected CutlassFP8ScaledMMLinearKernel for Fp8PerTensorOnlineLinearMethod",
        "bfloat16",
    ),
    # vllm/model_executor/layers/quantization/auto_awq.py:
    # AutoAWQMarlinLinearMethod.create_weights
    "awq": Variant(
        "lab_awq.py",
        "awq-int4-g128",
        "Using MarlinLinearKernel for AutoAWQMarlinLinearMethod",
        "float16",
    ),
    # vllm/model_executor/layers/quantization/auto_gptq.py:
    # AutoGPTQLinearMethod.create_weights
    "gptq": Variant(
        "lab_gptq.py",
        "gptq-int4-g128",
        "Using MarlinLinearKernel for AutoGPTQLinearMethod",
        "float16",
    ),
}

# vllm/v1/worker/gpu/model_runner.py: GPUModelRunner.load_model (the V2 model runner,
# which 0.26.0 uses for a dense model) logs
# "Model loading took %s GiB and %.6f seconds"; the V1 runner
# (vllm/v1/worker/gpu_model_runner.py) says "... GiB memory and ...".
LOADING = re.compile(
    r"Model loading took ([\d.]+) GiB(?: memory)? and ([\d.]+) seconds"
)
KERNEL = re.compile(
    r"(Using \w+ for \w+LinearMethod|Selected \w+ for \w+LinearMethod)(?=\s|$)"
)
SPEED = re.compile(r"decode at concurrency 1: ([\d.]+) tokens/s")
BATCH_SPEED = re.compile(rf"decode at concurrency {BATCH}: ([\d.]+) tokens/s")
QUALITY = re.compile(
    r"perplexity \((first|again)\): ([\d.]+) over (\d+) tokens, (\d+) of the prompt's"
)
# vllm/v1/engine/core.py logs "Initializing a V1 LLM engine (v%s) with config: %s", the
# config (vllm/config/vllm.py: VllmConfig.__str__) holding dtype=torch.<dtype>.
ENGINE_DTYPE = re.compile(r"Initializing a V1 LLM engine .*?\bdtype=torch\.(\w+)")


def read_loading_gib(text: str) -> float:
    match = LOADING.search(text)
    if match is None:
        raise ValueError(
            "vLLM's log has no line like 'Model loading took X GiB and Y seconds'"
        )
    return float(match[1])


def read_kernel_lines(text: str) -> list[str]:
    """The linear-kernel choices vLLM logged, each once, in order."""
    return list(dict.fromkeys(match[1] for match in KERNEL.finditer(text)))


def read_dtype(text: str) -> str:
    match = ENGINE_DTYPE.search(text)
    if match is None:
        raise ValueError(
            "vLLM's log has no engine config line with dtype=torch.<dtype>"
        )
    return match[1]


def read_quality(text: str) -> list[tuple[float, int, int]]:
    """quality()'s two lines: (perplexity, tokens, tokens read from the cache) each."""
    found = [(float(m[2]), int(m[3]), int(m[4])) for m in QUALITY.finditer(text)]
    if len(found) != 2:
        raise ValueError("no two lines like 'perplexity (first): X over N tokens, ...'")
    return found


def read_speed(text: str) -> float:
    match = SPEED.search(text)
    if match is None:
        raise ValueError("no line like 'decode at concurrency 1: X tokens/s'")
    return float(match[1])


def read_batch_speed(text: str) -> float:
    match = BATCH_SPEED.search(text)
    if match is None:
        raise ValueError(f"no line like 'decode at concurrency {BATCH}: X tokens/s'")
    return float(match[1])


def batch_blocks() -> tuple[int, int]:
    """The KV blocks BATCH sequences of the prompt and all their output hold, and the
    blocks bf16's weights leave (lesson 1's upper bound, the fewest of the four
    formats). The floors at concurrency BATCH hold only for a batch the KV cache can
    take."""
    per_sequence = blocks_per_sequence(PROMPT_TOKENS + 1 + DECODE_TOKENS)
    return BATCH * per_sequence, kv_left(PRESET, "bf16", 8192).num_blocks


def ceiling(fmt: str) -> float:
    """Tokens/s at concurrency 1 that no run can pass: one step per section 3's floor
    (quant_memory.decode_floor_ms: every weight read once but one row of the embedding
    table, and the KV of the prompt and all the output, at 1008 GB/s)."""
    return 1000 / decode_floor_ms(PRESET, fmt, 1, PROMPT_TOKENS + 1 + DECODE_TOKENS)


def batch_floors_ms(fmt: str) -> tuple[float, float]:
    """Section 3's two floors of a decode step of BATCH sequences, in ms: its reads
    (quant_memory.decode_floor_ms) and its math (decode_floor.compute_floor_ms): 16-bit
    for bf16 and for W4A16, whose kernel dequantizes, then multiplies in 16-bit; fp8's
    linear layers at the FP8 rate (W8A8 on SM 8.9), its lm_head in 16-bit."""
    reads = decode_floor_ms(PRESET, fmt, BATCH, PROMPT_TOKENS + 1 + DECODE_TOKENS)
    return reads, compute_floor_ms(BATCH, fmt)


def batch_ceiling(fmt: str) -> float:
    """Tokens/s at concurrency BATCH that no run can pass: BATCH tokens per step of the
    longer of the two floors."""
    return BATCH * 1000 / max(batch_floors_ms(fmt))


def compare(
    name: str, log_text: str, speed_text: str, quality: bool = True
) -> tuple[dict, list[str]]:
    """Rows for a report, and what does not match (the speed at concurrency BATCH and
    the perplexity too, with quality: the Python labs print them, the served twin does
    not)."""
    variant, rows, problems = VARIANTS[name], {}, []

    logged = read_loading_gib(log_text)
    predicted, older = loading_figures(PRESET, variant.fmt)
    rows["Model loading took"] = (
        f"{logged:.2f} GiB; predicted {predicted:.3f} GiB"
        f" ({older:.3f} without 0.26.0's split limit)"
    )
    if not logged_as_counted(logged, PRESET, variant.fmt):
        problems.append(
            f"{name}: vLLM loaded {logged} GiB, predicted {predicted:.3f}"
            f" ({older:.3f} without 0.26.0's split limit)"
        )

    dtype = read_dtype(log_text)
    rows["computes in"] = f"{dtype}; the page says {variant.dtype}"
    if dtype != variant.dtype:
        problems.append(
            f"{name}: vLLM computes in {dtype}, the page says {variant.dtype}"
        )

    kernels = read_kernel_lines(log_text)
    expected = [variant.kernel_line] if variant.kernel_line else []
    rows["linear kernel lines"] = "; ".join(kernels) or "(none: unquantized)"
    if kernels != expected:
        problems.append(
            f"{name}: vLLM logged the kernel lines {kernels}, the page says {expected}"
        )

    log = read_startup_log(log_text)
    low_kv, high_kv = predict_from_log(read_presets()[PRESET].model, log)
    rows["KV cache"] = (
        f"{log.available_gib} GiB: {log.tokens:,} tokens; lesson 1 predicts"
        f" {low_kv.tokens:,} to {high_kv.tokens:,}"
    )
    if not low_kv.tokens <= log.tokens <= high_kv.tokens:
        problems.append(
            f"{name}: vLLM reports {log.tokens:,} tokens of KV cache, lesson 1's"
            f" calculator {low_kv.tokens:,} to {high_kv.tokens:,}"
            f" for {log.available_gib} GiB"
        )

    speed = read_speed(speed_text)
    most = ceiling(variant.fmt)
    rows["decode at concurrency 1"] = (
        f"{speed:.1f} tokens/s = {speed / most:.0%} of the ceiling,"
        f" {most:.0f} tokens/s (section 3's floor)"
    )
    if not 0 < speed <= most:
        problems.append(
            f"{name}: {speed} tokens/s, above the bandwidth ceiling {most:.0f}"
        )

    if quality:
        speed = read_batch_speed(speed_text)
        most = batch_ceiling(variant.fmt)
        rows[f"decode at concurrency {BATCH}"] = (
            f"{speed:.1f} tokens/s = {speed / most:.0%} of the ceiling,"
            f" {most:.0f} tokens/s (section 3's floors)"
        )
        if not 0 < speed <= most:
            problems.append(
                f"{name}: {speed} tokens/s at concurrency {BATCH}, above the ceiling"
                f" {most:.0f}"
            )
        (first, tokens, cached), (again, tokens_again, cached_again) = read_quality(
            speed_text
        )
        rows["perplexity"] = (
            f"{first:.4f} over {tokens} tokens (again: {again:.4f};"
            f" tokens read from the cache: {cached}, {cached_again})"
        )
        # A request with prompt_logprobs skips reading the prefix cache
        # (vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks), so
        # the second request computes every token again, as the first did.
        if cached or cached_again:
            problems.append(
                f"{name}: the perplexity requests read {cached} and {cached_again}"
                " tokens from the prefix cache, the page says none"
            )
        if tokens != tokens_again or not first >= 1 <= again:
            problems.append(
                f"{name}: perplexities {first} over {tokens} tokens and {again} over"
                f" {tokens_again}: not two measurements of one text"
            )
    return rows, problems


def versus(bf16_text: str, int4_text: str, int4: str = "awq") -> dict:
    """Rows for a report: an INT4 lab's decode speeds against lab_bf16.py's, measured
    and as section 3's floors predict them; reported, not held to: how far each run
    stays from its floor is what the lab measures."""
    rows = {}
    for concurrency, read, most in (
        (1, read_speed, ceiling),
        (BATCH, read_batch_speed, batch_ceiling),
    ):
        bf16, quantized = read(bf16_text), read(int4_text)
        predicted = most(VARIANTS[int4].fmt) / most("bf16")
        rows[f"{int4} / bf16 at concurrency {concurrency}"] = (
            f"measured {quantized / bf16:.2f}x ({quantized:.1f} and {bf16:.1f}"
            f" tokens/s); section 3's floors: {predicted:.2f}x"
        )
    return rows


def print_predictions() -> None:
    print(f"{PRESET}; 'Model loading took' in GiB, counted by load_memory.py: a run")
    print(
        f"passes within {ROUNDING_GIB} GiB (the log's rounding) of vLLM 0.26.0's figure"
    )
    print("or of older vLLM's, which loaded without a split limit")
    print("format  vLLM 0.26.0  older vLLM  ceiling tokens/s")
    for name, variant in VARIANTS.items():
        predicted, older = loading_figures(PRESET, variant.fmt)
        print(
            f"{name:<6} {predicted:>11.3f} {older:>11.3f} {ceiling(variant.fmt):>17.1f}"
        )
    print(f"awq's ceiling is {ceiling('awq-int4-g128') / ceiling('bf16'):.2f}x bf16's")
    needed, left = batch_blocks()
    fits = "it fits in every format" if needed <= left else "not reachable"
    tokens = PROMPT_TOKENS + 1 + DECODE_TOKENS
    print(f"at concurrency {BATCH}, sequences of up to {tokens} tokens: {needed:,} KV"
          f" blocks of the {left:,} bf16 leaves; {fits}")  # fmt: skip
    print(f"at concurrency {BATCH}, the floors of a step in milliseconds:")
    print("format  reads   math  ceiling tokens/s")
    for name, variant in VARIANTS.items():
        reads, math_ms = batch_floors_ms(variant.fmt)
        ceiling_batch = batch_ceiling(variant.fmt)
        print(f"{name:<6} {reads:>6.2f} {math_ms:>6.2f} {ceiling_batch:>17,.0f}")
    for fmt in ("awq-int4-g128", "fp8"):
        ratio = batch_ceiling(fmt) / batch_ceiling("bf16")
        print(
            f"{fmt.split('-')[0]}'s ceiling at concurrency {BATCH}"
            f" is {ratio:.2f}x bf16's"
        )
    model = read_presets()[PRESET].model
    per_block = 16 * bytes_per_token(model)  # lesson 1: K and V, every layer
    print(
        f"KV cache (auto: 16-bit): {per_block // 1024} KiB per block of 16 tokens,"
        " in every format: the weights' format does not change it"
    )
    for name, variant in VARIANTS.items():
        kernel = variant.kernel_line or "(none: unquantized)"
        print(f"{name:<6} computes in {variant.dtype:<8}  kernel line: {kernel}")


if __name__ == "__main__":
    if len(sys.argv) == 1:
        print_predictions()
        sys.exit()
    if sys.argv[1] == "versus":
        bf16_log, int4_log = (Path(file).read_text("utf-8") for file in sys.argv[2:4])
        for key, value in versus(bf16_log, int4_log).items():
            print(f"{key}: {value}")
        sys.exit()
    name, log_file = sys.argv[1], Path(sys.argv[2])
    text = log_file.read_text(encoding="utf-8")
    speed_text = (
        Path(sys.argv[3]).read_text(encoding="utf-8") if len(sys.argv) > 3 else text
    )
    # a server's log comes with lab_speed_send.py's output, which has no perplexity
    rows, problems = compare(name, text, speed_text, quality=len(sys.argv) == 3)
    for key, value in rows.items():
        print(f"{key}: {value}")
    print("\n".join(f"MISMATCH: {problem}" for problem in problems) or "match")
    sys.exit(1 if problems else 0)
