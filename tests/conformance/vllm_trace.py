"""Run workloads through vLLM 0.26.0's own scheduler on the CPU and print what it did, step by
step, as JSON: the other side of the conformance tests (tests/conformance/), which run it
through vllm_side.py, in one process with the other drivers.

It runs in the conformance venv (.ci/setup: the pinned wheel, PyTorch's CPU build), not
in the course's: it is the only code of the course that imports vLLM. Nothing of vLLM is stubbed.
The scheduler is built as vllm/v1/engine/core.py: EngineCore.__init__ builds it, from a real
VllmConfig of Qwen2.5-7B-Instruct (a local config.json; no weights, no tokenizer, no hub), and
driven as the engine core drives it: EngineCore.step (sync) or EngineCore.step_with_batch_queue
with a queue of two batches (async scheduling: step N+1 is scheduled before step N's output is
processed). The model runner is the only thing played here: every request whose scheduled chunk
reaches the end of its known tokens (vLLM's own `request.is_prefill_chunk` is False) samples one
token: the k-th output token of a request is token id -1 - k, as lesson 3's scheduler samples
(tokens no prompt holds, the same for the same prompt, as greedy decoding gives).

    python vllm_trace.py < workloads.json > traces.json
"""

import json
import os
import sys
from collections import deque
from pathlib import Path

# vLLM's own logging writes to stdout, where the traces go: leave Python's default (stderr).
os.environ["VLLM_CONFIGURE_LOGGING"] = "0"
os.environ.setdefault("PYTHONHASHSEED", "0")

from vllm.config import (  # noqa: E402
    CacheConfig,
    DeviceConfig,
    ModelConfig,
    SchedulerConfig,
    VllmConfig,
)
from vllm.sampling_params import SamplingParams  # noqa: E402
from vllm.utils.hashing import get_hash_fn_by_name  # noqa: E402
from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash  # noqa: E402
from vllm.v1.core.sched.async_scheduler import AsyncScheduler  # noqa: E402
from vllm.v1.core.sched.scheduler import Scheduler  # noqa: E402
from vllm.v1.kv_cache_interface import (  # noqa: E402
    FullAttentionSpec,
    KVCacheConfig,
    KVCacheGroupSpec,
)
from vllm.v1.outputs import ModelRunnerOutput  # noqa: E402
from vllm.v1.request import Request  # noqa: E402
from vllm.v1.structured_output import StructuredOutputManager  # noqa: E402

MODEL = Path(__file__).with_name("qwen2.5-7b-instruct")
MAX_MODEL_LEN = 32768


def model_config() -> ModelConfig:
    return ModelConfig(model=str(MODEL), skip_tokenizer_init=True, dtype="bfloat16",
                       max_model_len=MAX_MODEL_LEN)


def scheduler_on(vllm_config: VllmConfig, num_blocks: int, cls=Scheduler):
    """vLLM's scheduler over num_blocks KV blocks of Qwen2.5-7B's 28 full-attention layers
    (4 KV heads of 128), as the engine hands it its KVCacheConfig; every driver builds it so."""
    block_size = vllm_config.cache_config.block_size
    spec = FullAttentionSpec(block_size=block_size, num_kv_heads=4, head_size=128,
                             dtype=vllm_config.model_config.dtype)
    kv_cache_config = KVCacheConfig(
        num_blocks=num_blocks, kv_cache_tensors=[],
        kv_cache_groups=[KVCacheGroupSpec([f"model.layers.{i}.self_attn.attn"
                                           for i in range(28)], spec)],
    )
    vllm_config.cache_config.num_gpu_blocks = num_blocks
    return cls(vllm_config=vllm_config, kv_cache_config=kv_cache_config,
               structured_output_manager=StructuredOutputManager(vllm_config),
               block_size=block_size, log_stats=True)


def build(config: dict, model: ModelConfig):
    block_size = config["block_size"]
    scheduler_config = SchedulerConfig(
        # Without chunked prefill vLLM requires max_model_len <= max_num_batched_tokens
        # (SchedulerConfig.verify_max_model_len); the workloads' requests fit in it.
        max_model_len=(MAX_MODEL_LEN if config["enable_chunked_prefill"]
                       else config["max_num_batched_tokens"]),
        is_encoder_decoder=False,
        max_num_batched_tokens=config["max_num_batched_tokens"],
        max_num_seqs=config["max_num_seqs"],
        long_prefill_token_threshold=config["long_prefill_token_threshold"],
        enable_chunked_prefill=config["enable_chunked_prefill"],
        async_scheduling=config["async_scheduling"],
    )
    cache_config = CacheConfig(block_size=block_size,
                               enable_prefix_caching=config["enable_prefix_caching"])
    # No GPU here, so no platform to infer the device from: name one. The scheduler never
    # touches it.
    vllm_config = VllmConfig(model_config=model, cache_config=cache_config,
                             scheduler_config=scheduler_config,
                             device_config=DeviceConfig(device="cpu"))
    cls = AsyncScheduler if config["async_scheduling"] else Scheduler
    scheduler = scheduler_on(vllm_config, config["num_gpu_blocks"], cls)
    # Qwen2.5 runs the V2 model runner on an RTX 4090 (vllm/config/vllm.py:
    # use_v2_model_runner); without Triton, as here, VllmConfig refuses V2, so the scheduler is
    # given the GPU's answer to the one question it asks of the runner (Scheduler.__init__
    # reads it once).
    scheduler.use_v2_model_runner = True
    return scheduler


