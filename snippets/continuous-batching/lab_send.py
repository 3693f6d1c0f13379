"""Send long_prompt.py's requests to the server of lab_chunks_serve.sh, one after the
other, then print what each generated and the two metrics the lab predicts.

Run (in a second terminal): python lab_send.py [URL] > sent.txt
     then: python lab_trace.py lab_chunks_serve.sh server.log sent.txt
"""

import json
import sys
import threading
import time
import urllib.request

from long_prompt import WORKLOAD

MODEL = "Qwen/Qwen2.5-7B-Instruct-AWQ"
GAP = 0.02  # seconds between two requests, so that they reach vLLM in this order


def post(url, body):
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)


def send(url, request, token, answers):
    body = {
        "model": MODEL,
        "prompt": [token] * request.prompt_tokens,  # token ids, as in lab_chunks.py
        "max_tokens": request.max_tokens,
        "ignore_eos": True,
    }
    answers[request.request_id] = post(f"{url}/v1/completions", body)


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    answers, threads = {}, []
    for request in sorted(WORKLOAD, key=lambda request: request.arrival_step):
        token = 1000 + WORKLOAD.index(request)
        thread = threading.Thread(target=send, args=(url, request, token, answers))
        thread.start()
        threads.append(thread)
        time.sleep(GAP)
    for thread in threads:
        thread.join()
    for request in WORKLOAD:
        tokens = answers[request.request_id]["usage"]["completion_tokens"]
        print(f"{request.request_id}: {tokens} tokens generated")
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as response:
        metrics = response.read().decode()
    wanted = ("vllm:iteration_tokens_total_", "vllm:num_preemptions_total")
    print("\n".join(line for line in metrics.splitlines() if line.startswith(wanted)))
