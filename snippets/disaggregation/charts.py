"""This lesson's charts (coursekit/charts.py): `npm run charts` draws them."""

from kv_transfer import LINKS, prefill_seconds, transfer_seconds

PROMPTS = [256, 512, 1024, 2048, 4096, 8192, 16384]
SHOWN = ("10 GbE TCP", "RDMA 100 Gb/s", "PCIe 4.0 x16")


def charts() -> dict[str, dict]:
    series = [
        {
            "label": {"zh": "prefill 时间（下限）", "en": "prefill (lower bound)"},
            "x": PROMPTS,
            "y": [round(prefill_seconds(p) * 1e3, 2) for p in PROMPTS],
        }
    ]
    series += [
        {
            "label": {
                "zh": f"KV 经 {name}（估计）",
                "en": f"KV over {name} (estimate)",
            },
            "x": PROMPTS,
            "y": [round(transfer_seconds(p, LINKS[name]) * 1e3, 2) for p in PROMPTS],
        }
        for name in SHOWN
    ]
    return {
        "kv-transfer-vs-prefill": {
            "title": {
                "zh": "搬运 KV 与计算 prefill 的时间，Qwen2.5-7B，BF16",
                "en": "Moving the KV vs computing the prefill, Qwen2.5-7B, BF16",
            },
            "x": {
                "label": {"zh": "prompt 的 token 数", "en": "Prompt tokens"},
                "scale": "log",
            },  # fmt: skip
            "y": {"label": {"zh": "毫秒", "en": "Milliseconds"}, "scale": "log"},
            "series": series,
        }
    }
