"""Decode speed at concurrency 1 of a served model (lab_fp8_serve.sh): one request for 1
token, then one for 1 + DECODE_TOKENS tokens, as lab_quant_check.decode_speed does in
Python.

Run (in a second terminal): python lab_speed_send.py [URL] > speed.txt
     then: python lab_quant_check.py fp8 server.log speed.txt
"""

import json
import sys
import time
import urllib.request

from lab_quant_check import DECODE_TOKENS, PROMPT

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def timed(url, max_tokens):
    body = {
        "model": MODEL,
        "prompt": PROMPT,
        "max_tokens": max_tokens,
        "temperature": 0,
        "ignore_eos": True,
    }
    request = urllib.request.Request(
        f"{url}/v1/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.load(response)
    return time.perf_counter() - start, answer


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    timed(url, 8)  # warm-up
    first, _ = timed(url, 1)
    total, answer = timed(url, 1 + DECODE_TOKENS)
    generated = answer["usage"]["completion_tokens"]
    assert generated == 1 + DECODE_TOKENS, generated
    rate = DECODE_TOKENS / (total - first)
    print(
        f"decode at concurrency 1: {rate:.1f} tokens/s"
        f" ({DECODE_TOKENS} steps in {total - first:.3f} s)"
    )
    print(f"text: {answer['choices'][0]['text'][:300]!r}")
