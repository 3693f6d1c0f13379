"""The lab: send each task of lab_tasks.py to the server of lab_spec_serve.sh (or of
lab_plain_serve.sh), first one request at a time, then 32 at once; print the tokens and
seconds of each part, and the spec-decode counters /metrics gained during it.

Run (in a second terminal): python lab_spec_send.py [URL] > spec.txt
"""

import json
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from lab_tasks import CONCURRENCY, MAX_TOKENS, TASKS
from spec_metrics import difference, read_counters

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def complete(url: str, prompt: str) -> dict:
    body = {
        "model": MODEL,
        "prompt": prompt,
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        # vllm serve fills what a request leaves out from the model's
        # generation_config.json (Qwen2.5: repetition_penalty 1.05), a penalty on the
        # very copying n-gram drafts from.
        "repetition_penalty": 1.0,
        "ignore_eos": True,
    }
    request = urllib.request.Request(
        url + "/v1/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)["usage"]


def counters(url: str) -> dict | None:
    with urllib.request.urlopen(url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    return read_counters(text) if "spec_decode_num_drafts" in text else None


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    complete(url, "Hello")  # a warm-up request, not measured
    for task, prompt in TASKS.items():
        for concurrency in CONCURRENCY:
            before = counters(url)
            start = time.perf_counter()
            with ThreadPoolExecutor(concurrency) as pool:
                usages = list(
                    pool.map(lambda _: complete(url, prompt), range(concurrency))
                )
            seconds = time.perf_counter() - start
            part = {
                "task": task,
                "concurrency": concurrency,
                "seconds": round(seconds, 3),
                "prompt_tokens": usages[0]["prompt_tokens"],
                "completion_tokens": sum(u["completion_tokens"] for u in usages),
            }
            after = counters(url)
            if after is not None:
                part["spec"] = difference(after, before)
            print(json.dumps(part))
