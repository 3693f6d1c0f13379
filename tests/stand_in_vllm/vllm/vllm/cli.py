"""`vllm serve MODEL --flags...` of the stand-in (and `vllm bench startup`, below): the engine's
start-up (stand_in.py) with the server's defaults, then the OpenAI API (stand_in_server.py).
Like vLLM's own argument parser, it refuses a flag it does not know."""

import argparse
import json
import os
import sys

from vllm import stand_in, stand_in_server


def parser(prog: str = "vllm serve") -> argparse.ArgumentParser:
    serve = argparse.ArgumentParser(prog=prog)
    if prog == "vllm serve":
        serve.add_argument("model")
    else:  # the engine's own flags take the model as --model (vllm bench startup)
        serve.add_argument("--model", required=True)
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--max-model-len", type=int)
    serve.add_argument("--gpu-memory-utilization", type=float)
    serve.add_argument("--kv-cache-dtype")
    serve.add_argument("--kv-cache-memory-bytes", type=int)
    serve.add_argument("--block-size", type=int)
    serve.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction)
    serve.add_argument("--attention-backend")
    serve.add_argument("--max-num-batched-tokens", type=int)
    serve.add_argument("--max-num-seqs", type=int)
    serve.add_argument("--num-gpu-blocks-override", type=int)
    serve.add_argument("--quantization")
    serve.add_argument("--disable-log-stats", action="store_true", default=None)
    serve.add_argument("--speculative-config")  # JSON; n-gram only (stand_in_spec.py)
    serve.add_argument("--kv-transfer-config")  # JSON; stand_in_disaggregation.py
    # bool fields of vLLM's configs: --x and --no-x (arg_utils.py: _compute_kwargs)
    serve.add_argument("--async-scheduling", action=argparse.BooleanOptionalAction)
    serve.add_argument("--enable-logging-iteration-details",
                       action=argparse.BooleanOptionalAction)
    # a frontend flag (vllm/entrypoints/openai/cli_args.py: BaseFrontendArgs), not an engine one
    serve.add_argument("--enable-prompt-tokens-details", action=argparse.BooleanOptionalAction,
                       default=False)
    # frontend flags too: lesson 10's tool calling (stand_in_sampling_and_tools.py)
    serve.add_argument("--enable-auto-tool-choice", action="store_true", default=False)
    serve.add_argument("--tool-call-parser")
    return serve


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["bench", "serve"]:  # a fake run of its own (stand_in_bench.py)
        from vllm import stand_in_bench

        return stand_in_bench.main(argv[2:])
    if argv[:2] == ["bench", "startup"]:
        return bench_startup(argv[2:])
    if argv[:1] != ["serve"]:
        sys.exit(f"vllm (stand-in): only `vllm serve`, `vllm bench serve` and `vllm bench startup`"
                 f" are modelled, not {argv[:1]}")
    args = vars(parser().parse_args(argv[1:]))
    host, port, model = args.pop("host"), args.pop("port"), args.pop("model")
    details = args.pop("enable_prompt_tokens_details")
    from vllm import stand_in_sampling_and_tools  # lesson 10's chat completions

    try:
        stand_in_sampling_and_tools.configure(args.pop("enable_auto_tool_choice"),
                                              args.pop("tool_call_parser"))
    except (TypeError, ValueError) as error:
        sys.exit(str(error))
    try:
        engine = stand_in.start(model, args, "OPENAI_API_SERVER")
    except (stand_in.StandInError, ValueError) as error:
        sys.exit(f"{type(error).__name__}: {error}")
    if engine.options["speculative_config"]:  # n-gram: the V1 runner (stand_in_spec.py)
        from vllm import stand_in_spec

        stand_in_spec.log_v1_runner_graphs(stand_in.log_stream())
    if os.environ.get("VLLM_SERVER_DEV_MODE", "0") == "1":
        # vllm/entrypoints/serve/__init__.py: register_vllm_dev_api_routers
        print("WARNING (stand-in) SECURITY WARNING: Development endpoints are enabled! This"
              " should NOT be used in production!", file=stand_in.log_stream(), flush=True)
    stand_in_server.main([model, "--host", host, "--port", str(port)], engine=engine,
                         prompt_tokens_details=details)


if __name__ == "__main__":
    main()


def bench_startup(argv) -> None:
    """`vllm bench startup` (vllm/benchmarks/startup.py: add_cli_args, main): its own flags and
    the engine's, refused if unknown; no engine starts here, so it times nothing and says so."""
    bench = parser("vllm bench startup")
    for phase, default in (("cold", 3), ("warmup", 1), ("warm", 3)):
        bench.add_argument(f"--num-iters-{phase}", type=int, default=default)
    bench.add_argument("--output-json")
    args = bench.parse_args(argv)
    print(f"stand-in: {args.num_iters_cold} cold, {args.num_iters_warmup} warm-up and"
          f" {args.num_iters_warm} warm starts of {args.model} counted, none timed (dry run)")
    if args.output_json:
        with open(args.output_json, "w", encoding="utf-8") as out:
            json.dump({"dry_run": True}, out)
