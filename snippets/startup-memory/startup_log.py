"""Reads what vLLM 0.26.0 printed while it started: the values of every line of
startup_lines.log (vLLM's own format strings, checked against its source) and the
memory summary the worker prints once the graphs are captured.

Run: python startup_log.py        (the lines it reads, and how many values each gives)
     python startup_log.py LOG    (what a saved start-up log says)
"""

import re
import sys
from dataclasses import dataclass
from pathlib import Path

FORMATS = Path(__file__).with_name("startup_lines.log").read_text("utf-8").splitlines()
PLACEHOLDER = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[sdf]")
# vllm/v1/worker/gpu_worker.py: Worker.compile_or_warm_up_model writes this summary
# as an f-string; each figure is format_gib's (rounded to 2 decimals).
SUMMARY = re.compile(
    r"Desired GPU memory utilization is \(([\d.]+), ([\d.]+) GiB\)\. Actual usage is"
    r" ([\d.]+) GiB for weight, ([\d.]+) GiB for peak activation, ([\d.]+) GiB for"
    r" non-torch memory, and ([\d.]+) GiB for CUDAGraph memory\."
)


def line_pattern(fmt: str) -> re.Pattern:
    """A format string as a regex for the end of a logged line, one group per value."""
    parts = PLACEHOLDER.split(fmt)
    values = [
        r"(.+?)" if p.endswith("s") else r"(-?[\d.]+)" for p in PLACEHOLDER.findall(fmt)
    ]
    body = "".join(re.escape(part) + value for part, value in zip(parts, values + [""]))
    return re.compile(body + r"$", re.MULTILINE)


def read_lines(text: str) -> dict[str, tuple[str, ...]]:
    """{format: the values of its last line in the log} for every format the log holds
    (progress bars rewrite their line with a carriage return: each piece counts)."""
    text = text.replace("\r", "\n")
    found = {}
    for fmt in FORMATS:
        matches = list(line_pattern(fmt).finditer(text))
        if matches:
            found[fmt] = matches[-1].groups()
    return found


@dataclass(frozen=True)
class Startup:
    v2_runner: bool  # "Using V2 Model Runner" (vllm/v1/worker/gpu_worker.py)
    backend: str
    weights_gib: float  # "Model loading took"
    load_seconds: float
    kv_gib: float  # "Available KV cache memory"
    kv_tokens: int
    init_seconds: float  # the whole "init engine" step
    compile_seconds: float | None  # None under --enforce-eager
    dynamo_seconds: float | None  # torch.compile's bytecode capture
    inductor_seconds: float | None  # compiling the pieces, or loading them cached
    from_cache: bool  # the compiled pieces came from the torch.compile cache
    graph_seconds: float | None  # None when no graph is captured
    graph_gib: float | None
    eager: bool  # the two eager-mode lines were printed
    requested_gib: float  # from the memory summary
    activation_gib: float
    non_torch_gib: float
    summary_graph_gib: float


def _line(found: dict, start: str) -> tuple[str, ...] | None:
    """The values of the line whose format starts with `start`; the longest format
    first, so that the eager "init engine" line does not take the compiled one's."""
    for fmt in sorted(FORMATS, key=len, reverse=True):
        if fmt.startswith(start) and fmt in found:
            return found[fmt]
    return None


def _required(found: dict, start: str) -> tuple[str, ...]:
    values = _line(found, start)
    if values is None:
        raise ValueError(f"vLLM's start-up log has no line like {start!r}")
    return values


def read_startup(text: str) -> Startup:
    found = read_lines(text)
    summary = SUMMARY.search(text)
    if summary is None:
        raise ValueError(
            "vLLM's start-up log has no memory summary ('Actual usage is ... GiB for"
            " weight, ...'): is kv_cache_memory_bytes set?"
        )
    weights, load = _required(found, "Model loading took")
    init = _required(found, "init engine")
    graphs = _line(found, "Graph capturing finished")
    dynamo = _line(found, "Dynamo bytecode transform time")
    compiled = _line(found, "Compiling a graph for")
    cached = _line(found, "Directly load the compiled graph")
    inductor = compiled or cached
    eager = [fmt for fmt in FORMATS if "eager" in fmt.lower()]
    return Startup(
        v2_runner="Using V2 Model Runner" in found,
        backend=_required(found, "Using %s attention backend")[0],
        weights_gib=float(weights),
        load_seconds=float(load),
        kv_gib=float(_required(found, "Available KV cache memory")[0]),
        kv_tokens=int(_required(found, "GPU KV cache size")[0].replace(",", "")),
        init_seconds=float(init[0]),
        compile_seconds=float(init[1]) if len(init) > 1 else None,
        dynamo_seconds=float(dynamo[0]) if dynamo else None,
        inductor_seconds=float(inductor[-1]) if inductor else None,
        from_cache=cached is not None and compiled is None,
        graph_seconds=float(graphs[0]) if graphs else None,
        graph_gib=float(graphs[1]) if graphs else None,
        eager=all(fmt in found for fmt in eager),
        requested_gib=float(summary[2]),
        activation_gib=float(summary[4]),
        non_torch_gib=float(summary[5]),
        summary_graph_gib=float(summary[6]),
    )


if __name__ == "__main__":
    if len(sys.argv) == 1:
        for fmt in FORMATS:
            print(f"{line_pattern(fmt).groups} value(s): {fmt[:60]}")
    elif len(sys.argv) == 2:
        startup = read_startup(Path(sys.argv[1]).read_text("utf-8", "replace"))
        for name, value in vars(startup).items():
            print(f"{name:18} {value}")
    else:
        sys.exit("usage: python startup_log.py [LOG]")
