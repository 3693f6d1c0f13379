"""This lesson's charts (coursekit/charts.py): `npm run charts` draws them into charts/.
Both come from perf_model.py: estimates, lower bounds on time."""

from perf_model import predict_rate

RATES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16]


def charts() -> dict[str, dict]:
    runs = [predict_rate(float(rate)) for rate in RATES]
    rate_axis = {
        "label": {"zh": "请求速率（请求/秒）", "en": "Request rate (requests/s)"}
    }
    return {
        "serving-knee-latency": {
            "title": {
                "zh": "延迟随请求速率变化（估计值）",
                "en": "Latency against request rate (estimates)",
            },
            "x": rate_axis,
            "y": {"label": {"zh": "毫秒", "en": "Milliseconds"}, "scale": "log"},
            "series": [
                {
                    "label": "TTFT p50",
                    "x": RATES,
                    "y": [r["p50_ttft_ms"] for r in runs],
                },
                {
                    "label": "TTFT p99",
                    "x": RATES,
                    "y": [r["p99_ttft_ms"] for r in runs],
                },
                {"label": "ITL p99", "x": RATES, "y": [r["p99_itl_ms"] for r in runs]},
            ],
        },
        "serving-knee-throughput": {
            "title": {
                "zh": "吞吐随请求速率变化（估计值）",
                "en": "Throughput against request rate (estimates)",
            },
            "x": rate_axis,
            "y": {
                "label": {"zh": "完成的请求/秒", "en": "Requests completed per second"}
            },
            "series": [
                {
                    "label": {"zh": "完成速率", "en": "completed"},
                    "x": RATES,
                    "y": [r["request_throughput"] for r in runs],
                },
                {"label": {"zh": "到达速率", "en": "arriving"}, "x": RATES, "y": RATES},
            ],
        },
    }
