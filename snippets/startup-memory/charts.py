"""This lesson's charts (coursekit/charts.py): `npm run charts` draws them."""

from startup_budget import capture_sizes, graphs_captured

SEQS = [1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 384, 512]


def _graphs(max_num_seqs: int) -> tuple[int, int]:
    sizes = capture_sizes(max_num_seqs, 8192)
    return graphs_captured(sizes, max_num_seqs)


def charts() -> dict[str, dict]:
    return {
        "startup-graphs": {
            "title": {
                "zh": "max_num_seqs 决定捕获多少个 CUDA graph（每步 8192 token）",
                "en": "max_num_seqs sets the CUDA graphs captured (8192 tokens a step)",
            },
            "x": {
                "label": "max_num_seqs",
                "scale": "log",
                "ticks": [
                    [1, 4, 16, 64, 256, 512],
                    ["1", "4", "16", "64", "256", "512"],
                ],
            },
            "y": {"label": {"zh": "捕获的 graph 数", "en": "Graphs captured"}},
            "series": [
                {
                    "label": {
                        "zh": "PIECEWISE（任意批次）",
                        "en": "PIECEWISE (any batch)",
                    },
                    "x": SEQS,
                    "y": [_graphs(n)[1] for n in SEQS],
                },
                {
                    "label": {
                        "zh": "FULL（纯 decode 批次）",
                        "en": "FULL (decode-only batches)",
                    },
                    "x": SEQS,
                    "y": [_graphs(n)[0] for n in SEQS],
                },
            ],
        }
    }
