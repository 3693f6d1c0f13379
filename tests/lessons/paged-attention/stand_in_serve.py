"""A stand-in for `vllm serve MODEL --flags...` with a block pool, for the offline test of the
PagedAttention lab's GPU check (test_paged_gpu_checks.py). It prints $STAND_IN_LOG to stderr,
then answers GET /v1/models, POST /v1/completions (a prompt of token ids; the answer is
generated a token at a time) and GET /metrics, whose vllm:kv_cache_usage_perc follows the
blocks the running requests hold, out of $STAND_IN_TOTAL (vLLM: num_gpu_blocks - 1).

Run: python stand_in_serve.py MODEL --num-gpu-blocks-override N [--flags...] --host H --port P
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BLOCK_SIZE = 16


class Pool:
    def __init__(self, num_gpu_blocks: int):
        self.total = int(os.environ.get("STAND_IN_TOTAL", num_gpu_blocks - 1))
        self.held = {}  # request -> tokens it has slots for
        self.lock = threading.Lock()

    def usage(self) -> float:
        with self.lock:
            used = sum(-(-tokens // BLOCK_SIZE) for tokens in self.held.values())
        return 1.0 - (self.total - used) / self.total


def handler(model: str, pool: Pool, num_gpu_blocks: int):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, body, content_type="application/json"):
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/v1/models":
                return self.answer({"data": [{"id": model}]})
            if self.path == "/metrics":
                labels = f'engine="0",model_name="{model}"'
                return self.answer(
                    f'vllm:cache_config_info{{block_size="16",{labels},'
                    f'num_gpu_blocks="{num_gpu_blocks}"}} 1.0\n'
                    f"vllm:kv_cache_usage_perc{{{labels}}} {pool.usage()!r}\n",
                    "text/plain")
            self.send_error(404)

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/completions" or request.get("model") != model:
                return self.send_error(404)
            name, prompt = str(id(request)), len(request["prompt"])
            for generated in range(1, request["max_tokens"] + 1):
                with pool.lock:  # slots for the prompt and the tokens fed back so far
                    pool.held[name] = prompt + generated - 1
                time.sleep(0.003)
            with pool.lock:
                del pool.held[name]
            tokens = request["max_tokens"]
            self.answer({"choices": [{"text": "x" * tokens}],
                         "usage": {"prompt_tokens": prompt, "completion_tokens": tokens}})

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--num-gpu-blocks-override", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args()
    print(os.environ.get("STAND_IN_LOG", ""), file=sys.stderr, flush=True)
    pool = Pool(args.num_gpu_blocks_override)
    ThreadingHTTPServer((args.host, args.port),
                        handler(args.model, pool, args.num_gpu_blocks_override)).serve_forever()


if __name__ == "__main__":
    main()
