"""What the request timeline takes: each field's limits, and the lesson's example
(serving_metrics.py's three requests and SLOs) as the fence's values."""

LIMITS = {
    "requests": (1, 8),  # requests in a link
    "tokens": (1, 64),  # token times per request
    "ms": (0, 600000),  # every time, in whole milliseconds
    "ttft": (1, 600000),  # the SLOs, in milliseconds
    "tpot": (1, 600000),
    "p": (0, 100),  # the percentile shown
}
FIELDS = ("requests", "ttft", "tpot", "p")


def data(options: dict) -> dict:
    unknown = set(options) - set(FIELDS)
    if unknown or set(FIELDS) - set(options):
        raise ValueError(f"the fence holds exactly {', '.join(FIELDS)}")
    return {"limits": LIMITS, "defaults": {name: str(options[name]) for name in FIELDS}}
