"""A three-turn conversation: each turn sends the whole history back, and hits on the
blocks of the previous answers, since generated tokens are hashed too."""

from prefix_cache import PrefixCache

cache = PrefixCache(num_gpu_blocks=100)
history = list(range(1000, 1100))  # a 100-token system prompt
answer_positions = set()  # where the model's earlier answers sit in the history
turns = [(20, 50), (25, 60), (15, 40)]  # (question tokens, answer tokens)
for turn, (asked, answered) in enumerate(turns, 1):
    question = list(range(10_000 * turn, 10_000 * turn + asked))
    answer = list(range(20_000 * turn, 20_000 * turn + answered))
    prompt = history + question
    cached = cache.run(f"turn{turn}", prompt, max_tokens=answered, output=answer)
    from_answers = sum(position < cached for position in answer_positions)
    print(
        f"turn {turn}: prompt {len(prompt):3} tokens, {cached:3} cached,"
        f" {from_answers:3} of them earlier answers;"
        f" computed {len(prompt) + answered - 1} -> {len(cache.cached_blocks)}"
        f" cached blocks"
    )
    answer_positions.update(range(len(prompt), len(prompt) + answered))
    history = prompt + answer
print(f"hit rate {cache.hits} / {cache.queries} = {cache.hit_rate:.1%}")
