"""Reading vLLM 0.26.0's spec-decode counters from GET /metrics, and what they must
satisfy.

vllm/v1/spec_decode/metrics.py: SpecDecodingProm registers three counters and one per
draft position (Prometheus adds _total and the labels):
  vllm:spec_decode_num_drafts              steps in which a request verified drafts
  vllm:spec_decode_num_draft_tokens        draft tokens verified
  vllm:spec_decode_num_accepted_tokens     draft tokens accepted
  vllm:spec_decode_num_accepted_tokens_per_pos{position="i"}  accepted at position i
SpecDecodingStats.observe_draft adds an accepted token at positions 0 .. accepted-1, so
the positions sum to the accepted tokens and never grow with the position.
"""

import re

COUNTERS = (
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens",
)
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
NAMES = "|".join(re.escape(name) for name in (*COUNTERS, PER_POS))
LINE = re.compile(rf"^({NAMES})(?:_total)?(\{{[^}}]*\}})? (\S+)$", re.M)
POSITION = re.compile(r'position="(\d+)"')


def read_counters(text: str) -> dict:
    """{'drafts', 'draft_tokens', 'accepted', 'per_pos': [...]} from /metrics text."""
    found, per_pos = {}, {}
    for name, labels, value in LINE.findall(text):
        if name == PER_POS:
            per_pos[int(POSITION.search(labels)[1])] = int(float(value))
        elif name in COUNTERS:
            found[name] = int(float(value))
    missing = [name for name in COUNTERS if name not in found]
    if missing or not per_pos:
        raise ValueError(f"/metrics has no {missing or [PER_POS]}: is speculation on?")
    drafts, draft_tokens, accepted = (found[name] for name in COUNTERS)
    return {
        "drafts": drafts,
        "draft_tokens": draft_tokens,
        "accepted": accepted,
        "per_pos": [per_pos[i] for i in sorted(per_pos)],
    }


def difference(after: dict, before: dict) -> dict:
    """The counters of what happened between two readings."""
    out = {
        key: after[key] - before[key] for key in ("drafts", "draft_tokens", "accepted")
    }
    out["per_pos"] = [a - b for a, b in zip(after["per_pos"], before["per_pos"])]
    return out


def problems(c: dict, k: int) -> list[str]:
    """What the counters break of observe_draft's rules (num_speculative_tokens k)."""
    found = []
    if len(c["per_pos"]) != k:
        found.append(f"{len(c['per_pos'])} positions, num_speculative_tokens is {k}")
    if sum(c["per_pos"]) != c["accepted"]:
        found.append(f"positions sum to {sum(c['per_pos'])}, accepted {c['accepted']}")
    if any(b > a for a, b in zip(c["per_pos"], c["per_pos"][1:])):
        found.append(f"a later position accepts more: {c['per_pos']}")
    if c["per_pos"] and c["per_pos"][0] > c["drafts"]:
        found.append(f"position 0 accepts {c['per_pos'][0]} of {c['drafts']} drafts")
    if not c["accepted"] <= c["draft_tokens"] <= k * c["drafts"]:
        found.append(f"need accepted <= draft tokens <= {k} x drafts: {c}")
    return found


def log_line(c: dict, seconds: float) -> str:
    """The line vLLM logs for counters gathered over `seconds` (vllm/v1/spec_decode/
    metrics.py: SpecDecodingLogging.log, its format and arithmetic): the mean acceptance
    length counts the bonus token; each position's rate is over the drafts, the overall
    one over the draft tokens."""
    length = 1 + c["accepted"] / c["drafts"]
    rates = ", ".join(f"{n / c['drafts']:.3f}" for n in c["per_pos"])
    rate = c["accepted"] / c["draft_tokens"] * 100
    return (
        "SpecDecoding metrics: "
        "Mean acceptance length: %.2f, "
        "Accepted throughput: %.2f tokens/s, "
        "Drafted throughput: %.2f tokens/s, "
        "Accepted: %d tokens, "
        "Drafted: %d tokens, "
        "Per-position acceptance rate: %s, "
        "Avg Draft acceptance rate: %.1f%%"
    ) % (
        length,
        c["accepted"] / seconds,
        c["draft_tokens"] / seconds,
        c["accepted"],
        c["draft_tokens"],
        rates,
        rate,
    )


if __name__ == "__main__":
    print("GET /metrics names them with _total, the last one once per position:")
    for name in (*COUNTERS, PER_POS):
        print(f"  {name}_total")
