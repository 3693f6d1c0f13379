"""vLLM's side of lesson 9's conformance test: vLLM 0.26.0's own CPUOffloadingManager
(vllm/v1/kv_offload/cpu/manager.py), with its LRU or ARC policy, runs the calls of each
case and records what every call returned and the manager's state after it. Run by
test_kv-offloading_conformance.py in the conformance venv (torch CPU + the pinned wheel):

    python kv_offloading_vllm_side.py < cases.json > results.json

A case is {"policy": "lru"|"arc", "num_blocks": N, "calls": [[name, keys], ...]} with
keys as hex strings; a call is lookup (one key), prepare_load, touch, complete_load,
prepare_store, complete_store, complete_store_failed, stats or events.
"""

import json
import os
import sys

# vLLM's own logging writes to stdout, where the results go: leave Python's default (stderr).
os.environ["VLLM_CONFIGURE_LOGGING"] = "0"

from vllm.v1.kv_offload.base import OffloadKey, ReqContext
from vllm.v1.kv_offload.cpu.common import CPUOffloadingMetrics
from vllm.v1.kv_offload.cpu.manager import CPUOffloadingManager
from vllm.v1.kv_offload.cpu.policies.arc import ARCCachePolicy

CONTEXT = ReqContext(req_id="r")


def hexes(keys) -> list[str]:
    return [bytes(key).hex() for key in keys]


def state(manager: CPUOffloadingManager) -> dict:
    """The policy's lists in their order, the free block ids, the counters."""
    policy = manager._policy
    if isinstance(policy, ARCCachePolicy):
        lists = {name: hexes(getattr(policy, name)) for name in ("t1", "t2", "b1", "b2")}
        lists["target_t1_size"] = policy.target_t1_size
    else:
        lists = {"blocks": sorted(hexes(policy.blocks)),
                 "evictable": hexes(policy.evictable_blocks)}
    ids = {bytes(k).hex(): manager._policy.get(k).block_id for k in _held(manager)}
    return {**lists, "block_ids": ids, "free_list": list(manager._free_list),
            "allocated": manager._num_allocated_blocks,
            "evictable_count": manager._num_evictable_cache_blocks,
            "write_pending": manager._num_write_pending_blocks}


def _held(manager: CPUOffloadingManager):
    policy = manager._policy
    if isinstance(policy, ARCCachePolicy):
        return [*policy.t1, *policy.t2]
    return list(policy.blocks)


def call(manager: CPUOffloadingManager, name: str, keys: list[bytes]):
    if name == "lookup":
        return manager.lookup(keys[0], CONTEXT).name
    if name == "prepare_load":
        return [int(i) for i in manager.prepare_load(keys, CONTEXT).block_ids]
    if name == "touch":
        return manager.touch(keys, CONTEXT)
    if name == "complete_load":
        return manager.complete_load(keys, CONTEXT)
    if name == "prepare_store":
        out = manager.prepare_store(keys, CONTEXT)
        if out is None:
            return None
        return {"keys_to_store": hexes(out.keys_to_store),
                "block_ids": [int(i) for i in out.store_spec.block_ids],
                "evicted_keys": hexes(out.evicted_keys)}
    if name in ("complete_store", "complete_store_failed"):
        return manager.complete_store(keys, CONTEXT, success=name == "complete_store")
    if name == "events":
        return [["removed" if e.removed else "stored", hexes(e.keys), e.medium]
                for e in manager.take_events()]
    if name == "stats":
        values = manager.get_stats().data["data"]
        return {"usage": values[CPUOffloadingMetrics.CPU_CACHE_USAGE_PERC][()],
                "write_usage": values[CPUOffloadingMetrics.CPU_CACHE_WRITE_USAGE_PERC][()],
                "read_usage": values[CPUOffloadingMetrics.CPU_CACHE_READ_USAGE_PERC][()],
                "allocation_sizes": values.get(CPUOffloadingMetrics.CPU_ALLOCATION_SIZE,
                                               {}).get((), [])}
    raise ValueError(f"unknown call {name!r}")


def run(case: dict) -> list:
    manager = CPUOffloadingManager(case["num_blocks"], case["policy"], enable_events=True)
    steps = []
    for name, keys in case["calls"]:
        try:
            result = call(manager, name, [OffloadKey(bytes.fromhex(k)) for k in keys])
        except AssertionError as refused:  # vLLM's own checks (a load of an absent block...)
            steps.append({"result": f"vLLM refused the call: {refused}", "state": None})
            break  # the lesson's manager accepted it: the comparison stops at this call
        steps.append({"result": result, "state": state(manager)})
    return steps


if __name__ == "__main__":
    json.dump([run(case) for case in json.load(sys.stdin)], sys.stdout)
