"""vLLM's side of lesson 12's conformance test: vLLM 0.26.0's own Scheduler
(vllm/v1/core/sched/scheduler.py) with the scheduler half of a real KV connector from the
wheel, NixlConnector (NixlPullConnector's scheduler, vllm/distributed/kv_transfer/
kv_connector/v1/nixl/pull_scheduler.py) or ExampleConnector (example_connector.py), built
by KVConnectorFactory from a real KVTransferConfig, on the CPU. Run by
test_disaggregation_conformance.py in the conformance venv (torch CPU + the pinned wheel):

    python disaggregation_vllm_side.py < cases.json > results.json

The engine core is driven as vllm/v1/engine/core.py: EngineCore.step drives it (sync: each
step's output is processed before the next is scheduled). The model runner and the
connector's worker half are the only things played: every request whose chunk reaches the
end of its known tokens samples token id 7, and the worker reports a request's KV as
received (KVConnectorOutput.finished_recving) or sent (finished_sending) with the output
of the step the case names. The worker half cannot run here: NixlConnector's moves GPU
memory through the NIXL library (not installed; its scheduler half logs "NIXL is not
available" and runs on), and ExampleConnector's copies tensors of a real KV cache.

A case: {"connector", "role" ("kv_consumer"|"kv_producer"), "block_size",
"num_gpu_blocks", "budget", "chunk" (long_prefill_token_threshold, optional), "warm":
[prompt, ...] (run to completion first, without kv_transfer_params: the decode
instance's own prefix cache), "requests": [{"id",
"prompt", "max_tokens", "arrival", "done_step"}]}; for ExampleConnector, "stored": the
prompts whose KV a producer saved to the shared folder. Result per case: per step, the
tokens scheduled per request, each request's status and num_computed_tokens, the free
blocks; the kv_transfer_params each finished request returned; and for "config" cases,
what KVTransferConfig does with a connector and a role.
"""

import json
import os
import sys
import tempfile
import traceback

# vLLM's own logging writes to stdout, where the results go: leave Python's default (stderr).
os.environ["VLLM_CONFIGURE_LOGGING"] = "0"
os.environ.setdefault("PYTHONHASHSEED", "0")

import torch  # noqa: E402
from vllm.config import (  # noqa: E402
    CacheConfig,
    DeviceConfig,
    KVTransferConfig,
    ModelConfig,
    SchedulerConfig,
    VllmConfig,
)
from vllm.sampling_params import SamplingParams  # noqa: E402
from vllm.utils.hashing import get_hash_fn_by_name  # noqa: E402
from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash  # noqa: E402
from vllm.v1.core.sched.scheduler import Scheduler  # noqa: E402
from vllm.v1.outputs import KVConnectorOutput, ModelRunnerOutput  # noqa: E402
from vllm.v1.request import Request  # noqa: E402
from vllm_trace import MODEL, scheduler_on  # noqa: E402

MAX_MODEL_LEN = 4096
MAX_NUM_SEQS = 16  # the cases' budgets are at least this (SchedulerConfig refuses less)
# What a proxy hands the decode instance: the fields NixlPullConnectorScheduler checks
# (get_num_new_matched_tokens, update_state_after_alloc) with made-up addresses.
REMOTE_PREFILL = {"do_remote_prefill": True, "remote_block_ids": [[1]],
                  "remote_engine_id": "prefill-0",
                  "remote_request_id": "p", "remote_host": "127.0.0.1", "remote_port": 5600}


def build(case: dict, model: ModelConfig, storage: str) -> Scheduler:
    block_size = case["block_size"]
    scheduler_config = SchedulerConfig(
        max_model_len=MAX_MODEL_LEN, is_encoder_decoder=False,
        max_num_batched_tokens=case["budget"], max_num_seqs=MAX_NUM_SEQS,
        long_prefill_token_threshold=case.get("chunk", 0),
        enable_chunked_prefill=True, async_scheduling=False)
    kv_transfer = KVTransferConfig(
        kv_connector=case["connector"], kv_role=case["role"],
        kv_connector_extra_config={"shared_storage_path": storage})
    vllm_config = VllmConfig(model_config=model,
                             cache_config=CacheConfig(block_size=block_size,
                                                      enable_prefix_caching=True),
                             scheduler_config=scheduler_config,
                             device_config=DeviceConfig(device="cpu"),
                             kv_transfer_config=kv_transfer)
    return scheduler_on(vllm_config, case["num_gpu_blocks"])


def step(scheduler: Scheduler, recving=(), sending=()) -> tuple[dict, dict]:
    """One EngineCore.step: schedule, play the runner, process the output."""
    output = scheduler.schedule()
    req_ids = list(output.num_scheduled_tokens)
    samples = [[7] if not scheduler.requests[r].is_prefill_chunk else [] for r in req_ids]
    connector_output = KVConnectorOutput(finished_recving=set(recving) or None,
                                         finished_sending=set(sending) or None)
    runner_output = ModelRunnerOutput(
        req_ids=req_ids, req_id_to_index={r: i for i, r in enumerate(req_ids)},
        sampled_token_ids=samples, kv_connector_output=connector_output)
    engine_outputs = scheduler.update_from_output(output, runner_output)
    params = {o.request_id: o.kv_transfer_params for outputs in engine_outputs.values()
              for o in outputs.outputs if o.finish_reason is not None}
    return dict(output.num_scheduled_tokens), params


