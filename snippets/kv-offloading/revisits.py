"""The lab's workload through offload.py: 8 documents of 6,000 tokens, each sent once
and then once more, one request at a time (max_tokens=1), on a GPU whose KV cache
(--kv-cache-memory-bytes 2 GiB) holds 6 of them, with and without a CPU tier. Prints
where each revisit's tokens came from, the blocks copied each way and the time to first
token each revisit would take without and with the tier (estimates: lesson 3's step
time, the copy at reload_vs_recompute's assumed 25 GB/s).

The GPU cache behaves the same with and without the tier (a block loaded from the CPU
is cached on the GPU like one computed there), so one run gives both columns.
"""

from decode_batch import QWEN
from kv_cache_size import GIB
from kv_capacity import BLOCK_SIZE, predict
from offload import OffloadedCache, Visit, cpu_blocks
from reload_vs_recompute import bytes_per_block, reload_seconds
from step_costs import step

MAX_MODEL_LEN = 8192
KV_CACHE_MEMORY_BYTES = 2 * GIB  # --kv-cache-memory-bytes: an exact block count
NUM_GPU_BLOCKS = predict(QWEN.model, KV_CACHE_MEMORY_BYTES, MAX_MODEL_LEN).num_blocks
DOC_TOKENS = 6000
FIRST_TOKEN = 10_000  # ordinary Qwen2.5 token ids, distinct in every document
DOCS = [
    list(range(FIRST_TOKEN + DOC_TOKENS * d, FIRST_TOKEN + DOC_TOKENS * (d + 1)))
    for d in range(8)
]
VISITS = [
    (f"{rnd}-doc{d}", doc) for rnd in ("first", "again") for d, doc in enumerate(DOCS)
]
OFFLOADING_SIZE_GIB = 4  # the lab's --kv-offloading-size


def run(size_gib: float, policy: str = "lru") -> list[Visit]:
    blocks = cpu_blocks(size_gib, bytes_per_block())
    cache = OffloadedCache(NUM_GPU_BLOCKS, blocks, policy)
    return [cache.visit(request_id, prompt) for request_id, prompt in VISITS]


def ttft(visit: Visit) -> tuple[float, float]:
    """Estimated seconds to the first token without the tier (compute what the GPU
    cache misses) and with it (reload the CPU hit, compute the rest)."""
    alone = visit.prompt_tokens - visit.gpu_hit
    without = step({"r": alone}, {"r": visit.gpu_hit})
    done = visit.prompt_tokens - visit.recomputed
    tier = reload_seconds(visit.cpu_hit) + step({"r": visit.recomputed}, {"r": done})
    return without, tier


if __name__ == "__main__":
    print(f"GPU: {NUM_GPU_BLOCKS:,} blocks (one is vLLM's null block); a document"
          f" takes {DOC_TOKENS // BLOCK_SIZE} blocks")  # fmt: skip
    visits = run(OFFLOADING_SIZE_GIB)
    print(f"--kv-offloading-size {OFFLOADING_SIZE_GIB}, LRU: the revisits")
    print("request      GPU hit  CPU hit  recomputed  loaded  TTFT without  with tier")
    for v in visits[len(DOCS) :]:
        without, tier = ttft(v)
        print(f"{v.request_id:<11} {v.gpu_hit:>8,} {v.cpu_hit:>8,} {v.recomputed:>11,}"
              f" {v.loaded:>7} {without * 1000:>10.0f} ms"
              f" {tier * 1000:>7.0f} ms")  # fmt: skip
    print("estimates: the TTFT columns (lesson 3's step time, 25 GB/s copies)")
    print("tier      policy  GPU hit  CPU hit  recomputed  stored  loaded  failed")
    for size in (1, 2, OFFLOADING_SIZE_GIB):
        for policy in ("lru", "arc"):
            vs = run(size, policy)
            print(f"{size} GiB    {policy:<6} {sum(v.gpu_hit for v in vs):>8,}"
                  f" {sum(v.cpu_hit for v in vs):>8,}"
                  f" {sum(v.recomputed for v in vs):>11,}"
                  f" {sum(v.stored for v in vs):>7,} {sum(v.loaded for v in vs):>7,}"
                  f" {sum(v.store_failed for v in vs):>7}")  # fmt: skip
    moved = sum(v.stored + v.loaded for v in visits) * bytes_per_block()
    print(
        f"{OFFLOADING_SIZE_GIB} GiB, LRU: {moved / GIB:.2f} GiB copied over PCIe"
        " for 16 requests"
    )
