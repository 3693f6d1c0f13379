"""This lesson's chart, computed by sending each prompt twice through prefix_cache.py.

coursekit/charts.py draws it (npm run charts) into charts/<name>.<language>.svg.
"""

from prefix_cache import PrefixCache

LENGTHS = list(range(1, 81))  # prompts of 1 to 80 tokens


def hit_on_repeat(num_tokens: int) -> int:
    """Tokens of a prompt served from the cache when it is sent a second time."""
    cache = PrefixCache(num_gpu_blocks=20)
    prompt = list(range(1000, 1000 + num_tokens))
    cache.run("first", prompt)
    return cache.run("again", prompt)


def charts() -> dict[str, dict]:
    ticks = [0, 16, 32, 48, 64, 80]
    return {
        "hit-length-staircase": {
            "title": {
                "zh": "同一个提示词再发一次：来自缓存的 token 数",
                "en": "Cached tokens when a prompt is sent again",
            },
            "x": {
                "label": {"zh": "提示词的 token 数 N", "en": "Prompt tokens N"},
                "ticks": [ticks, [str(t) for t in ticks]],
            },
            "y": {
                "label": {"zh": "token 数", "en": "Tokens"},
                "ticks": [ticks, [str(t) for t in ticks]],
            },
            "series": [
                {
                    "label": {"zh": "提示词长度 N", "en": "Prompt length N"},
                    "x": LENGTHS,
                    "y": LENGTHS,
                },
                {
                    "label": {
                        "zh": "命中的 token：⌊(N−1)/16⌋×16",
                        "en": "Tokens hit: ⌊(N−1)/16⌋×16",
                    },
                    "x": LENGTHS,
                    "y": [hit_on_repeat(n) for n in LENGTHS],
                },
            ],
        }
    }