def run(case: dict, model: ModelConfig) -> dict:
    hash_fn = get_hash_fn_by_name("sha256")
    init_none_hash(hash_fn)
    block_hasher = get_request_block_hasher(case["block_size"], hash_fn)
    with tempfile.TemporaryDirectory() as storage:
        scheduler = build(case, model, storage)
        for prompt in case.get("stored", []):  # a producer saved this prompt's KV
            folder_tokens = prompt[:align(len(prompt) - 1, case["block_size"])]
            scheduler.connector._generate_foldername_debug(
                torch.tensor(folder_tokens), [], create_folder=True)
        for i, prompt in enumerate(case.get("warm", [])):  # the instance's own cache
            scheduler.add_request(Request(
                request_id=f"warm{i}", prompt_token_ids=list(prompt),
                sampling_params=SamplingParams(max_tokens=1, ignore_eos=True),
                pooling_params=None, block_hasher=block_hasher))
            while scheduler.has_unfinished_requests():
                step(scheduler)
        requests = {}
        steps, params = [], {}
        pending = sorted(case["requests"], key=lambda r: r["arrival"])
        while pending or scheduler.has_requests():
            now = len(steps)
            while pending and pending[0]["arrival"] <= now:
                r = pending.pop(0)
                extra = {}
                if case["connector"] == "NixlConnector":
                    extra = ({"kv_transfer_params": dict(REMOTE_PREFILL)}
                             if case["role"] == "kv_consumer"
                             else {"kv_transfer_params": {"do_remote_decode": True}})
                request = Request(
                    request_id=r["id"], prompt_token_ids=list(r["prompt"]),
                    sampling_params=SamplingParams(max_tokens=r["max_tokens"],
                                                   ignore_eos=True, extra_args=extra),
                    pooling_params=None, block_hasher=block_hasher)
                requests[r["id"]] = (request, r)
                scheduler.add_request(request)
            done = [i for i, (_, r) in requests.items() if r.get("done_step") == now]
            recving = done if case["role"] == "kv_consumer" else ()
            sending = done if case["role"] == "kv_producer" else ()
            scheduled, finished = step(scheduler, recving, sending)
            params.update({i: shape(p) for i, p in finished.items()})
            steps.append({
                "scheduled": scheduled,
                "status": {i: req.status.name for i, (req, _) in requests.items()
                           if i in scheduler.requests},
                "computed": {i: req.num_computed_tokens for i, (req, _) in requests.items()
                             if i in scheduler.requests},
                "free_blocks": scheduler.kv_cache_manager.block_pool.get_num_free_blocks(),
            })
            if now > 500:
                raise RuntimeError("more than 500 steps")
        return {"steps": steps, "params": params}


def shape(params: dict | None):
    """What the test compares of a finished request's kv_transfer_params."""
    if params is None:
        return None
    return {"do_remote_prefill": params["do_remote_prefill"],
            "do_remote_decode": params["do_remote_decode"],
            "blocks": len(params["remote_block_ids"][0]),
            "remote_num_tokens": params["remote_num_tokens"]}


def align(num_tokens: int, block_size: int) -> int:
    """vllm/distributed/kv_transfer/kv_connector/v1/example_connector.py:
    align_to_block_size, imported rather than restated."""
    from vllm.distributed.kv_transfer.kv_connector.v1.example_connector import (
        align_to_block_size,
    )
    return align_to_block_size(num_tokens, block_size)


def config(case: dict):
    """What KVTransferConfig (vllm/config/kv_transfer.py) makes of a connector and role:
    its is_kv_producer/is_kv_consumer, or the error it raises."""
    try:
        made = KVTransferConfig(kv_connector=case["kv_connector"], kv_role=case["kv_role"])
    except Exception as error:  # pydantic wraps the ValueError of __post_init__
        return {"error": type(error).__name__}
    return {"producer": made.is_kv_producer, "consumer": made.is_kv_consumer,
            "transfer": made.is_kv_transfer_instance}


def results(cases: list[dict]) -> list:
    """Each case's result, or {"failed": its traceback}: one case's failure fails only
    its own test."""
    model = ModelConfig(model=str(MODEL), skip_tokenizer_init=True, dtype="bfloat16",
                        max_model_len=MAX_MODEL_LEN)
    out = []
    for case in cases:
        try:
            out.append(config(case) if "kv_role" in case else run(case, model))
        except Exception:
            out.append({"failed": traceback.format_exc()})
    return out


if __name__ == "__main__":
    json.dump(results(json.load(sys.stdin)), sys.stdout)
