"""The generations and token sequences on which test_spec_decode_conformance.py compares
lesson 7's n-gram speculation with vLLM's: hand-picked and seeded random workloads (requests
with a played greedy answer that partly repeats the prompt, so that drafts are accepted) and
hand-picked and seeded random sequences for the n-gram matching rule alone."""

import random

MAX_MODEL_LEN = 2048  # spec_trace.py's, unless a workload sets its own

HAND_PICKED_SEQUENCES = [
    # (tokens, min_n, max_n, k, max_model_len)
    ([0, 1, 2, 3, 0, 4, 5, 0, 1, 2, 3, 0], 1, 3, 4, MAX_MODEL_LEN),
    ([0, 1, 2, 3, 0, 4, 5, 0, 1, 2, 3, 0], 1, 1, 3, MAX_MODEL_LEN),  # earliest wins
    ([7, 7, 7, 7, 7], 1, 5, 4, MAX_MODEL_LEN),  # overlapping matches
    ([1, 2, 3], 5, 5, 3, MAX_MODEL_LEN),  # shorter than min_n
    ([1, 2, 3, 1, 2, 3], 2, 2, 5, MAX_MODEL_LEN),  # fewer tokens follow than k
    ([1, 2, 3, 1, 2], 2, 2, 5, 6),  # max_model_len caps k
    ([1, 2, 3, 1, 2], 2, 2, 5, 5),  # no room left at all
    ([5, 6, 9, 5, 6], 3, 4, 2, MAX_MODEL_LEN),  # match shorter than min_n
]


def random_sequences(count: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        vocab = rng.randint(2, 6)
        tokens = [rng.randrange(vocab) for _ in range(rng.randint(1, 60))]
        min_n = rng.randint(1, 4)
        cases.append((tokens, min_n, rng.randint(min_n, 6), rng.randint(1, 8),
                      rng.choice([MAX_MODEL_LEN, len(tokens) + rng.randint(0, 3)])))
    return cases


def answer_for(rng: random.Random, prompt: list[int], length: int) -> list[int]:
    """A greedy answer that partly repeats its prompt, so that drafts are accepted."""
    answer = []
    while len(answer) < length:
        if rng.random() < 0.6:
            start = rng.randrange(len(prompt))
            answer += prompt[start : start + rng.randint(1, 12)]
        else:
            answer.append(rng.randrange(8))
    return answer[:length]


def random_workloads(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    workloads = []
    for _ in range(count):
        k = rng.randint(1, 5)
        min_n = rng.randint(1, 3)
        requests = []
        for i in range(rng.randint(1, 4)):
            # A first token of its own: no prefix cache hit between requests.
            prompt = [100 + i] + [rng.randrange(8) for _ in range(rng.randint(4, 40))]
            max_tokens = rng.randint(1, 40)
            requests.append({"request_id": f"r{i}", "prompt": prompt,
                             "answer": answer_for(rng, prompt, max_tokens + k),
                             "max_tokens": max_tokens})
        workloads.append({"config": {
            "num_spec_tokens": k, "prompt_lookup_min": min_n,
            "prompt_lookup_max": rng.randint(min_n, 5),
            "max_num_batched_tokens": rng.choice([8192, 8192, 12, 30]),
            "block_size": rng.choice([16, 4]), "num_gpu_blocks": 400,
        }, "requests": requests})
    return workloads


HAND_PICKED_WORKLOADS = [
    {"config": {"num_spec_tokens": 3, "prompt_lookup_min": 2, "prompt_lookup_max": 3,
                "max_num_batched_tokens": 8192, "block_size": 16, "num_gpu_blocks": 100},
     "requests": [{"request_id": "a", "prompt": [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3],
                   "answer": [4, 5, 6, 7, 8, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0],
                   "max_tokens": 16}]},
    # A budget of 6 tokens: the second request's drafts are cut to what fits.
    {"config": {"num_spec_tokens": 4, "prompt_lookup_min": 1, "prompt_lookup_max": 2,
                "max_num_batched_tokens": 6, "block_size": 4, "num_gpu_blocks": 100},
     "requests": [{"request_id": "a", "prompt": [100, 1, 2, 1, 2], "answer": [1, 2] * 8,
                   "max_tokens": 10},
                  {"request_id": "b", "prompt": [101, 3, 4, 3, 4], "answer": [3, 4] * 8,
                   "max_tokens": 10}]},
    # max_model_len 20 stops the request at 11 of its 15 tokens, in a verification step.
    {"config": {"num_spec_tokens": 3, "prompt_lookup_min": 1, "prompt_lookup_max": 2,
                "max_num_batched_tokens": 8192, "block_size": 4, "num_gpu_blocks": 100,
                "max_model_len": 20},
     "requests": [{"request_id": "a", "prompt": [100, 1, 2, 1, 2, 1, 2, 1, 2],
                   "answer": [1, 2] * 10, "max_tokens": 15}]},
]
WORKLOADS = HAND_PICKED_WORKLOADS + random_workloads(120, seed=7)
SEQUENCES = HAND_PICKED_SEQUENCES + random_sequences(400, seed=7)