def run(workload: dict, model: ModelConfig) -> list[dict]:
    config = workload["config"]
    scheduler = build(config, model)
    hash_fn = get_hash_fn_by_name("sha256")
    init_none_hash(hash_fn)
    block_hasher = get_request_block_hasher(config["block_size"], hash_fn)
    pending = deque(sorted(workload["requests"], key=lambda r: r["arrival_step"]))
    hits = queries = 0
    in_flight: deque = deque()  # (scheduler output, who samples), oldest last
    depth = 2 if config["async_scheduling"] else 1
    steps: list[dict] = []

    def process(output, samples):
        req_ids = list(output.num_scheduled_tokens)
        runner_output = ModelRunnerOutput(
            req_ids=req_ids,
            req_id_to_index={r: i for i, r in enumerate(req_ids)},
            sampled_token_ids=[[-1 - len(scheduler.requests[r].output_token_ids)]
                               if r in samples and r in scheduler.requests else []
                               for r in req_ids],
        )
        engine_outputs = scheduler.update_from_output(output, runner_output)
        done = []
        for outputs in engine_outputs.values():
            done += [o.request_id for o in outputs.outputs if o.finish_reason is not None]
        return done

    # vllm/v1/engine/core.py: EngineCore.step (depth 1) and EngineCore.step_with_batch_queue
    # (depth 2): schedule while there is work; process the oldest batch once the queue is full
    # or nothing is left to schedule. One loop is one step; a request arriving at step s is
    # added before step s is scheduled.
    while pending or scheduler.has_unfinished_requests() or in_flight:
        step = len(steps)
        while pending and pending[0]["arrival_step"] <= step:
            r = pending.popleft()
            scheduler.add_request(Request(
                request_id=r["request_id"], prompt_token_ids=list(r["prompt"]),
                sampling_params=SamplingParams(max_tokens=r["max_tokens"], ignore_eos=True),
                pooling_params=None, block_hasher=block_hasher,
            ))
        scheduled, samples, preempted, finished = [], set(), [], []
        if scheduler.has_unfinished_requests():
            output = scheduler.schedule()
            stats = scheduler.kv_cache_manager.make_prefix_cache_stats()
            hits, queries = hits + stats.hits, queries + stats.queries
            scheduled = list(output.num_scheduled_tokens.items())
            samples = {r for r, _ in scheduled if not scheduler.requests[r].is_prefill_chunk}
            # Preempted requests go to the front of the waiting queue, one by one, and a
            # step that preempts admits nobody: the queue's head is the preempted, last first.
            count = len(output.preempted_req_ids or ())
            preempted = [r.request_id for r in list(scheduler.waiting)[:count]][::-1]
            in_flight.appendleft((output, samples))
            if not scheduled and len(in_flight) == 1:
                raise RuntimeError(f"step {step}: nothing could be scheduled")
        if in_flight and (len(in_flight) == depth
                          or not scheduler.has_unfinished_requests()):
            finished = process(*in_flight.pop())
        steps.append({
            "scheduled": scheduled,
            "preempted": preempted,
            "sampled": sorted(samples),
            "finished": finished,
            "running": [r.request_id for r in scheduler.running],
            "waiting": [r.request_id for r in scheduler.waiting],
            "free_blocks": scheduler.kv_cache_manager.block_pool.get_num_free_blocks(),
            "block_tables": {r.request_id: scheduler.kv_cache_manager.get_block_ids(r.request_id)[0]
                             for r in scheduler.running},
            "hits": hits,
            "queries": queries,
        })
        if len(steps) > 10000:
            raise RuntimeError("more than 10,000 steps")
    # As lesson 3's run(): a last turn that only processes an empty step is no step.
    while steps and not steps[-1]["scheduled"] and not steps[-1]["finished"]:
        steps.pop()
    return steps


def traces(workloads: list[dict]) -> list[list[dict]]:
    model = model_config()
    return [run(w, model) for w in workloads]


def main():
    json.dump(traces(json.load(sys.stdin)), sys.stdout)


if __name__ == "__main__":
    main()
