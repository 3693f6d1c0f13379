"""What the sampling-stages component computes with: sampling.py's example (its
vocabulary and logits, the prompt and the output so far, min_tokens and its stop token)
and its knobs, which the fence holds as the component's defaults."""

from sampling import EXAMPLE, LOGITS, OUTPUT, PROMPT, VOCAB

# The knobs a reader turns, in the order the form and the link hold them.
KNOBS = (
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
    "seed",
)
# sample()'s stages, in vLLM's order; a greedy request stops after the penalties.
STAGES = ("raw", "bias", "penalties", "temperature", "min_p", "top_k", "top_p")
SEED_MOST = 2**32 - 1  # the seeds the page takes: 0 to 4,294,967,295


def fence() -> dict:
    """The fence's knobs: sampling.py's EXAMPLE."""
    return {name: getattr(EXAMPLE, name) for name in KNOBS}


def data(options: dict) -> dict:
    if options != fence():
        raise ValueError(
            f"the sampling-stages fence holds sampling.py's EXAMPLE: {fence()}"
        )
    return {
        "vocab": VOCAB,
        "logits": LOGITS,
        "prompt": list(PROMPT),
        "output": list(OUTPUT),
        "min_tokens": EXAMPLE.min_tokens,
        "stop_token_ids": list(EXAMPLE.stop_token_ids),
        "knobs": KNOBS,
        "stages": STAGES,
        "seed_most": SEED_MOST,
        # What the context line names, in words.
        "context": {
            "prompt": " ".join(VOCAB[t] for t in PROMPT),
            "output": " ".join(VOCAB[t] for t in OUTPUT),
            "min_tokens": str(EXAMPLE.min_tokens),
            "stop": " ".join(VOCAB[t] for t in EXAMPLE.stop_token_ids),
        },
        "defaults": {name: str(value) for name, value in fence().items()},
    }
