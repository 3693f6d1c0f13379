"""Three self-test answers: Qwen2.5-72B's 80 layers over 3 pipeline stages, the experts
GPU 3 holds of Qwen3-30B-A3B at EP 8, and whether Qwen2.5-32B fits on two RTX 4090s."""

from expert_parallel import MOE_PRESETS, expert_map, held, spans
from hf_config import read_presets
from kv_cache_size import GIB
from tp_budget import gpu_budget
from tp_memory import layout, pp_indices

print("72B, PP 3:", [pp_indices(80, stage, 3) for stage in range(3)])
experts = read_presets(MOE_PRESETS)["Qwen3-30B-A3B"].config["num_experts"]
print("EP 8, GPU 3 holds experts", spans(held(expert_map(8, 3, experts), experts)))
qwen32 = read_presets()["Qwen2.5-32B-Instruct"].config
print(
    f"32B, TP 2: {layout(qwen32, 2)[0].weight_bytes / GIB:.2f} GiB of weights per GPU"
)
try:
    gpu_budget("Qwen2.5-32B-Instruct", 2)
except ValueError as error:
    print("  ", str(error).split(";")[0])
