"""Every workload the scheduler conformance tests run, in the four engines that vLLM's two
defaults make: lesson 3's workloads (conformance_workloads.py) and lesson 5's, each with lesson
2's block pool and lesson 5's prefix cache as the scheduler's KV cache manager, with async
scheduling off and on. They live here, not in a lesson, because they use lessons 3 and 5."""

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
    "lesson 5: two requests share a prefix at once": (sharing_at_once.WORKLOAD,
                                                      sharing_at_once.CONFIG),
}
RANDOM_PER_MODE = conformance_workloads.RANDOM_PER_MODE


def workloads() -> dict[str, tuple[list, dict, type]]:
    """Every workload by name, in every mode: requests, run()'s settings, the manager."""
    return {
        f"{name} [{mode}]": (requests, {**config, "async_scheduling": flag}, manager)
        for mode, (manager, flag) in MODES.items()
        for name, (requests, config) in conformance_workloads.cases(EDGE_CASES).items()
    }


def as_json(requests: list, config: dict, kv_cache_manager: type) -> dict:
    """The workload as vllm_trace.py reads it, with prefix caching on for PrefixCache."""
    workload = conformance_workloads.as_json(requests, config)
    workload["config"]["enable_prefix_caching"] = kv_cache_manager is PrefixCache
    return workload


def trace(requests: list, config: dict, kv_cache_manager: type) -> list[dict]:
    return conformance_workloads.trace(requests, config, kv_cache_manager)
