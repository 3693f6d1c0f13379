"""The dry run's stand-in for vLLM (tests/stand_in_vllm) has a prefix cache of its own
(stand_in.PrefixIndex: it compares the token ids of whole prefixes, no hash, and counts
free blocks), written from vLLM 0.26.0's source and sharing no code with the lesson's
prefix_cache.py. On random sequences of requests (shared prefixes, a changed token,
conversations that send an answer back, resets, pools small enough to evict) the two
agree on every request's cached tokens, on the two counters and on how many blocks stay
cached. The stand-in's reset fails while a request holds blocks, as vLLM's does, and it
refuses what it does not model."""

import ast
import random

import pytest
from prefix_cache import PrefixCache

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def core(engine, blocks, caching=True):
    started = engine.start(MODEL, {
        "max_model_len": 16 * (blocks - 1), "num_gpu_blocks_override": blocks,
        "max_num_batched_tokens": 4096, "max_num_seqs": 4,
        "enable_prefix_caching": caching}, "LLM_CLASS")
    return engine.Scheduler(started, log_stats=True), engine.StatLoggers(started, True)


def output_of(max_tokens):
    """The token ids the stand-in's model samples (stand_in.Scheduler.engine_step)."""
    return [1000 + i % 100 for i in range(max_tokens)]


def run_one(engine, scheduler, stats, name, prompt, max_tokens):
    """One request, alone, to its end, as LLM.generate runs it; its cached tokens."""
    request = engine.Request(name, prompt, max_tokens, ignore_eos=True)
    scheduler.add_request(request)
    while scheduler.has_unfinished_requests():
        result = scheduler.engine_step()
        if result.sampled:  # LLMEngine.step records the steps with outputs
            stats.record(result, iteration_stats=True)
    return request.num_cached_tokens


def random_run(seed):
    """Blocks, and requests or resets: (name, prompt, max_tokens) or None."""
    rng = random.Random(seed)
    blocks = rng.randint(3, 12)
    most = 16 * (blocks - 1)  # tokens a request may hold
    bases = [[rng.randint(1, 3) for _ in range(most)] for _ in range(2)]
    steps, previous = [], None
    for n in range(rng.randint(1, 10)):
        if rng.random() < 0.15:
            steps.append(None)
        max_tokens = rng.randint(1, 20)
        room = most - max_tokens
        if previous and rng.random() < 0.3:  # a conversation: the answer sent back
            prompt = previous[1] + output_of(previous[2]) + [rng.randint(1, 3)] * 5
        else:
            prompt = list(rng.choice(bases)[: rng.randint(1, room)])
            if rng.random() < 0.3:
                prompt[rng.randrange(len(prompt))] = 9
        prompt = prompt[:room]
        previous = (f"R{n}", prompt, max_tokens)
        steps.append(previous)
    return blocks, steps


# 150 seeded runs, 25 to a test (a test each cost pytest-xdist more than running it). The
# stand-in keeps no state between runs: each starts its own engine core.
SEEDS = [range(start, start + 25) for start in range(0, 150, 25)]


@pytest.mark.parametrize("seeds", SEEDS, ids=lambda seeds: f"{seeds.start}-{seeds.stop - 1}")
def test_it_agrees_with_the_lesson_simulator(engine, capsys, seeds):
    for seed in seeds:
        blocks, steps = random_run(seed)
        scheduler, stats = core(engine, blocks)
        cache = PrefixCache(blocks)
        for step in steps:
            if step is None:
                assert scheduler.reset_prefix_cache() is cache.reset_prefix_cache() is True
                continue
            name, prompt, max_tokens = step
            expected = cache.run(name, prompt, max_tokens, output=output_of(max_tokens))
            assert run_one(engine, scheduler, stats, *step) == expected, (seed, steps)
            assert sum(scheduler.prefix_index.free.values()) == len(cache.cached_blocks), seed
        assert stats.prefix_cache == {"vllm:prefix_cache_queries": cache.queries,
                                      "vllm:prefix_cache_hits": cache.hits}, seed


def test_the_random_runs_hit_evict_and_reset():
    """The random runs exercise what they should: hits, evictions, resets, conversations."""
    hits = evictions = resets = 0
    for seed in range(150):
        blocks, steps = random_run(seed)
        cache = PrefixCache(blocks)
        for step in steps:
            if step is None:
                resets += 1
                cache.reset_prefix_cache()
                continue
            name, prompt, max_tokens = step
            hits += bool(cache.run(name, prompt, max_tokens, output=output_of(max_tokens)))
            evictions += bool(cache.history[-1].evicted)
    assert min(hits, evictions, resets) > 30, (hits, evictions, resets)


def test_its_reset_fails_while_a_request_holds_blocks(engine, capsys):
    scheduler, _ = core(engine, 10)
    scheduler.add_request(engine.Request("a", [5] * 40, 3, ignore_eos=True))
    scheduler.engine_step()  # a holds 3 blocks
    capsys.readouterr()
    assert scheduler.reset_prefix_cache() is False
    assert ("WARNING" in (log := capsys.readouterr().out)
            and "[block_pool.py:772] Failed to reset prefix cache because some blocks (3)"
                " are not freed yet" in log)
    while scheduler.has_unfinished_requests():
        scheduler.engine_step()
    assert scheduler.reset_prefix_cache() is True
    assert "[block_pool.py:790] Successfully reset prefix cache" in capsys.readouterr().out


def test_left_at_its_default_it_counts_queries_and_finds_no_hit(engine):
    """As the labs of lessons 2 and 3 need it; off, it counts nothing."""
    for caching, queries in ((None, 200), (False, 0)):
        scheduler, stats = core(engine, 20, caching)
        for name in ("a", "b"):
            assert run_one(engine, scheduler, stats, name, [5] * 100, 1) == 0
        assert stats.prefix_cache == {"vllm:prefix_cache_queries": queries,
                                      "vllm:prefix_cache_hits": 0}


def test_it_refuses_two_running_requests_sharing_a_block(engine):
    scheduler, _ = core(engine, 20)
    scheduler.add_request(engine.Request("a", [5] * 40, 5, ignore_eos=True))
    scheduler.engine_step()
    scheduler.add_request(engine.Request("b", [5] * 40, 5, ignore_eos=True))
    with pytest.raises(engine.StandInError, match="two running requests sharing"):
        scheduler.engine_step()


def test_it_refuses_a_cache_salt(engine):
    with pytest.raises(engine.StandInError, match="does not model a prompt's cache_salt"):
        engine.dry_run_prompt_tokens({"prompt_token_ids": [1, 2], "cache_salt": "x"})


def test_its_counters_are_vllms(engine, vllm_src):
    """Names and documentation as PrometheusStatLogger registers them."""
    loggers = ast.parse((vllm_src / "vllm/v1/metrics/loggers.py").read_text("utf-8"))
    registered = {}
    for node in ast.walk(loggers):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "_counter_cls":
            keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords
                        if k.arg in ("name", "documentation")}
            registered[keywords["name"]] = keywords["documentation"]
    for name, documentation in engine.COUNTER_HELP.items():
        assert registered[name] == documentation, name
