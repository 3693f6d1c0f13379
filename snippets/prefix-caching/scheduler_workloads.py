"""Every workload the scheduler conformance tests run against vLLM, in the four engines
vLLM's two defaults make: lesson 3's workloads (conformance_workloads.py) and this
lesson's, each with lesson 2's block pool and this lesson's prefix cache as the
scheduler's KV cache manager, with async scheduling off and on."""

import conformance_workloads
import sharing_at_once
from block_pool import BlockPool
from prefix_cache import PrefixCache

# Mode -> the KV cache manager the scheduler is handed, and run()'s async_scheduling.
MODES = {
    "sync": (BlockPool, False),
    "sync+prefix caching": (PrefixCache, False),
    "async": (BlockPool, True),
    "async+prefix caching (vLLM's defaults)": (PrefixCache, True),
}
EDGE_CASES = {
    **conformance_workloads.EDGE_CASES,
    # B hits the blocks A has filled while A still computes its prompt.
    "lesson 5: two requests share a prefix at once": (
        sharing_at_once.WORKLOAD,
        sharing_at_once.CONFIG,
    ),
}
RANDOM_PER_MODE = conformance_workloads.RANDOM_PER_MODE


def workloads() -> dict[str, tuple[list, dict, type]]:
    """Every workload by name, in every mode: requests, settings, the manager."""
    return {
        f"{name} [{mode}]": (requests, {**config, "async_scheduling": flag}, manager)
        for mode, (manager, flag) in MODES.items()
        for name, (requests, config) in conformance_workloads.cases(EDGE_CASES).items()
    }


def as_json(requests: list, config: dict, kv_cache_manager: type) -> dict:
    """The workload as vllm_trace.py reads it, prefix caching on for PrefixCache."""
    workload = conformance_workloads.as_json(requests, config)
    workload["config"]["enable_prefix_caching"] = kv_cache_manager is PrefixCache
    return workload


def trace(requests: list, config: dict, kv_cache_manager: type) -> list[dict]:
    return conformance_workloads.trace(requests, config, kv_cache_manager)


if __name__ == "__main__":
    found = workloads()
    traces = {name: trace(*workload) for name, workload in found.items()}
    steps = sum(len(t) for t in traces.values())
    print(f"{len(EDGE_CASES)} edge cases and {RANDOM_PER_MODE} random workloads,")
    print(f"in {len(MODES)} modes: {len(found):,} workloads, {steps:,} engine steps")
    for mode in MODES:
        runs = [t for name, t in traces.items() if name.endswith(f"[{mode}]")]
        preempting = sum(any(step["preempted"] for step in t) for t in runs)
        hitting = sum(any(step["hits"] for step in t) for t in runs)
        print(f"  {mode}: {preempting} preempt, {hitting} hit the prefix cache")
