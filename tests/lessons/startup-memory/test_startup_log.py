"""startup_log.py and lab_startup_check.py read logs built from vLLM 0.26.0's own format
strings (startup_lines.log, which the claims test checks against the wheel) and the
worker's memory summary, as vLLM's logger prints them."""

import pytest
from lab_startup_check import compare, read_stdout
from startup_budget import capture_sizes
from startup_log import FORMATS, read_lines, read_startup

PREFIX = "INFO 12-02 06:00:00 [x.py:1] "
VALUES = {
    "Using %s attention backend": ("FLASH_ATTN", "['FLASH_ATTN', 'FLASHINFER']"),
    "Model loading took": ("14.25", 5.5),
    "Using cache directory": ("/root/.cache/vllm/torch_compile_cache/abc/rank_0_0",),
    "Dynamo bytecode transform time": (6.1,),
    "Compiling a graph for": ("(1, 8192)", 20.5),
    "Directly load the compiled graph": ("(1, 8192)", 2.25),
    "Available KV cache memory": ("6.74",),
    "GPU KV cache size": ("126,208",),
    "Maximum concurrency": ("8,192", 15.41),
    "Graph capturing finished": (14.0, 0.53),
    "init engine": (61.2, 26.6),
}
SUMMARY = (
    "Free memory on device (23.33/23.64 GiB) on startup. Desired GPU memory"
    " utilization is (0.92, 21.75 GiB). Actual usage is 14.25 GiB for weight, 0.52 GiB"
    " for peak activation, 0.24 GiB for non-torch memory, and 0.53 GiB for CUDAGraph"
    " memory. Replace gpu_memory_utilization config with `--kv-cache-memory=1` (1.0"
    " GiB) to fit into requested memory, or `--kv-cache-memory=2` (2.0 GiB) to fully"
    " utilize gpu memory. Current kv cache memory in use is 6.74 GiB."
)


def log(*, eager=False, cached=False, drop=None, v2=True):
    lines = []
    for fmt in FORMATS:
        start = next((s for s in VALUES if fmt.startswith(s)), None)
        if fmt == "Using V2 Model Runner":
            if v2:
                lines.append(PREFIX + fmt)
            continue
        if fmt.startswith("Compiling a graph") and cached:
            continue
        if fmt.startswith("Directly load") and not cached:
            continue
        if start is None:  # the eager lines: formats without values
            if eager:
                lines.append(fmt)
            continue
        if start == drop:
            continue
        values = VALUES[start]
        if start == "init engine":
            if ("compilation" in fmt) == eager:
                continue
            values = values[: fmt.count("%")]
        if eager and start in ("Graph capturing finished", "Dynamo bytecode", "Compiling"):
            continue
        lines.append(PREFIX + fmt % values)
    lines.append(PREFIX + SUMMARY)
    return "\n".join(lines) + "\n"


def test_every_format_is_read():
    found = read_lines(log())
    assert len(found) == len(FORMATS) - 4  # no eager lines (3), no cache load
    startup = read_startup(log())
    assert (startup.backend, startup.weights_gib, startup.kv_gib) == ("FLASH_ATTN", 14.25, 6.74)
    assert (startup.kv_tokens, startup.graph_gib, startup.compile_seconds) == (126208, 0.53, 26.6)
    assert (startup.dynamo_seconds, startup.inductor_seconds, startup.from_cache) == (6.1, 20.5, False)
    assert (startup.requested_gib, startup.activation_gib, startup.non_torch_gib) == (21.75, 0.52, 0.24)
    assert not startup.eager and startup.v2_runner


def test_eager_and_cached_runs():
    eager = read_startup(log(eager=True))
    assert eager.eager and eager.graph_gib is None and eager.compile_seconds is None
    assert eager.init_seconds == 61.2
    cached = read_startup(log(cached=True))
    assert cached.from_cache and cached.inductor_seconds == 2.25


def test_progress_bars_do_not_hide_a_line():
    text = log().replace("\nINFO", "\rCapturing CUDA graphs (FULL): 100%|##| 35/35\nINFO", 3)
    assert read_startup(text).kv_gib == 6.74


@pytest.mark.parametrize("drop", ["Available KV cache memory", "Model loading took", "init engine"])
def test_a_missing_line_is_named(drop):
    with pytest.raises(ValueError, match=drop):
        read_startup(log(drop=drop))


def test_no_summary_is_named():
    with pytest.raises(ValueError, match="memory summary"):
        read_startup(log().replace("Actual usage", "Actual"))


def stdout(sizes):
    return f"capture sizes: {sizes}\ndecode at concurrency 1: 52.3 tokens/s\n"


def test_a_run_as_the_lesson_predicts_matches():
    rows, problems = compare("default", log(), stdout(capture_sizes(256, 8192)))
    assert problems == [] and rows["capture sizes"] == 51
    assert rows["decode tokens/s at concurrency 1"] == 52.3
    # the CUDA context: the card less what was free at start-up (the estimate)
    assert rows["CUDA context GiB (estimate)"] == "0.31 (0.50)"
    _, problems = compare("eager", log(eager=True), stdout([]))
    assert problems == []


def test_what_the_check_catches():
    sizes = capture_sizes(256, 8192)
    problems = compare("small", log(), stdout(sizes))[1]
    assert any("capture sizes" in p for p in problems)
    assert any("eager lines" in p for p in compare("eager", log(), stdout([]))[1])
    off = log().replace("Available KV cache memory: 6.74", "Available KV cache memory: 6.24")
    assert any("summary's parts" in p for p in compare("default", off, stdout(sizes))[1])
    heavy = log().replace("14.25 GiB and", "14.45 GiB and")
    assert any("weights" in p for p in compare("default", heavy, stdout(sizes))[1])
    v1 = compare("default", log(v2=False), stdout(sizes))[1]
    assert v1 == ["no 'Using V2 Model Runner' line: the budget is the V2 runner's"]
    big = log().replace("took 0.53 GiB", "took 2.53 GiB")
    assert any("graphs took" in p for p in compare("default", big, stdout(sizes))[1])
    # fits in the card less the share (1.89 GiB), not in what was free less it (1.58)
    tight = log().replace("took 0.53 GiB", "took 1.70 GiB")
    assert any("graphs took" in p for p in compare("default", tight, stdout(sizes))[1])


def test_the_kv_estimate_has_a_tolerance():
    sizes = capture_sizes(256, 8192)
    # no activation peak at all: 7.26 GiB of KV, 0.96 GiB above the estimate
    text = log().replace("0.52 GiB for peak", "0.00 GiB for peak")
    text = text.replace("memory: 6.74", "memory: 7.26")
    problems = compare("default", text, stdout(sizes))[1]
    assert problems == ["KV 7.26 GiB, estimated 6.20 GiB (tolerance 0.75 GiB)"]


def test_bad_input():
    with pytest.raises(ValueError, match="way"):
        compare("fast", log(), stdout([]))
    with pytest.raises(ValueError, match="capture sizes"):
        read_stdout("decode at concurrency 1: 1.0 tokens/s\n")
