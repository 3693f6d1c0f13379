"""The scheduler timeline starts from one of the lesson's worked traces: data.py gives
script.js their workloads and settings as link values, and the limits a link must keep.
parity.py reads the same limits from here."""

import long_prompt
import preemption
import short_prompts
from block_pool import BLOCK_SIZE
from coursekit.components import fence_choice

# The lesson's worked traces, in the page's order: the buttons that load them.
PRESETS = {
    "short_prompts": short_prompts,
    "long_prompt": long_prompt,
    "preemption": preemption,
}
# What a link may hold (least, most). Anything else falls back to the fence's trace.
LIMITS = {
    "max_num_batched_tokens": (1, 8192),
    "max_num_seqs": (1, 256),
    "num_gpu_blocks": (2, 100000),  # or empty: enough blocks that none runs out
    "block_size": (1, 64),
    "long_prefill_token_threshold": (0, 8192),
    "requests": (1, 8),
    "prompt_tokens": (1, 4096),
    "max_tokens": (1, 1024),
    "arrival_step": (0, 100),
    "steps": (1, 1000),  # a longer run is refused: the timeline shows every step
}
# The settings a link holds, in the order of the form (and of the page's note).
SETTINGS = (
    "max_num_batched_tokens",
    "max_num_seqs",
    "num_gpu_blocks",
    "block_size",
    "long_prefill_token_threshold",
    "enable_chunked_prefill",
)


def encode(workload) -> str:
    """A workload as a link writes it: NAME:PROMPT:MAX_TOKENS:ARRIVAL, with commas."""
    return ",".join(
        f"{r.request_id}:{r.prompt_tokens}:{r.max_tokens}:{r.arrival_step}"
        for r in workload
    )


def state(module) -> dict[str, str]:
    """A worked trace as a link: every setting, the defaults of simulate() where its
    CONFIG says nothing."""
    config = {
        "num_gpu_blocks": None,
        "block_size": BLOCK_SIZE,
        "long_prefill_token_threshold": 0,
        "enable_chunked_prefill": True,
    }
    config |= module.CONFIG
    values = {name: config[name] for name in SETTINGS}
    if values["num_gpu_blocks"] is None:  # enough blocks: an empty field
        values["num_gpu_blocks"] = ""
    values["enable_chunked_prefill"] = int(values["enable_chunked_prefill"])
    return {name: str(value) for name, value in values.items()} | {
        "requests": encode(module.WORKLOAD)
    }


def data(options: dict) -> dict:
    return {
        "start": fence_choice(options, "start", PRESETS),
        "limits": LIMITS,
        "presets": {name: state(module) for name, module in PRESETS.items()},
    }
