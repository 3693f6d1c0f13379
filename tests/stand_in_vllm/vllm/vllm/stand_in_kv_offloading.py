"""Lesson 9 in the stand-in: the CPU tier that --kv-offloading-size (LLM(kv_offloading_size=))
adds, in the stand-in's own terms (a block is known by the whole prefix of token ids it ends,
as in stand_in.PrefixIndex), with vLLM 0.26.0's rules for the default native backend and LRU
policy:

- size: cpu_bytes_to_use = size * 2**30 (vllm/config/vllm.py:
  VllmConfig._post_init_kv_transfer_config) over one block's bytes in all layers
  (vllm/v1/kv_offload/cpu/spec.py: CPUOffloadingSpec), rounded down;
- lookup: from the first block the GPU missed, the blocks the tier holds in a row, all of
  them or nothing if less than a block (OffloadingConnectorScheduler._lookup); a whole-prompt
  hit computes its last token again (Scheduler._update_waiting_for_remote_kv);
- touch: all the prompt's held blocks, last first (LRUCachePolicy.touch);
- store: the prompt's full blocks past those loaded, when the request is admitted
  (_build_store_jobs stores blocks as the step that computes them is scheduled;
  offload_prompt_only), evicting the least recently used ones not being stored, none if too
  few (CPUOffloadingManager.prepare_store);
- counters: the connector's lookups, vllm:external_prefix_cache_queries (the tokens past the
  GPU's hit) and vllm:external_prefix_cache_hits (the tokens loaded), in tokens
  (Scheduler.schedule, connector_prefix_cache_stats).
Not modelled: the load's extra engine step and its copy time, a store's asynchrony (a block is
readable at once), prompts computed over several steps, ARC (the extra config is not read).
"""

from __future__ import annotations

from collections import OrderedDict

from vllm import stand_in

EXTERNAL_QUERIES = "vllm:external_prefix_cache_queries"
EXTERNAL_HITS = "vllm:external_prefix_cache_hits"
# PrometheusStatLogger.__init__: counter_connector_prefix_cache_queries, _hits
COUNTER_HELP = {
    EXTERNAL_QUERIES: "External prefix cache queries from KV connector cross-instance cache"
                      " sharing, in terms of number of queried tokens.",
    EXTERNAL_HITS: "External prefix cache hits from KV connector cross-instance cache sharing,"
                   " in terms of number of cached tokens.",
}


class CpuTier:
    def __init__(self, num_blocks: int, block_size: int):
        self.num_blocks, self.block_size = num_blocks, block_size
        self.held: OrderedDict[tuple[int, ...], None] = OrderedDict()  # LRU first
        self.queries = self.hits = 0  # this step's, in tokens

    def prefixes(self, prompt: list[int]) -> list[tuple[int, ...]]:
        size = self.block_size
        return [tuple(prompt[:end]) for end in range(size, len(prompt) + 1, size)]

    def admit(self, request, gpu_tokens: int, log_stats: bool) -> int:
        """The tokens a new request starts from: the GPU's hit and the tier's. Touches its
        blocks, counts the lookup and stores the blocks it will compute."""
        prompt = request.prompt_token_ids + request.output_token_ids
        blocks = self.prefixes(prompt)
        start, hits = gpu_tokens // self.block_size, 0
        if len(blocks) * self.block_size - gpu_tokens >= self.block_size:
            for prefix in blocks[start:]:
                if prefix not in self.held:
                    break
                hits += 1
        loaded = hits * self.block_size
        for prefix in reversed(blocks):
            if prefix in self.held:
                self.held.move_to_end(prefix)
        if log_stats and not request.num_preemptions:
            self.queries += request.num_tokens - gpu_tokens
            self.hits += loaded
        self._store(blocks[start + hits:] if hits else blocks)
        return min(gpu_tokens + loaded, request.num_tokens - 1)

    def _store(self, blocks: list[tuple[int, ...]]) -> None:
        new = [prefix for prefix in blocks if prefix not in self.held]
        evict = len(new) - (self.num_blocks - len(self.held))
        storing = set(blocks)
        idle = [prefix for prefix in self.held if prefix not in storing]
        if evict > len(idle):
            return  # "cannot store chunks": nothing is stored
        for prefix in idle[:max(0, evict)]:
            del self.held[prefix]
        for prefix in new:
            self.held[prefix] = None

    def take_stats(self) -> tuple[int, int]:
        counts, self.queries, self.hits = (self.queries, self.hits), 0, 0
        return counts


def tier(engine, prefix_index) -> CpuTier:
    """The CPU tier of an engine started with kv_offloading_size."""
    size = engine.options["kv_offloading_size"]
    if prefix_index is None:
        raise stand_in.StandInError(
            "the stand-in models the CPU tier only with enable_prefix_caching=True written out"
            " (its GPU prefix cache, stand_in.PrefixIndex, is modelled only then)")
    arch = stand_in.architecture(engine.model)
    dtype_bytes = stand_in.KV_CACHE_DTYPE_BYTES[engine.options["kv_cache_dtype"]]
    per_block = (2 * arch.num_layers * arch.num_kv_heads * arch.head_dim
                 * (dtype_bytes or arch.dtype_bytes) * engine.block_size)
    return CpuTier(int(size * stand_in.GIB) // per_block, engine.block_size)
