"""The lesson's stepped figure: four 33-token documents (2 full blocks each, and a last
token the GPU always computes) sent one at a time, on a GPU of 6 usable blocks (2
documents) with a CPU tier of 6 blocks (3 documents, LRU). After each request: where its
tokens came from, and which blocks of each document the GPU and the CPU hold."""

from offload import HIT, OffloadedCache
from prefix_cache import block_hashes

DOCS = {name: list(range(100 * n, 100 * n + 33)) for n, name in enumerate("ABCD")}
ORDER = "ABCADBC"


def holds(cache: OffloadedCache) -> tuple[str, str]:
    """Each document's full blocks in the GPU prefix cache and in the CPU tier."""
    gpu, cpu = [], []
    for name, doc in DOCS.items():
        _, tokens = cache.gpu.lookup(doc)
        on_cpu = sum(cache.cpu.lookup(key) == HIT for key in block_hashes(doc))
        gpu.append(f"{name}{tokens // cache.block_size}" if tokens else "  ")
        cpu.append(f"{name}{on_cpu}" if on_cpu else "  ")
    return " ".join(gpu), " ".join(cpu)


if __name__ == "__main__":
    cache = OffloadedCache(num_gpu_blocks=7, num_cpu_blocks=6)  # block 0 is null
    print("request  GPU hit  CPU hit  recomputed  stored  evicted"
          "   GPU holds    CPU holds")  # fmt: skip
    for number, name in enumerate(ORDER):
        v = cache.visit(f"{name}{number}", DOCS[name])
        gpu, cpu = holds(cache)
        line = (f"{v.request_id:<8} {v.gpu_hit:>7} {v.cpu_hit:>8} {v.recomputed:>11}"
                f" {v.stored:>7} {v.evicted:>8}   {gpu}  {cpu}")  # fmt: skip
        print(line.rstrip())
