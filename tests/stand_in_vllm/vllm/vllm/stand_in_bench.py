"""`vllm bench serve` of the stand-in (cli.py): a deterministic fake run that writes the JSON
vLLM 0.26.0 writes (vllm/benchmarks/serve.py: main_async, benchmark, calculate_metrics; the
keys, their order and numpy's arithmetic read from there), for the dry run of the GPU job.

Each of --num-prompts requests of --random-input-len token ids is sent to the stand-in's
`vllm serve` (POST /v1/completions, max_tokens --random-output-len, ignore_eos as
--ignore-eos says, the --extra-body's fields), so that its /metrics counts move as vLLM's do
and each answer's text is its generated_text; the stand-in does not stream, so each request's clock
readings are made up from --seed: the send time, the first chunk's time, one chunk per later
token, TTFT read a little after the first chunk as in
vllm/benchmarks/lib/endpoint_request_func.py: async_request_openai_completions. With
STAND_IN_BENCH_OFFLINE=1 it sends nothing and takes the counts asked for.
"""

import argparse
import json
import os
import random
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import numpy as np


def parser() -> argparse.ArgumentParser:
    bench = argparse.ArgumentParser(prog="vllm bench serve")
    bench.add_argument("--backend", default="openai")
    bench.add_argument("--base-url")
    bench.add_argument("--host", default="127.0.0.1")
    bench.add_argument("--port", type=int, default=8000)
    bench.add_argument("--endpoint", default="/v1/completions")
    bench.add_argument("--model", required=True)
    bench.add_argument("--dataset-name", default="random", choices=["random"])
    bench.add_argument("--random-input-len", type=int, default=1024)
    bench.add_argument("--random-output-len", type=int, default=128)
    bench.add_argument("--num-prompts", type=int, default=1000)
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--request-rate", type=float, default=float("inf"))
    bench.add_argument("--burstiness", type=float, default=1.0)
    bench.add_argument("--max-concurrency", type=int)
    bench.add_argument("--num-warmups", type=int, default=0)
    bench.add_argument("--ignore-eos", action="store_true")
    bench.add_argument("--extra-body", type=json.loads)
    bench.add_argument("--percentile-metrics")
    bench.add_argument("--metric-percentiles", default="99")
    bench.add_argument("--goodput", nargs="+")
    bench.add_argument("--save-result", action="store_true")
    bench.add_argument("--save-detailed", action="store_true")
    bench.add_argument("--result-dir")
    bench.add_argument("--result-filename")
    return bench


