"""The scheduler settings on which test_capture_sizes_conformance.py compares lesson 8's
capture sizes with vLLM's: hand-picked edges and seeded random settings of max_num_seqs,
max_num_batched_tokens, speculative tokens, enforce-eager and the performance mode."""

import random

from startup_budget import PERFORMANCE_MODES

RANDOM_SETTINGS = 200


def setting(seqs, tokens, spec=0, eager=False, mode="balanced") -> dict:
    return {"max_num_seqs": seqs, "max_num_batched_tokens": tokens,
            "num_speculative_tokens": spec, "enforce_eager": eager, "performance_mode": mode}


EDGES = [
    setting(256, 8192), setting(256, 2048), setting(16, 8192), setting(1, 1),
    setting(3, 5000), setting(4, 7), setting(64, 100), setting(128, 256), setting(127, 255),
    setting(200, 300), setting(256, 512), setting(256, 513), setting(1024, 16384),
    setting(255, 8192), setting(256, 8192, eager=True), setting(100, 8192, spec=1),
    setting(256, 8192, spec=3), setting(5, 6, spec=2), setting(64, 8192, mode="interactivity"),
    setting(8, 20, mode="interactivity"), setting(256, 8192, mode="throughput"),
]


def random_settings(seed: int = 8) -> list[dict]:
    rng = random.Random(seed)
    found = []
    for _ in range(RANDOM_SETTINGS):
        seqs = rng.choice([rng.randint(1, 32), rng.randint(1, 600), 2 ** rng.randint(0, 10)])
        tokens = rng.choice([seqs, rng.randint(seqs, seqs + 600), rng.randint(seqs, 16384)])
        found.append(setting(seqs, tokens, rng.choice([0, 0, 0, 1, 2, 4]),
                             rng.random() < 0.1, rng.choice(PERFORMANCE_MODES)))
    return found


SETTINGS = EDGES + random_settings()
