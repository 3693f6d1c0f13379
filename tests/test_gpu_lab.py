"""The KV cache lab on a real GPU (the self-hosted RTX 4090 job): run as a reader would.

Without an NVIDIA GPU and vLLM these tests skip with the reason; REQUIRE_GPU=1 makes a skip fail.
A test's vLLM output is kept in $GPU_LAB_LOG_DIR (default: pytest's temporary folder), and the
predicted and reported capacities go to $GITHUB_STEP_SUMMARY when it is set.
"""

import ast
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser import free_port
from pages import ROOT

LAB = ROOT / "snippets" / "kv-cache"
sys.path.insert(0, str(LAB))
from kv_cache_size import GIB  # noqa: E402
from kv_capacity import QWEN_FP8, predict, predict_from_log, read_startup_log  # noqa: E402

pytestmark = pytest.mark.gpu
START_TIMEOUT = 900  # seconds: the first run downloads about 5.5 GB of weights
EXACT_KV_MEMORY = 4 * GIB  # kv_cache_memory_bytes for the exact check: 9,362 blocks


@pytest.fixture(scope="module")
def gpu():
    if shutil.which("nvidia-smi") is None or subprocess.run(
            ["nvidia-smi"], capture_output=True).returncode != 0:
        pytest.skip("no NVIDIA GPU (nvidia-smi missing or failing)")
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM is not installed: pip install -r requirements-gpu.txt")


def run_logged(name: str, command: list[str], tmp_path: Path, **kwargs) -> tuple[str, str]:
    """Run a lab command; vLLM logs to stderr so that stdout holds only what the lab prints."""
    env = {**os.environ, "VLLM_LOGGING_STREAM": "ext://sys.stderr"}
    result = subprocess.run(command, cwd=LAB, env=env, capture_output=True, text=True,
                            timeout=START_TIMEOUT, **kwargs)
    keep(name, result.stderr, tmp_path)
    assert result.returncode == 0, f"{name} failed:\n{result.stderr[-3000:]}"
    return result.stdout, result.stderr


def keep(name: str, log: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("GPU_LAB_LOG_DIR", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.log").write_text(log, "utf-8")


def summary(title: str, rows: dict[str, object]) -> None:
    if "GITHUB_STEP_SUMMARY" in os.environ:
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as out:
            out.write(f"### {title}\n\n| | |\n|---|---|\n")
            out.writelines(f"| {key} | {value} |\n" for key, value in rows.items())
            out.write("\n")


def lab_llm_kwargs() -> dict[str, object]:
    """The LLM(...) keywords of serve_kv.py, read from the snippet itself."""
    tree = ast.parse((LAB / "serve_kv.py").read_text("utf-8"))
    call = next(node for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "LLM")
    return {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}


def test_python_lab_generates_and_matches_the_prediction(gpu, tmp_path):
    stdout, log_text = run_logged("serve_kv.py", [sys.executable, "serve_kv.py"], tmp_path)
    assert stdout.strip(), "serve_kv.py printed no generated text"
    log = read_startup_log(log_text)
    low, high = predict_from_log(QWEN_FP8, log)
    summary("serve_kv.py (gpu_memory_utilization=0.90)", {
        "Available KV cache memory": f"{log.available_gib} GiB",
        "reported GPU KV cache size": f"{log.tokens:,} tokens",
        "predicted": f"{low.tokens:,} to {high.tokens:,} tokens",
        "reported maximum concurrency": f"{log.max_concurrency:.2f}x",
    })
    assert low.tokens <= log.tokens <= high.tokens
    # vLLM prints the concurrency with two decimals.
    assert low.max_concurrency - 0.005 <= log.max_concurrency <= high.max_concurrency + 0.005


def test_capacity_is_exact_with_kv_cache_memory_bytes(gpu, tmp_path):
    kwargs = {**lab_llm_kwargs(), "kv_cache_memory_bytes": EXACT_KV_MEMORY}
    script = f"from vllm import LLM\nLLM(**{kwargs!r})\n"
    _, log_text = run_logged("kv_cache_memory_bytes", [sys.executable, "-c", script], tmp_path)
    log = read_startup_log(log_text)
    expected = predict(QWEN_FP8, EXACT_KV_MEMORY, kwargs["max_model_len"], log.block_size)
    summary(f"kv_cache_memory_bytes={EXACT_KV_MEMORY:,}", {
        "block size": log.block_size,
        "reported GPU KV cache size": f"{log.tokens:,} tokens",
        "predicted": f"{expected.tokens:,} tokens ({expected.num_blocks:,} blocks)",
    })
    assert log.tokens == expected.tokens


def post_json(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


def test_cli_twin_serves_a_completion(gpu, tmp_path):
    command = shlex.split((LAB / "serve_kv.sh").read_text("utf-8").replace("\\\n", " "))
    model, port = command[2], free_port()
    log_file = tmp_path / "vllm-serve.log"
    with open(log_file, "w") as log:
        server = subprocess.Popen(command + ["--host", "127.0.0.1", "--port", str(port)],
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + START_TIMEOUT
        while True:
            assert server.poll() is None, f"vllm serve exited:\n{log_file.read_text()[-3000:]}"
            assert time.monotonic() < deadline, "vllm serve did not come up in time"
            try:
                urllib.request.urlopen(f"{base}/v1/models", timeout=5)
                break
            except OSError:
                time.sleep(5)
        answer = post_json(f"{base}/v1/completions", {
            "model": model, "prompt": "Why is LLM decode memory-bound?", "max_tokens": 32})
        assert answer["choices"][0]["text"].strip()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        keep("vllm-serve", log_file.read_text("utf-8"), tmp_path)