def send(args, url: str, index: int, answers: dict) -> None:
    tokens = random.Random(args.seed * 1_000_003 + index).choices(range(1000, 150000),
                                                                   k=args.random_input_len)
    body = json.dumps({"model": args.model, "prompt": tokens,
                       "max_tokens": args.random_output_len, "ignore_eos": args.ignore_eos,
                       **(args.extra_body or {})}).encode()
    request = urllib.request.Request(f"{url}/v1/completions", body,
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        answers[index] = json.load(response)


def fake_outputs(args) -> list[dict]:
    """One RequestFuncOutput per request: start_time, ttft, itl, latency, prompt_len,
    output_tokens; the counts from the server's usage (or as asked, offline)."""
    n = args.num_prompts
    answers = {}
    if os.environ.get("STAND_IN_BENCH_OFFLINE") != "1":
        url = args.base_url or f"http://{args.host}:{args.port}"
        # A few at a time: the stand-in's HTTP server queues only a handful of connections.
        with ThreadPoolExecutor(max_workers=min(n, args.max_concurrency or 32)) as pool:
            sent = [pool.submit(send, args, url, i, answers) for i in range(n)]
            for future in sent:
                future.result()  # a request that failed fails the run
    rng = random.Random(args.seed)
    rate = args.request_rate
    outputs, send_time = [], 1000.0
    for i in range(n):
        answer = answers.get(i, {"usage": {"prompt_tokens": args.random_input_len,
                                           "completion_tokens": args.random_output_len},
                                 "choices": [{"text": " token" * args.random_output_len}]})
        counts = answer["usage"]
        if rate != float("inf"):
            send_time += rng.expovariate(rate)
        first = send_time + 0.05 + 0.6 * rng.random()
        stamps = [first]
        for _ in range(counts["completion_tokens"] - 1):
            stamps.append(stamps[-1] + 0.012 + 0.03 * rng.random() ** 4)
        outputs.append({
            "start_time": send_time,
            "ttft": first - send_time + 2e-7,  # the second clock reading
            "itl": [b - a for a, b in zip(stamps, stamps[1:])],
            "latency": stamps[-1] - send_time,
            "prompt_len": counts["prompt_tokens"],
            "output_tokens": counts["completion_tokens"],
            "success": True,
            "error": "",
            "generated_text": answer["choices"][0]["text"],
        })
    return outputs


def calculate_metrics(outputs, dur_s, selected_percentiles, goodput_config_dict):
    """vllm/benchmarks/serve.py: calculate_metrics, for successful requests whose output
    token count the server reported."""
    itls, tpots, all_tpots, ttfts, e2els = [], [], [], [], []
    total_input = completed = good_completed = 0
    lens = []
    for out in outputs:
        output_len = out["output_tokens"]
        lens.append(output_len)
        total_input += out["prompt_len"]
        tpot = 0.0
        if output_len > 1:
            tpot = (out["latency"] - out["ttft"]) / (output_len - 1)
            tpots.append(tpot)
        all_tpots.append(tpot)
        itls += out["itl"]
        ttfts.append(out["ttft"])
        e2els.append(out["latency"])
        completed += 1
    if goodput_config_dict:
        valid, slo_values = [], []
        for name, values in (("ttft", ttfts), ("tpot", all_tpots), ("e2el", e2els)):
            if name in goodput_config_dict:
                valid.append(values)
                slo_values.append(goodput_config_dict[name] / 1000)
        for req_metric in zip(*valid):
            if all(s >= r for s, r in zip(slo_values, req_metric)):
                good_completed += 1
    first = min(out["start_time"] for out in outputs)
    last = max(out["start_time"] + out["latency"] for out in outputs)
    seconds = int(np.ceil(last - first)) + 1
    tokens_per_second, concurrent = np.zeros(seconds), np.zeros(seconds)
    for out in outputs:
        token_times = [out["start_time"] + out["ttft"]]
        current = token_times[0]
        for itl_value in out["itl"]:
            current += itl_value
            token_times.append(current)
        for token_time in token_times:
            bucket = int(token_time - first)
            if 0 <= bucket < seconds:
                tokens_per_second[bucket] += 1
        for second in range(int(out["start_time"] - first),
                            int(out["start_time"] + out["latency"] - first) + 1):
            concurrent[second] += 1
    metrics = {
        "completed": completed, "failed": 0, "total_input": total_input,
        "total_output": sum(lens), "request_throughput": completed / dur_s,
        "request_goodput": good_completed / dur_s, "output_throughput": sum(lens) / dur_s,
        "total_token_throughput": (total_input + sum(lens)) / dur_s,
        "max_output_tokens_per_s": float(np.max(tokens_per_second)),
        "max_concurrent_requests": int(np.max(concurrent)),
    }
    for name, values in (("ttft", ttfts), ("tpot", tpots), ("itl", itls), ("e2el", e2els)):
        metrics[f"mean_{name}_ms"] = np.mean(values or 0) * 1000
        metrics[f"std_{name}_ms"] = np.std(values or 0) * 1000
        metrics[f"median_{name}_ms"] = np.median(values or 0) * 1000
        metrics[f"percentiles_{name}_ms"] = [
            (p, np.percentile(values or 0, p) * 1000) for p in selected_percentiles]
    return metrics, lens


def main(argv: list[str]) -> None:
    args = parser().parse_args(argv)
    print(args)
    goodput = {}
    for pair in args.goodput or []:  # vllm/benchmarks/serve.py: parse_goodput
        name, value = pair.split(":")
        if name not in ("ttft", "tpot", "e2el"):
            sys.exit(f"Invalid metric name found, {name}: {value}.")
        goodput[name] = float(value)
    outputs = fake_outputs(args)
    duration = max(o["start_time"] + o["latency"] for o in outputs) - 1000.0
    percentiles = [float(p) for p in args.metric_percentiles.split(",")]
    metrics, lens = calculate_metrics(outputs, duration, percentiles, goodput)
    result = {
        "date": datetime.now().strftime("%Y%m%d-%H%M%S"), "endpoint_type": args.backend,
        "backend": args.backend, "label": None, "model_id": args.model,
        "tokenizer_id": args.model, "num_prompts": args.num_prompts,
        "request_rate": args.request_rate if args.request_rate < float("inf") else "inf",
        "burstiness": args.burstiness, "max_concurrency": args.max_concurrency,
        "duration": duration, "completed": metrics["completed"],
        "failed": metrics["failed"], "total_input_tokens": metrics["total_input"],
        "total_output_tokens": metrics["total_output"],
        "request_throughput": metrics["request_throughput"],
        "request_goodput": metrics["request_goodput"] if goodput else None,
        "output_throughput": metrics["output_throughput"],
        "total_token_throughput": metrics["total_token_throughput"],
        "input_lens": [o["prompt_len"] for o in outputs], "output_lens": lens,
        "ttfts": [o["ttft"] for o in outputs], "itls": [o["itl"] for o in outputs],
        "start_times": [o["start_time"] for o in outputs],
        "generated_texts": [o["generated_text"] for o in outputs],
        "errors": [o["error"] for o in outputs],
        "max_output_tokens_per_s": metrics["max_output_tokens_per_s"],
        "max_concurrent_requests": metrics["max_concurrent_requests"], "rtfx": 0.0,
    }
    selected = (args.percentile_metrics or "ttft,tpot,itl").split(",")
    for name in ("ttft", "tpot", "itl", "e2el"):  # benchmark: process_one_metric
        if name not in selected:
            continue
        for stat in ("mean", "median", "std"):
            result[f"{stat}_{name}_ms"] = metrics[f"{stat}_{name}_ms"]
        for p, value in metrics[f"percentiles_{name}_ms"]:
            result[f"p{int(p) if int(p) == p else p}_{name}_ms"] = value
    print(f"{'Successful requests:':<40} {metrics['completed']:<10}")
    if not args.save_detailed:
        for key in ("input_lens", "output_lens", "start_times", "ttfts", "itls",
                    "generated_texts", "errors"):
            del result[key]
    if args.save_result:
        name = args.result_filename or f"openai-{args.request_rate}qps-stand-in.json"
        path = Path(args.result_dir or ".") / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, default=float), "utf-8")
