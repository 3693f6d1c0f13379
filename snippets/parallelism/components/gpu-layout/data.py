"""What the GPU layout component computes with, from the lesson's code: each model's
config.json (the presets), its linear weights (lesson 1's count), its activation
estimate (lesson 8), the card, the links of tp_comm.py and the settings of tp_budget.py.
The split itself is tp_memory.js, tp_memory.py's twin; script.js adds the budget and
the wire as tp_budget.py and tp_comm.py do. parity.py reads the same from here.

The fence holds the state the component opens in: model, tp, pp, batch and
gpu_memory_utilization.
"""

from dataclasses import asdict

from decode_batch import BANDWIDTH, PEAK_BF16
from hf_config import read_presets
from kv_cache_size import GIB
from kv_capacity import GPU_GIB
from model_weights import count
from startup_budget import CONTEXT_ESTIMATE, NON_TORCH_ESTIMATE, activation_estimate
from tp_budget import MAX_MODEL_LEN, MAX_NUM_BATCHED_TOKENS, MAX_NUM_SEQS
from tp_comm import LINKS

MODELS = ("Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct", "Qwen2.5-72B-Instruct")
# The TP sizes the menu offers: those the conformance test asks vLLM about, refused
# ones included; the PP sizes up to 8 stages.
TPS = (1, 2, 3, 4, 5, 6, 7, 8, 16)
PPS = tuple(range(1, 9))
# Each sequence's context in a decode step, as tp_comm.py's table has it.
CONTEXT = 1024
# A link's limits for the two typed fields: a decode batch up to max_num_seqs, and the
# share of each card.
LIMITS = {"batch": (1, MAX_NUM_SEQS), "gpu_memory_utilization": (0.5, 0.99)}
FIELDS = ("model", "tp", "pp", "batch", "gpu_memory_utilization")


def defaults(options: dict) -> dict[str, str]:
    """The fence's state, each value as a link holds it; ValueError for a fence that
    does not hold one of each field, or holds a value the menus or limits refuse."""
    if set(options) != set(FIELDS):
        raise ValueError(f"the gpu-layout fence holds {', '.join(FIELDS)}")
    state = {name: str(options[name]) for name in FIELDS}
    if state["model"] not in MODELS:
        raise ValueError(f"model: one of {', '.join(MODELS)}")
    if int(state["tp"]) not in TPS or int(state["pp"]) not in PPS:
        raise ValueError(f"tp: one of {TPS}; pp: one of {PPS}")
    least, most = LIMITS["batch"]
    if not least <= int(state["batch"]) <= most:
        raise ValueError(f"batch: {least} to {most}")
    least, most = LIMITS["gpu_memory_utilization"]
    if not least <= float(state["gpu_memory_utilization"]) <= most:
        raise ValueError(f"gpu_memory_utilization: {least} to {most}")
    return state


def data(options: dict) -> dict:
    presets = read_presets()
    return {
        "defaults": defaults(options),
        "models": {
            name: {
                "config": presets[name].config,
                "linear": count(presets[name].config).linear,
                "activation": activation_estimate(
                    name, MAX_NUM_BATCHED_TOKENS, MAX_NUM_SEQS
                ),
            }
            for name in MODELS
        },
        "tps": TPS,
        "pps": PPS,
        "limits": LIMITS,
        "total": int(GPU_GIB * GIB),
        "non_torch": int(NON_TORCH_ESTIMATE),
        "context_memory": int(CONTEXT_ESTIMATE),
        "max_model_len": MAX_MODEL_LEN,
        "context": CONTEXT,
        "bandwidth": BANDWIDTH,
        "peak": PEAK_BF16,
        "links": {
            "pcie": asdict(LINKS["PCIe 4.0, no P2P"]),
            "nvlink": asdict(LINKS["NVLink"]),
        },
    }
