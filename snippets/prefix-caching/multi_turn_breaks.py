"""Where multi-turn hits break: turn 2 sends turn 1 back, not always token for token.
Turn 1 is a 100-token system prompt and a 20-token question; the model answers 60
tokens, the first 40 of them its thinking. Turn 2 adds a 20-token question to one of
three histories, each against a cache that holds turn 1 alone."""

from prefix_cache import PrefixCache

SYSTEM = list(range(1000, 1100))
QUESTION_1 = list(range(10_000, 10_020))
THINKING = list(range(20_000, 20_040))
REPLY = list(range(30_000, 30_020))
QUESTION_2 = list(range(40_000, 40_020))
TURN_1 = SYSTEM + QUESTION_1
ANSWER = THINKING + REPLY

HISTORIES = {
    # The template renders the answer back exactly as the model generated it.
    "answer sent back verbatim": ANSWER,
    # A reasoning model's template drops the thinking of earlier turns.
    "earlier thinking dropped": REPLY,
    # The text of the answer re-tokenizes otherwise: two generated tokens (at answer
    # positions 30 and 31) come back as the one token the tokenizer prefers.
    "re-tokenized at one spot": ANSWER[:30] + [50_000] + ANSWER[32:],
}

print(f"turn 1: {len(TURN_1)} prompt tokens, {len(ANSWER)} generated")
for name, answer in HISTORIES.items():
    cache = PrefixCache(num_gpu_blocks=100)
    cache.run("turn1", TURN_1, max_tokens=len(ANSWER), output=ANSWER)
    prompt = TURN_1 + answer + QUESTION_2
    cached = cache.run("turn2", prompt, max_tokens=1)
    print(f"{name:>26}: turn 2 prompt {len(prompt)} tokens, {cached:3} cached")
