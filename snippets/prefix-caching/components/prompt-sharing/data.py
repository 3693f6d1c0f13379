"""The prompt sharing component starts from one of three workloads: data.py gives
script.js their prompts and settings as link values, and the limits a link must keep.
parity.py reads the same presets and limits from here.

A prompt is written as words separated by spaces; each word is one token. Token ids
are handed out by order of first appearance over the whole workload (the first new
word is 0, the next 1, ...), so equal words are equal tokens. Requests run one after
another, as prefix_cache.py's PrefixCache.run does.
"""

from coursekit.components import fence_choice

# The workloads, in the page's order: the buttons that load them. Prompts are separated
# by "|" in a link, words by spaces.
_SYSTEM = "you are a helpful assistant . answer in one short sentence ."  # 12 words
_PROMPT = "the quick brown fox jumps over the lazy dog and then runs back to its den"
_CHANGED = _PROMPT.replace("over", "under")
PRESETS = {
    # Four questions after one system prompt: the system prompt's three blocks are
    # computed once, then hit; the repeated question hits one block more.
    "system-prompt": {
        "num_gpu_blocks": 16,
        "block_size": 4,
        "max_tokens": 1,
        "prompts": [
            f"{_SYSTEM} what is a cat ?",
            f"{_SYSTEM} what is a dog ?",
            f"{_SYSTEM} how do plants grow ?",
            f"{_SYSTEM} what is a cat ?",
        ],
    },
    # A 16-token prompt twice (the last-token rule keeps its fourth block from being a
    # hit), then the same prompt with one word changed in its second block: every block
    # after the change misses, though its words are the same.
    "one-token-changed": {
        "num_gpu_blocks": 16,
        "block_size": 4,
        "max_tokens": 1,
        "prompts": [_PROMPT, _PROMPT, _CHANGED],
    },
    # A pool of 6 blocks (besides the null block): the third request takes cached blocks
    # from the head of the free queue, and the first prompt, sent again, hits less.
    "eviction": {
        "num_gpu_blocks": 7,
        "block_size": 4,
        "max_tokens": 1,
        "prompts": [
            "red green blue cyan pink gold gray teal ?",
            "one two three four five six seven eight ?",
            "north south east west up down left right ?",
            "red green blue cyan pink gold gray teal ?",
        ],
    },
}
# What a link may hold (least, most). Anything else falls back to the fence's workload.
LIMITS = {
    "num_gpu_blocks": (2, 64),
    "block_size": (1, 32),
    "max_tokens": (1, 32),
    "requests": (1, 8),
    "words": (1, 64),  # per prompt
    "word_chars": (1, 16),
}
# The settings a link holds, in the order of the form.
SETTINGS = ("num_gpu_blocks", "block_size", "max_tokens")
# A word: ASCII letters and digits, CJK ideographs, and a few punctuation marks, Chinese
# ones too
# (template.html hands the same pattern to script.js).
WORD = r"[A-Za-z0-9\u3400-\u9fff'.?!:;，。？！：；、-]{1,16}"


def state(preset: dict) -> dict[str, str]:
    """A workload as a link: its settings and its prompts."""
    values = {name: str(preset[name]) for name in SETTINGS}
    return values | {"prompts": "|".join(preset["prompts"])}


def data(options: dict) -> dict:
    return {
        "start": fence_choice(options, "start", PRESETS),
        "limits": LIMITS,
        "word": WORD,
        "presets": {name: state(preset) for name, preset in PRESETS.items()},
    }
