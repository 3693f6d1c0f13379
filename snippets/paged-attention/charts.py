"""This lesson's chart, computed by filling block_pool.py's pool with requests.

coursekit/charts.py draws it (npm run charts) into charts/<name>.<language>.svg.
"""

from block_pool import BlockPool
from lab_prediction import MAX_MODEL_LEN, NUM_GPU_BLOCKS

LENGTHS = [2**k for k in range(6, 13)]  # 64 to 4,096 tokens per request


def requests_that_fit(tokens_each: int) -> int:
    """Admit requests of tokens_each tokens until the pool refuses one."""
    pool = BlockPool(NUM_GPU_BLOCKS)
    while pool.allocate(f"request-{len(pool.requests)}", tokens_each) is not None:
        pass
    return len(pool.requests)


def charts() -> dict[str, dict]:
    ticks = [LENGTHS, [f"{n:,}" for n in LENGTHS]]
    paged = [requests_that_fit(n) for n in LENGTHS]
    return {
        "requests-that-fit": {
            "title": {
                "zh": f"{NUM_GPU_BLOCKS:,} 个 block 能同时放下多少个请求",
                "en": f"Requests that fit in {NUM_GPU_BLOCKS:,} blocks at once",
            },
            "x": {
                "label": {"zh": "每个请求的 token 数", "en": "Tokens per request"},
                "scale": "log",
                "ticks": ticks,
            },
            "y": {
                "label": {"zh": "同时放下的请求数", "en": "Requests held at once"},
                "scale": "log",
                "ticks": [paged, [str(n) for n in paged]],
            },
            "series": [
                {
                    "label": {"zh": "按 block 分配", "en": "Paged (blocks on demand)"},
                    "x": LENGTHS,
                    "y": paged,
                },
                {
                    "label": {
                        "zh": f"连续预留 max_model_len={MAX_MODEL_LEN:,}",
                        "en": f"Contiguous, max_model_len={MAX_MODEL_LEN:,} reserved",
                    },
                    "x": LENGTHS,
                    "y": [requests_that_fit(MAX_MODEL_LEN) for _ in LENGTHS],
                },
            ],
        }
    }
