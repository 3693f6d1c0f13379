"""What lab_startup.py should print and log, and one run of it held to the lesson.

Run: python lab_startup_check.py                          (the predictions)
     python lab_startup_check.py WAY STDOUT_FILE LOG_FILE (a run; the GPU job's check)

The predictions, started three ways: the capture sizes and graphs are exact; the KV
cache memory is an estimate (lesson 1's card total, the lesson's activation and
non-torch estimates).
What a run is held to:

- the capture sizes vLLM printed: exactly startup_budget.capture_sizes;
- the V2 model runner, whose budget this is: its "Using V2 Model Runner" line;
- eager mode: both eager lines and no graph capture; otherwise a graph capture line;
- "Available KV cache memory": exactly the share of the card less the weights, the
  activation peak and non-torch memory of vLLM's own summary line (each figure is
  rounded to 2 decimals: 0.02 GiB allowed), with no CUDA graph memory taken off;
- "Model loading took": lesson 4's count of it (load_memory.logged_as_counted: 0.26.0's
  figure, or older vLLM's, within the log's rounding);
- the KV memory against the lesson's estimate (startup_budget.kv_budget with its
  activation and non-torch estimates): within KV_TOLERANCE, on the card's own total;
- the graph pool: fits in what the share leaves of the memory free at start-up (the
  card less the CUDA context, as vLLM's summary line says);
- the times and the decode speed: reported, not held to a figure.
"""

import re
import sys
from pathlib import Path

from kv_cache_size import GIB
from load_memory import ROUNDING_GIB, loaded_bytes, logged_as_counted
from startup_budget import (
    CONTEXT_ESTIMATE,
    NON_TORCH_ESTIMATE,
    activation_estimate,
    capture_sizes,
    graphs_captured,
    kv_budget,
    qwen_budget,
)
from startup_log import read_startup

UTILIZATION, TOKENS = 0.92, 8192  # what lab_startup.py sets
MAX_NUM_SEQS = {"default": 256, "eager": 256, "small": 16}
KV_TOLERANCE = 0.75  # GiB either side of the estimated KV memory
TOTAL = re.compile(r"Free memory on device \(([\d.]+)/([\d.]+) GiB\) on startup")


def read_stdout(text: str) -> tuple[list[int], float]:
    sizes = re.search(r"^capture sizes: \[([\d, ]*)\]$", text, re.MULTILINE)
    speed = re.search(
        r"^decode at concurrency 1: ([\d.]+) tokens/s$", text, re.MULTILINE
    )
    if sizes is None or speed is None:
        raise ValueError("lab_startup.py printed no 'capture sizes:' or 'decode' line")
    return [int(size) for size in sizes[1].split(",") if size.strip()], float(speed[1])


def compare(way: str, log: str, stdout: str) -> tuple[dict, list[str]]:
    if way not in MAX_NUM_SEQS:
        raise ValueError(f"way must be one of {', '.join(MAX_NUM_SEQS)}, got {way!r}")
    seqs, eager = MAX_NUM_SEQS[way], way == "eager"
    startup = read_startup(log)
    sizes, speed = read_stdout(stdout)
    total = TOTAL.search(log)
    if total is None:
        raise ValueError("vLLM's log has no line 'Free memory on device (X/Y GiB)'")
    problems = []
    expected = capture_sizes(seqs, TOKENS, enforce_eager=eager)
    if sizes != expected:
        problems.append(f"capture sizes {sizes}, the lesson computes {expected}")
    if not startup.v2_runner:
        problems.append(
            "no 'Using V2 Model Runner' line: the budget is the V2 runner's"
        )
    if eager != startup.eager or eager != (startup.graph_gib is None):
        problems.append(f"eager lines {startup.eager}, graph line {startup.graph_gib}")
    parts = startup.weights_gib + startup.activation_gib + startup.non_torch_gib
    if abs(startup.kv_gib - (startup.requested_gib - parts)) > 4 * ROUNDING_GIB:
        problems.append(
            f"KV {startup.kv_gib} GiB is not {startup.requested_gib} GiB less the"
            f" summary's parts ({parts:.2f} GiB)"
        )
    if not logged_as_counted(startup.weights_gib, "Qwen2.5-7B-Instruct", "bf16"):
        weights = loaded_bytes("Qwen2.5-7B-Instruct", "bf16") / GIB
        problems.append(f"weights {startup.weights_gib} GiB, counted {weights:.2f} GiB")
    free, card = float(total[1]) * GIB, float(total[2]) * GIB
    estimate = kv_budget(
        int(card),
        UTILIZATION,
        loaded_bytes("Qwen2.5-7B-Instruct", "bf16"),
        activation_estimate("Qwen2.5-7B-Instruct", TOKENS, seqs),
        int(NON_TORCH_ESTIMATE),
        int(CONTEXT_ESTIMATE),
        0,
    )
    if abs(startup.kv_gib - estimate.kv / GIB) > KV_TOLERANCE:
        problems.append(
            f"KV {startup.kv_gib} GiB, estimated {estimate.kv / GIB:.2f} GiB"
            f" (tolerance {KV_TOLERANCE} GiB)"
        )
    left = (free - estimate.requested) / GIB
    if startup.graph_gib is not None and startup.graph_gib > left + 2 * ROUNDING_GIB:
        problems.append(f"graphs took {startup.graph_gib} GiB of {left:.2f} GiB left")
    rows = {
        "capture sizes": len(sizes),
        "weights GiB": startup.weights_gib,
        "activation peak GiB (estimate)": (
            f"{startup.activation_gib} ({estimate.activation / GIB:.2f})"
        ),
        "non-torch GiB (estimate)": (
            f"{startup.non_torch_gib} ({estimate.non_torch / GIB:.2f})"
        ),
        "KV cache GiB (estimate)": f"{startup.kv_gib} ({estimate.kv / GIB:.2f})",
        "CUDA context GiB (estimate)": (
            f"{(card - free) / GIB:.2f} ({estimate.context / GIB:.2f})"
        ),
        "CUDA graphs GiB": startup.graph_gib,
        "graph capture s": startup.graph_seconds,
        "torch.compile s": startup.compile_seconds,
        "engine start s": startup.init_seconds,
        "decode tokens/s at concurrency 1": speed,
    }
    return rows, problems


def predict() -> None:
    for way, seqs in MAX_NUM_SEQS.items():
        eager = way == "eager"
        sizes = capture_sizes(seqs, TOKENS, enforce_eager=eager)
        full, piecewise = graphs_captured(sizes, seqs)
        budget = qwen_budget(UTILIZATION, seqs, TOKENS, eager)
        print(f"{way}: max_num_seqs={seqs}, enforce_eager={eager}")
        print(f"  {len(sizes)} capture sizes, largest {max(sizes, default=0)}")
        print(f"  graphs: {piecewise} PIECEWISE + {full} FULL")
        print(
            f"  KV cache {budget.kv / GIB:.2f} GiB +/- {KV_TOLERANCE} (estimate),"
            f" graphs {budget.graphs / GIB:.2f} GiB (estimate)"
        )


if __name__ == "__main__":
    if len(sys.argv) == 1:
        predict()
        sys.exit()
    if len(sys.argv) != 4:
        sys.exit("usage: python lab_startup_check.py [WAY STDOUT_FILE LOG_FILE]")
    way, out, log = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    rows, problems = compare(way, log.read_text("utf-8"), out.read_text("utf-8"))
    for name, value in rows.items():
        print(f"{name:34} {value}")
    print("\n".join(problems) or "match")
