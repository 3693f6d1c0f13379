"""The component shows what serving_metrics.py computes (the browser tests check every case)."""

from serving_metrics import blocks_needed


def cases() -> list[dict[str, str]]:
    return [{"tokens": tokens} for tokens in ("0", "1", "16", "17", "1000", "-1", "2.5", "")]


def expected(state: dict[str, str]) -> dict[str, str] | str:
    try:
        return {"blocks": str(blocks_needed(int(state["tokens"])))}
    except ValueError:
        return "error"


# A wrong formula the check must catch: rounding down instead of up.
BROKEN = ("Math.ceil(tokens / blockSize)", "Math.floor(tokens / blockSize)")
