"""Structured output as vLLM 0.26.0 runs it, on a toy vocabulary: at every step the
grammar says which tokens may come next, as a bitmask of one bit per token in int32
words (xgrammar's allocate_token_bitmask, vllm/v1/structured_output/backend_xgrammar.py:
XgrammarBackend.allocate_token_bitmask). The model runner sets the logits of the others
to -inf before the sampler runs (vllm/v1/worker/gpu/structured_outputs.py:
StructuredOutputsWorker.apply_grammar_bitmask, called from
vllm/v1/worker/gpu/model_runner.py), and the sampled token advances the grammar
(vllm/v1/structured_output/__init__.py: StructuredOutputManager). Here the "grammar" is
the set of texts a JSON schema with one enum field allows, and a token is allowed where
text + token still begins one of them; xgrammar compiles a real schema into a pushdown
automaton that answers the same question for 152,064 tokens."""

import math

from hf_config import read_presets
from sampling import argmax

# {"type": "object", "properties": {"unit": {"enum": ["celsius", "fahrenheit"]}},
#  "required": ["unit"], "additionalProperties": false}, without whitespace
ALLOWED = ['{"unit": "celsius"}', '{"unit": "fahrenheit"}']
VOCAB = ['{"', "unit", '": "', "cel", "sius", "fahren", "heit", '"}', "Sure", "hot",
         "<eos>"]  # fmt: skip
EOS = VOCAB.index("<eos>")


def allowed_tokens(text: str, allowed=ALLOWED, vocab=VOCAB) -> list[bool]:
    """The mask for the next token after text: a token may come if text + token starts
    an allowed output; <eos> only once text is one."""
    if not any(a.startswith(text) for a in allowed):
        raise ValueError(f"{text!r} is already outside the grammar")
    return [
        text in allowed if i == EOS else any(a.startswith(text + t) for a in allowed)
        for i, t in enumerate(vocab)
    ]


def bitmask(mask: list[bool]) -> list[int]:
    """One bit per token, 32 tokens per int32 word, bit i % 32 of word i // 32 (as
    xgrammar packs it; its words are signed int32)."""
    words = [0] * math.ceil(len(mask) / 32)
    for i, ok in enumerate(mask):
        if ok:
            words[i // 32] |= 1 << (i % 32)
    return [w - 2**32 if w >= 2**31 else w for w in words]


def constrained_greedy(step_logits: list[list[float]]) -> list[tuple[str, str, str]]:
    """Greedy decoding under the mask: per step (what the model liked best, what the
    mask let through, the text so far)."""
    text, steps = "", []
    for logits in step_logits:
        mask = allowed_tokens(text)
        masked = [x if ok else -math.inf for x, ok in zip(logits, mask)]
        liked, token = argmax(logits), argmax(masked)
        if token == EOS:
            steps.append((VOCAB[liked], VOCAB[token], text))
            break
        text += VOCAB[token]
        steps.append((VOCAB[liked], VOCAB[token], text))
    return steps


def bitmask_bytes(vocab_size: int, requests: int) -> int:
    """The per-step bitmask the scheduler sends to the GPU: ceil(vocab / 32) int32 words
    per request (StructuredOutputsWorker.grammar_bitmask)."""
    if vocab_size <= 0 or requests <= 0:
        raise ValueError("vocab_size and requests must be positive")
    return math.ceil(vocab_size / 32) * 4 * requests


# The model's made-up logits at each step: it would rather say "Sure" or "hot".
STEP_LOGITS = [
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.5, 0.0],
    [0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.2, 0.0, 0.1, 0.0, 0.0, 0.0, 2.5, 0.0],
    [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 1.0],
]

if __name__ == "__main__":
    print(f"mask at the start: {[t for t, ok in zip(VOCAB, allowed_tokens('')) if ok]}")
    print(f"as a bitmask: {bitmask(allowed_tokens(''))} (bit 0 = {VOCAB[0]!r})")
    for liked, chosen, text in constrained_greedy(STEP_LOGITS):
        print(f"model liked {liked!r:<9} mask chose {chosen!r:<9} text {text!r}")
    vocab = read_presets()["Qwen2.5-7B-Instruct"].config["vocab_size"]
    for requests in (1, 64):
        size = bitmask_bytes(vocab, requests)
        print(f"Qwen2.5-7B ({vocab} tokens), {requests:>2} requests:"
              f" {size} bytes of bitmask per step ({size / 1024:.1f} KiB)")  # fmt: skip
