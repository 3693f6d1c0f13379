"""N-gram speculative decoding's counters, for the stand-in's `vllm serve` (lesson 7's lab):
--speculative-config '{"method": "ngram", ...}' and the four spec-decode counters of
vllm/v1/spec_decode/metrics.py: SpecDecodingProm (vllm:spec_decode_num_drafts,
_num_draft_tokens, _num_accepted_tokens, _num_accepted_tokens_per_pos by position).

The stand-in's engine still samples one token per request and step (its token at output
position i is 1000 + i % 100, stand_in.Scheduler.engine_step). What this module adds is
what vLLM would count for that token sequence: after each sampled token, the drafts vLLM's
n-gram rule proposes from the prompt and output so far (the longest match of at most
prompt_lookup_max tokens, the earliest at equal length, none under prompt_lookup_min; at
most num_speculative_tokens after it: vllm/v1/spec_decode/ngram_proposer.py:
_find_longest_matched_ngram_and_propose_tokens), and at the request's next sampled token,
how many of them the stand-in's own next tokens match (greedy verification:
vllm/v1/sample/rejection_sampler.py: rejection_greedy_sample_kernel), counted as
SpecDecodingStats.observe_draft counts them. The counts are consistent as vLLM's are; the
speed is not modelled."""

import json
import time

GIB = 1024**3
# The V1 model runner n-gram runs on (VllmConfig._get_v2_model_runner_unsupported_features):
# the graph memory it estimates before the KV cache and what the capture then took
# (stand-in figures), with the format strings and the logger calls' lines in vLLM 0.26.0.
V1_GRAPH_ESTIMATE, V1_GRAPH_ACTUAL = 1.50 * GIB, 1.47 * GIB
V1_RUNNER_LINES = (
    ("gpu_model_runner.py:6737", "Estimated CUDA graph memory: %.2f GiB total",
     (V1_GRAPH_ESTIMATE / GIB,)),
    ("gpu_worker.py:793", "CUDA graph pool memory: %s GiB (actual), %s GiB (estimated), "
     "difference: %s GiB (%.1f%%).",
     (round(V1_GRAPH_ACTUAL / GIB, 2), round(V1_GRAPH_ESTIMATE / GIB, 2),
      round(abs(V1_GRAPH_ACTUAL - V1_GRAPH_ESTIMATE) / GIB, 2),
      100 * abs(V1_GRAPH_ACTUAL - V1_GRAPH_ESTIMATE) / V1_GRAPH_ACTUAL)),
)

COUNTERS = {
    "vllm:spec_decode_num_drafts": "Number of spec decoding drafts.",
    "vllm:spec_decode_num_draft_tokens": "Number of draft tokens.",
    "vllm:spec_decode_num_accepted_tokens": "Number of accepted tokens.",
}
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"


def config(text: str | None) -> dict | None:
    """--speculative-config's JSON, with vLLM's n-gram defaults (SpeculativeConfig
    .__post_init__: prompt_lookup_min and _max 5 when neither is given, the other one
    when one is)."""
    if text is None:
        return None
    spec = json.loads(text)
    if spec.get("method") != "ngram":
        raise ValueError(f"the stand-in models n-gram speculation only, not {spec}")
    low, high = spec.get("prompt_lookup_min"), spec.get("prompt_lookup_max")
    low, high = low or high or 5, high or low or 5
    if low > high:
        raise ValueError(f"prompt_lookup_min={low} must be <= prompt_lookup_max={high}")
    return {"k": spec["num_speculative_tokens"], "min": low, "max": high}


def log_v1_runner_graphs(stream) -> None:
    """What the V1 runner logs of its CUDA graphs' memory, as vLLM's logger prints it."""
    for where, fmt, args in V1_RUNNER_LINES:
        print(f"INFO {time.strftime('%m-%d %H:%M:%S')} [{where}] {fmt % args}", file=stream,
              flush=True)


def propose(tokens: list[int], low: int, high: int, k: int) -> list[int]:
    best, where = 0, 0
    for start in range(len(tokens) - 1):
        for n in range(min(high, len(tokens) - 1 - start), best, -1):
            if tokens[start:start + n] == tokens[len(tokens) - n:]:
                best, where = n, start
                break
    return tokens[where + best:where + best + k] if best >= low else []


def stand_in_token(position: int) -> int:
    return 1000 + position % 100  # stand_in.Scheduler.engine_step's output token


class SpecCounters:
    def __init__(self, spec: dict):
        self.spec = spec
        self.drafts: dict[str, list[int]] = {}
        self.totals = dict.fromkeys(COUNTERS, 0)
        self.per_pos = [0] * spec["k"]

    def record(self, result) -> None:
        """After a step (a stand_in.StepResult): verify, then propose anew."""
        for request in result.sampled:
            rid, output = request.request_id, request.output_token_ids
            drafts = self.drafts.pop(rid, [])
            if drafts:
                first = len(output) - 1  # the position the step sampled
                accepted = 0
                while (accepted < len(drafts)
                       and drafts[accepted] == stand_in_token(first + accepted)):
                    accepted += 1
                self.totals["vllm:spec_decode_num_drafts"] += 1
                self.totals["vllm:spec_decode_num_draft_tokens"] += len(drafts)
                self.totals["vllm:spec_decode_num_accepted_tokens"] += accepted
                for position in range(accepted):
                    self.per_pos[position] += 1
            if not request.finished:
                self.drafts[rid] = propose(request.prompt_token_ids + output,
                                           self.spec["min"], self.spec["max"], self.spec["k"])

    def lines(self, model: str) -> list[str]:
        tags = f'model_name="{model}",engine="0"'
        lines = []
        for name, text in COUNTERS.items():
            lines += [f"# HELP {name}_total {text}", f"# TYPE {name}_total counter",
                      f"{name}_total{{{tags}}} {float(self.totals[name])!r}"]
        name = f"{PER_POS}_total"
        lines += [f"# HELP {name} Accepted tokens per draft position.",
                  f"# TYPE {name} counter"]
        lines += [f'{name}{{{tags},position="{i}"}} {float(n)!r}'
                  for i, n in enumerate(self.per_pos)]
        return lines
