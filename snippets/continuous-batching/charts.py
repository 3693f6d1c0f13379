"""This lesson's chart, computed with chunked_prefill.py (scheduler.py's steps, timed
with lesson 1's figures); coursekit/charts.py draws it (npm run charts)."""

from chunked_prefill import ARRIVAL, timeline

WINDOW = range(ARRIVAL - 2, ARRIVAL + 20)  # steps around the long prompt's arrival


def charts() -> dict[str, dict]:
    series = []
    for budget in (512, 2048, 8192):
        _, ends = timeline(budget, True)
        times = [(ends[s] - ends[s - 1]) * 1000 for s in WINDOW]
        series.append(
            {
                "label": f"max_num_batched_tokens={budget}",
                "x": [s - ARRIVAL for s in WINDOW],
                "y": [round(t, 1) for t in times],
            }
        )
    return {
        "step-time-chunked-prefill": {
            "title": {
                "zh": "8,000 token 的提示词到来前后，每一步的时间（估计）",
                "en": "Time of each step around an 8,000-token prompt (estimate)",
            },
            "x": {
                "label": {
                    "zh": "第几步（0 是长提示词到来的那一步）",
                    "en": "Step (0: the long prompt arrives)",
                }
            },
            "y": {
                "label": {
                    "zh": "这一步的时间（毫秒，估计）",
                    "en": "Step time (ms, estimate)",
                }
            },
            "series": series,
        }
    }
