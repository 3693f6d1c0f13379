"""The OpenAI API of the stand-in for vLLM (`vllm serve`, cli.py), and on its own a stand-in
server for the tests of the GPU lab harness (tests/test_gpu_labs.py): it prints $STAND_IN_LOG
to stderr, then answers GET /v1/models and POST /v1/completions on --host and --port, the
completion echoing the model and the prompt. Other flags are accepted and ignored.

Served by cli.py with the stand-in's engine (serve(..., engine=...)), it also steps that
engine's scheduler (stand_in.Scheduler) in a thread of its own, as vLLM's engine core loop
does: POST /v1/completions adds a request (a text or token ids, max_tokens, ignore_eos) and
answers when it finishes, with vLLM's `usage` (vllm/entrypoints/openai/engine/protocol.py:
UsageInfo), and GET /metrics answers the Prometheus text of the metrics stand_in models
(vllm:kv_cache_usage_perc, vllm:cache_config_info, vllm:num_preemptions,
vllm:iteration_tokens_total, vllm:prefix_cache_queries, vllm:prefix_cache_hits, ...),
recorded from every step as the API server's output handler records them, with the
Iteration lines of --enable-logging-iteration-details. With --enable-prompt-tokens-details
the usage has prompt_tokens_details.cached_tokens; with VLLM_SERVER_DEV_MODE=1 (vllm/envs.py)
POST /reset_prefix_cache answers {"success": ...} (vllm/entrypoints/serve/dev/cache/
api_router.py: reset_prefix_cache).

Run: python stand_in_server.py MODEL [--flags...] --host 127.0.0.1 --port 8000
"""

import argparse
import itertools
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STEP_SECONDS = 0.01  # the stand-in's time per engine step while requests run (a 4090-like
# decode step of a 7B model, a stand-in estimate)


class EngineLoop:
    """vllm/v1/engine/core.py: EngineCoreProc.run_busy_loop, for the stand-in's scheduler."""

    def __init__(self, engine, prompt_tokens_details=False):
        from vllm import stand_in  # only when served by the stand-in's `vllm serve`
        from vllm.stand_in_request_metrics import RequestMetrics

        # vllm/entrypoints/openai/completion/serving.py: OpenAIServingCompletion
        # .request_output_to_completion_response, with enable_prompt_tokens_details
        self.prompt_tokens_details = prompt_tokens_details

        self.stand_in, self.engine = stand_in, engine
        self.log_stats = not engine.options["disable_log_stats"]
        self.scheduler = stand_in.Scheduler(engine, self.log_stats)
        self.stats = stand_in.StatLoggers(engine, self.log_stats)
        self.requests = RequestMetrics()  # the request-level counts lesson 6 checks
        from vllm.stand_in_spec import SpecCounters, config

        spec = config(engine.options["speculative_config"])
        self.spec = SpecCounters(spec) if spec else None  # lesson 7's n-gram counters
        self.lock, self.changed = threading.Lock(), threading.Condition()
        self.ids = itertools.count()
        self.error = None
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            with self.changed:
                while not self.scheduler.has_unfinished_requests():
                    self.changed.wait()
                try:
                    result = self.scheduler.engine_step()
                    # AsyncLLM's output_handler records every step, with IterationStats only
                    # for a step with outputs.
                    if self.log_stats:
                        self.stats.record(result, iteration_stats=bool(result.sampled))
                        if result.sampled:
                            self.requests.record(result)
                        if self.spec is not None:
                            self.spec.record(result)
                except Exception as error:  # noqa: BLE001 - every waiting request gets it
                    print(f"ERROR engine core: {type(error).__name__}: {error}",
                          file=sys.stderr, flush=True)
                    self.error = error
                    for request in self.scheduler.running + self.scheduler.waiting:
                        request.finished = True
                    self.scheduler.running, self.scheduler.waiting = [], []
                self.changed.notify_all()
            time.sleep(STEP_SECONDS)

    def complete(self, body: dict) -> dict:
        request = self.stand_in.Request(
            f"cmpl-{next(self.ids)}", self.stand_in.dry_run_prompt_tokens(body["prompt"]),
            body.get("max_tokens", 16), body.get("ignore_eos", False))
        with self.changed:
            self.scheduler.add_request(request)
            self.changed.notify_all()
            while not request.finished:
                self.changed.wait()
            if self.error is not None:
                raise RuntimeError(f"EngineDeadError: {self.error}")
        prompt, completion = len(request.prompt_token_ids), len(request.output_token_ids)
        details = None
        if self.prompt_tokens_details:  # PromptTokenUsageInfo
            details = {"cached_tokens": request.num_cached_tokens,
                       "created_cache_tokens": None, "multimodal_tokens": None}
        return {"id": request.request_id, "object": "text_completion",
                "created": int(time.time()), "model": self.engine.model,
                "choices": [{"index": 0, "text": self.stand_in.dry_run_text(
                    request.output_token_ids), "logprobs": None, "finish_reason": "length",
                    "stop_reason": None}],
                "usage": {"prompt_tokens": prompt, "total_tokens": prompt + completion,
                          "completion_tokens": completion, "prompt_tokens_details": details}}

    def metrics(self) -> str:
        with self.changed:
            spec = self.spec.lines(self.engine.model) if self.spec is not None else []
            return self.stats.prometheus_text() + "\n".join(
                self.requests.lines(self.engine.model) + spec) + "\n"

    def reset_prefix_cache(self) -> bool:
        """Between two engine steps, as the engine core runs a utility call."""
        with self.changed:
            return self.scheduler.reset_prefix_cache()


