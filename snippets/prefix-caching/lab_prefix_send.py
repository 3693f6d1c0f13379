"""The lab, command line: send lab_hits.py's requests to the server of
lab_prefix_serve.sh, one at a time; print how many prompt tokens of each came from the
prefix cache, what each reset answered, and the two prefix cache counters of /metrics.

Run (in a second terminal): python lab_prefix_send.py [URL] > sent.txt
     python lab_hits.py sent.txt
"""

import json
import sys
import urllib.request

from lab_hits import MAX_TOKENS, PARTS

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def post(url, body=None):
    data = json.dumps(body or {}).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    for number, part in enumerate(PARTS.values()):
        if number:  # POST /reset_prefix_cache exists with VLLM_SERVER_DEV_MODE=1 only
            print(f"reset_prefix_cache: {post(url + '/reset_prefix_cache')['success']}")
        for name, prompt in part:
            body = {"model": MODEL, "prompt": prompt, "max_tokens": MAX_TOKENS}
            usage = post(url + "/v1/completions", body)["usage"]
            # There with --enable-prompt-tokens-details only
            cached = usage["prompt_tokens_details"]["cached_tokens"]
            print(f"{name}: {usage['prompt_tokens']} prompt tokens, {cached} cached")
    with urllib.request.urlopen(url + "/metrics", timeout=30) as response:
        metrics = response.read().decode()
    wanted = ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total")
    print("\n".join(line for line in metrics.splitlines() if line.startswith(wanted)))
