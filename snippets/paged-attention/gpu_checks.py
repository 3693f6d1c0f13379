"""What the GPU job checks of the PagedAttention lab on the RTX 4090 (see gpu_labs.py).

Every figure is predicted with the lesson's own code: the start-up lines with lesson 1's
capacity calculator, the usage gauge with block_pool.py, exactly.
"""

import re
import threading
import time
import urllib.request

from block_pool import BlockPool, blocks_for
from coursekit.vllm_claims import serve_options
from kv_capacity import read_startup_log
from lab_prediction import (
    MAX_MODEL_LEN,
    NUM_GPU_BLOCKS,
    lab_pool,
    read_lab_output,
    startup,
    steady,
)

OVERRIDE = re.compile(
    r"Overriding num_gpu_blocks=\d+ with num_gpu_blocks_override=(\d+)"
)
GAUGE = re.compile(r"^vllm:kv_cache_usage_perc\{.*\} (\S+)$", re.M)
INFO = re.compile(r'^vllm:cache_config_info\{.*?\bnum_gpu_blocks="(\d+)"', re.M)
# The served check's request: a prompt of token ids, and a long answer. Its blocks go
# from 32 to 50, and one token more (a step scheduled ahead) still needs 50.
SERVE_PROMPT, SERVE_TOKENS = 500, 290


def startup_matches(lab, title, log_text):
    """The override and the two capacity lines are exactly the predicted ones."""
    override = OVERRIDE.search(log_text)
    assert override, f"{title}: no 'Overriding num_gpu_blocks=... with ...' line"
    log, expected = read_startup_log(log_text), startup()
    lab.report(
        title,
        {
            "num_gpu_blocks_override": override[1],
            "GPU KV cache size": f"{log.tokens:,} tokens"
            f" (predicted {expected.tokens:,})",
            "Maximum concurrency": f"{log.max_concurrency:.2f}x"
            f" (predicted {expected.max_concurrency:.2f}x)",
        },
    )
    assert int(override[1]) == NUM_GPU_BLOCKS, f"{title}: override {override[1]}"
    assert (log.tokens, log.max_model_len) == (expected.tokens, MAX_MODEL_LEN), (
        f"{title}: vLLM reports {log.tokens:,} tokens for {log.max_model_len:,},"
        f" predicted {expected.tokens:,} for {MAX_MODEL_LEN:,}"
    )
    assert f"{log.max_concurrency:.2f}" == f"{expected.max_concurrency:.2f}", (
        f"{title}: vLLM reports {log.max_concurrency}x"
    )


def usage_lab_py(lab):
    """The Python lab: 1,000 blocks, and at each reading the gauge vLLM exports is
    exactly the usage of block_pool.py holding the same tokens."""
    run = lab.run_python("usage_lab.py")
    startup_matches(lab, "usage_lab.py start-up", run.log)
    assert f"num_gpu_blocks = {NUM_GPU_BLOCKS}" in run.stdout, run.stdout
    readings = read_lab_output(run.stdout)
    rows = {}
    for counts, value in readings:
        expected = lab_pool(counts).usage
        rows[f"after {counts} generated tokens"] = f"{value!r} (predicted {expected!r})"
    lab.report("usage_lab.py: vllm:kv_cache_usage_perc", rows)
    assert len(readings) == 2, f"usage_lab.py printed {len(readings)} readings, not 2"
    for counts, value in readings:
        assert steady(counts), f"read at a block boundary: {counts}"
        assert value == lab_pool(counts).usage, f"{counts}: {value!r} {rows}"


def scrape(url):
    with urllib.request.urlopen(url + "/metrics", timeout=30) as response:
        return response.read().decode("utf-8")


def usage_serve_sh(lab):
    """The served twin: the same start-up lines, num_gpu_blocks 1000 on /metrics, and a
    usage gauge that is always a number of blocks out of 999, within what one long
    request can hold."""
    model = serve_options(lab.folder / "usage_serve.sh")["model"]
    pool = BlockPool(NUM_GPU_BLOCKS)
    with lab.serve("usage_serve.sh") as server:
        startup_matches(lab, "usage_serve.sh start-up", server.log)
        text = scrape(server.url)
        assert INFO.findall(text) == [str(NUM_GPU_BLOCKS)], INFO.findall(text)
        assert [float(v) for v in GAUGE.findall(text)] == [0.0], "idle usage is not 0"

        body = {
            "model": model,
            "prompt": [1000] * SERVE_PROMPT,
            "max_tokens": SERVE_TOKENS,
            "ignore_eos": True,
        }
        answer = {}
        worker = threading.Thread(
            target=lambda: answer.update(server.post("/v1/completions", body, 600))
        )
        worker.start()
        seen = set()
        while worker.is_alive():
            seen.update(float(v) for v in GAUGE.findall(scrape(server.url)))
            time.sleep(0.05)
        worker.join()
        assert answer["usage"]["completion_tokens"] == SERVE_TOKENS, answer["usage"]
        after = [float(v) for v in GAUGE.findall(scrape(server.url))]

    least, most = blocks_for(SERVE_PROMPT), blocks_for(SERVE_PROMPT + SERVE_TOKENS + 1)
    allowed = {}
    for used in range(least, most + 1):  # the pool's usage with `used` blocks held
        pool.allocate("request", used * pool.block_size)
        allowed[pool.usage] = used
    lab.report(
        "usage_serve.sh: vllm:kv_cache_usage_perc while one request runs",
        {
            "distinct values seen": len(seen - {0.0}),
            "blocks they stand for": sorted(allowed[v] for v in seen if v in allowed),
            "predicted range": f"{least} to {most} blocks of {NUM_GPU_BLOCKS - 1}",
        },
    )
    assert seen - {0.0}, "the gauge never moved while the request ran"
    strange = sorted(v for v in seen - {0.0} if v not in allowed)
    assert not strange, f"values that are no block count out of 999: {strange}"
    assert after == [0.0], f"usage after the request finished: {after}"


CHECKS = {"usage_lab.py": usage_lab_py, "usage_serve.sh": usage_serve_sh}
