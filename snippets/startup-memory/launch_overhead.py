"""When the CPU's kernel launches, rather than the GPU, set the time of a decode step
(batch 1, eager mode): the CPU's time to launch one step's kernels one by one against
the GPU's floor for that step. The GPU floor is lesson 4's model
(quant_memory.decode_floor_ms: every weight read once at 1008 GB/s, bf16, 1,024 tokens
of KV); the kernel count and the CPU's time per launch are ESTIMATES.

Launches are asynchronous: while the CPU needs less time per step than the GPU, it runs
ahead and the GPU never waits for it; the CPU's time is then hidden, not saved. When it
needs more, the GPU idles between kernels and the step takes the CPU's time. A CUDA
graph replaces a step's hundreds of launches by one replay.
"""

from hf_config import read_presets
from quant_memory import decode_floor_ms

KERNELS_PER_LAYER_ESTIMATE = (
    15  # norms, QKV, RoPE, KV write, attention, o_proj, MLP, adds
)
KERNELS_OUTSIDE_ESTIMATE = 10  # embedding, final norm, lm_head, sampling: rough
LAUNCH_US_ESTIMATE = 10.0  # CPU microseconds per kernel in eager PyTorch: rough
CONTEXT = 1024  # tokens of KV the sequence has read so far


def kernels_per_step(preset_name: str) -> int:
    """An ESTIMATE of the kernels one eager decode step launches."""
    presets = read_presets()
    if preset_name not in presets:
        raise ValueError(f"unknown preset {preset_name!r}; see model_presets.json")
    layers = presets[preset_name].config["num_hidden_layers"]
    return layers * KERNELS_PER_LAYER_ESTIMATE + KERNELS_OUTSIDE_ESTIMATE


def eager_cpu_ms(preset_name: str) -> float:
    """An ESTIMATE of the CPU's milliseconds to launch one eager decode step."""
    return kernels_per_step(preset_name) * LAUNCH_US_ESTIMATE / 1000


def gpu_floor_ms(preset_name: str) -> float:
    """Lesson 4's floor of one bf16 decode step at batch 1."""
    return decode_floor_ms(preset_name, "bf16", 1, CONTEXT)


if __name__ == "__main__":
    print("batch 1, bf16, eager: who sets the step's time (estimates but the floor)")
    print("model                  kernels  CPU ms  GPU floor ms  bound by")
    for name in (
        "Qwen2.5-0.5B-Instruct",
        "Qwen2.5-1.5B-Instruct",
        "Qwen2.5-7B-Instruct",
    ):
        cpu, gpu = eager_cpu_ms(name), gpu_floor_ms(name)
        bound = "the CPU's launches" if cpu > gpu else "the GPU (CPU runs ahead)"
        print(
            f"{name:22} {kernels_per_step(name):>7} {cpu:>7.2f} {gpu:>13.2f}  {bound}"
        )
