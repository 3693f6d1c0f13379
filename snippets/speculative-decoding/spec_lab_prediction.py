"""The lab's prediction: how much faster decoding with n-gram speculation should be,
from the counters vLLM reports, through the step-time model of speedup.py (an
estimate). Given the saved outputs of lab_spec_send.py against both servers, it
prints each part's measured speed, with and without speculation, next to the
prediction.

Run: python spec_lab_prediction.py plain.txt spec.txt"""

import json
import sys

from lab_tasks import MAX_TOKENS
from speedup import predicted_ratio

K = 3  # num_speculative_tokens of lab_spec_serve.sh


def parts(text: str) -> dict:
    rows = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    return {(row["task"], row["concurrency"]): row for row in rows}


def compare(plain: dict, spec: dict) -> list[dict]:
    """Each part's tokens/s without and with speculation, and the predicted ratio."""
    rows = []
    for key, with_spec in spec.items():
        c = with_spec["spec"]
        context = with_spec["prompt_tokens"] + MAX_TOKENS // 2
        rows.append(
            {
                "part": key,
                "plain": plain[key]["completion_tokens"] / plain[key]["seconds"],
                "spec": with_spec["completion_tokens"] / with_spec["seconds"],
                "predicted": predicted_ratio(
                    key[1],
                    context,
                    K,
                    with_spec["completion_tokens"],
                    c["drafts"],
                    c["accepted"],
                ),
                "acceptance": c["accepted"] / c["draft_tokens"]
                if c["draft_tokens"]
                else 0.0,
            }
        )
    return rows


if __name__ == "__main__":
    if len(sys.argv) == 3:
        plain, spec = (
            parts(open(name, encoding="utf-8").read()) for name in sys.argv[1:]
        )
        for row in compare(plain, spec):
            measured = row["spec"] / row["plain"]
            print(
                f"{row['part'][0]:>5} x{row['part'][1]:<3} {row['plain']:8.1f} ->"
                f" {row['spec']:8.1f} tokens/s: {measured:.2f}x, predicted"
                f" {row['predicted']:.2f}x, acceptance {row['acceptance']:.1%}"
            )
    else:  # an example: 256 tokens, 60 steps verified drafts, 120 drafts passed
        for batch in (1, 32):
            ratio = predicted_ratio(batch, 512, K, MAX_TOKENS, 60, 120)
            print(
                f"batch {batch:>2}: 256 tokens, 60 drafts, 120 accepted ->"
                f" {ratio:.2f}x (estimate)"
            )