def handler(model: str, loop: EngineLoop | None = None):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, body, content_type="application/json", status=200):
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/metrics" and loop is not None:
                return self.answer(loop.metrics(), "text/plain; version=0.0.4; charset=utf-8")
            if self.path != "/v1/models":
                return self.send_error(404, "the stand-in serves only GET /v1/models, GET"
                                       " /metrics and POST /v1/completions"
                                       " (tests/stand_in_vllm)")
            self.answer({"data": [{"id": model}]})

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"] or 0))
                                 or b"{}")
            # vllm/entrypoints/openai/api_server.py: build_app registers the dev endpoints
            # only with VLLM_SERVER_DEV_MODE=1.
            dev_mode = os.environ.get("VLLM_SERVER_DEV_MODE", "0") == "1"
            if self.path.split("?")[0] == "/reset_prefix_cache" and dev_mode and loop:
                return self.answer({"success": loop.reset_prefix_cache()})
            if self.path == "/v1/chat/completions" and request.get("model") == model:
                from vllm import stand_in_sampling_and_tools  # lesson 10's lab

                return self.answer(*stand_in_sampling_and_tools.chat(request, model))
            if self.path != "/v1/completions" or request.get("model") != model:
                return self.send_error(404)
            if loop is None:
                return self.answer({"choices": [{"text": f"{model}: {request['prompt']}"}]})
            if "structured_outputs" in request:  # lesson 10's lab: a JSON schema's answer
                from vllm import stand_in_sampling_and_tools

                return self.answer(stand_in_sampling_and_tools.structured(loop.complete, request))
            try:
                self.answer(loop.complete(request))
            except (ValueError, RuntimeError) as error:
                self.answer({"error": {"message": str(error), "type": "BadRequestError",
                                       "code": 400}}, status=400)

    return Handler


def main(argv=None, engine=None, prompt_tokens_details=False):
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args(argv)
    print(os.environ.get("STAND_IN_LOG", ""), file=sys.stderr, flush=True)
    loop = EngineLoop(engine, prompt_tokens_details) if engine is not None else None
    server = ThreadingHTTPServer((args.host, args.port), handler(args.model, loop), False)
    # socketserver's backlog of 5 resets a lab's 32 clients connecting at once; uvicorn,
    # which serves vLLM, listens with a backlog of 2048.
    server.request_queue_size = 2048
    server.server_bind()
    server.server_activate()
    server.serve_forever()


if __name__ == "__main__":
    main()
