"""What each GPU holds of Qwen2.5-7B-Instruct, layout after layout: GPUs side by side,
TP ranks across, PP stages down. Heads and vocabulary rows are numbered as vLLM slices
them: rank r of TP n holds the r-th n-th (QKVParallelLinear; a replicated KV head sits
on tp / kv_heads neighbouring ranks: shard_rank = tp_rank // num_kv_head_replicas).
"vocab": the rows of the embedding and of lm_head; "embed", "lm_head": one of them."""

from hf_config import read_presets
from kv_cache_size import GIB
from tp_memory import kv_head_replicas, layout

QWEN = read_presets()["Qwen2.5-7B-Instruct"].config
SMALL = read_presets()["Qwen2.5-1.5B-Instruct"].config  # 12 heads, 2 KV heads
WIDTH = 23


def cells(config: dict, tp: int, pp: int) -> list[list[str]]:
    """For each GPU (stage by stage), the lines of its box."""
    kv, heads = config["num_key_value_heads"], config["num_attention_heads"]
    copies = kv_head_replicas(kv, tp)
    boxes = []
    for r in layout(config, tp, pp):
        n = r.heads
        first_kv = r.tp_rank // copies if copies > 1 else r.tp_rank * r.kv_heads
        first, last = r.pp_rank == 0, r.pp_rank == pp - 1
        table = {(True, True): "vocab", (True, False): "embed"}.get(
            (first, last), "lm_head"
        )
        rows = f"{r.tp_rank * r.vocab_rows}-{(r.tp_rank + 1) * r.vocab_rows - 1}"
        kv_text = (
            f"KV head {first_kv}" + (f", {copies} copies" if copies > 1 else "")
            if r.kv_heads == 1
            else f"KV heads {first_kv}-{first_kv + r.kv_heads - 1}"
        )
        boxes.append([
            f"GPU {r.pp_rank * tp + r.tp_rank}",
            f"layers {r.layers[0]}-{r.layers[1] - 1}",
            f"heads {r.tp_rank * n}-{r.tp_rank * n + n - 1} of {heads}",
            kv_text,
            f"{table} {rows}",
            f"{r.weight_bytes / GIB:.2f} GiB",
        ])  # fmt: skip
    return boxes


def picture(config: dict, tp: int, pp: int) -> str:
    boxes = cells(config, tp, pp)
    rows = []
    for stage in range(pp):
        group = boxes[stage * tp : (stage + 1) * tp]
        for line in zip(*group):
            rows.append(" | ".join(f"{text:<{WIDTH}}" for text in line).rstrip())
        rows.append("")
    return "\n".join(rows)


if __name__ == "__main__":
    for step, (tp, pp) in enumerate(((1, 1), (2, 1), (4, 1), (1, 2), (2, 2)), 1):
        print(f"step {step}: TP {tp} x PP {pp} = {tp * pp} GPU(s)")
        print(picture(QWEN, tp, pp))
    print("step 6: Qwen2.5-1.5B-Instruct, TP 4: more GPUs than KV heads")
    print(picture(SMALL, 4, 1).rstrip("\n"))
