"""This lesson's charts (coursekit/charts.py): `npm run charts` draws them."""

from spec_decode import expected_tokens
from speedup import most_sequences, speedup

RATES = (0.5, 0.7, 0.9)
KS = list(range(0, 11))
# Up to what the KV budget holds at 1,024 + 4 tokens a sequence (speedup.py, an upper
# bound): larger batches are not reachable on one RTX 4090.
CAP = most_sequences(1024 + 3 + 1)
BATCHES = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, CAP]


def charts() -> dict[str, dict]:
    return {
        "speculation-tokens-per-step": {
            "title": {
                "zh": "每个验证步产出的 token 数",
                "en": "Tokens per verification step",
            },
            "x": {"label": {"zh": "草稿 token 数 k", "en": "Draft tokens k"}},
            "y": {"label": {"zh": "token / 步", "en": "Tokens per step"}},
            "series": [
                {"label": f"a = {a}", "x": KS, "y": [expected_tokens(a, k) for k in KS]}
                for a in RATES
            ],
        },
        "speculation-speedup-vs-batch": {
            "title": {
                "zh": "n-gram 投机（k = 3）的加速比，上下文 1,024，"
                f"最多 {CAP} 个序列（估计）",
                "en": "Speed-up of n-gram speculation (k = 3), context 1,024,"
                f" up to {CAP} sequences (estimate)",
            },
            "x": {
                "label": {
                    "zh": "batch 大小（并发请求数）",
                    "en": "Batch size (concurrent requests)",
                },
                "scale": "log",
                "ticks": [[1, 4, 16, 64, CAP], ["1", "4", "16", "64", str(CAP)]],
            },
            # Ticks up to 7 leave room above the lines, where the legend goes (it sat on
            # the "no speculation" line).
            "y": {
                "label": {"zh": "加速比", "en": "Speed-up"},
                "ticks": [list(range(1, 8)), [str(tick) for tick in range(1, 8)]],
            },
            "series": [
                {
                    "label": f"a = {a}",
                    "x": BATCHES,
                    "y": [speedup(a, 3, b, 1024, False) for b in BATCHES],
                }
                for a in RATES
            ]
            + [
                {
                    "label": {"zh": "不投机", "en": "no speculation"},
                    "x": [1, CAP],
                    "y": [1, 1],
                }
            ],
        },
    }
