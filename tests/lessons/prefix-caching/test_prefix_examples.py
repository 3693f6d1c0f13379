"""The prefix caching lesson's worked examples print what vLLM 0.26.0's rules predict (each
expected number below is worked out by hand from the rules, not read off the simulator; the
snippet tests check that each recorded output is what its code prints), and the pages state
what the wheel says about hash algorithms, cache_salt, the last-token rule and the metrics."""

import re

from coursekit import ROOT
from coursekit.vllm_claims import claims

HERE = ROOT / "snippets" / "prefix-caching"
PAGES = {language: (ROOT / f"docs/lessons/prefix-caching.{language}.md").read_text("utf-8")
         for language in ("zh", "en")}


def out(name: str) -> str:
    return (HERE / f"{name}.out").read_text("utf-8")


def max_hit(n: int) -> int:
    """Whole 16-token blocks, never the last prompt token."""
    return (n - 1) // 16 * 16


def test_hit_length_table():
    rows = [list(map(int, line.split())) for line in out("hit_length").splitlines()[1:]]
    assert [row[0] for row in rows] == [10, 15, 16, 17, 32, 33, 1000, 1024, 1030]
    for n, full_blocks, hit, recomputed, formula in rows:
        assert (full_blocks, hit, recomputed, formula) == (n // 16, max_hit(n), n - max_hit(n),
                                                          max_hit(n))


def test_system_prompt_worked_example():
    text = out("system_prompt")
    # bob shares the 62 full blocks of the 1,000-token system prompt; block 62 mixes the
    # system prompt's last 8 tokens with his question.
    assert re.search(r"bob +1045 tokens: +992 cached \(62 blocks\)", text)
    assert re.search(r"alice-again +1030 tokens: +1024 cached \(64 blocks\), +6 to prefill",
                     text)
    assert f"hit rate {992 + 1024} / {1030 + 1045 + 1030} tokens = 64.9%" in text
    # Lesson 1: 2 * 28 layers * 4 KV heads * 128 * 2 bytes per token for Qwen2.5-7B.
    assert f"{992 * 2 * 28 * 4 * 128 * 2:,} bytes = 54.25 MiB" in text


def test_one_token_changed():
    found = {int(p): (int(hit), int(same)) for p, hit, same in re.findall(
        r"token +(\d+) changed \(block +\d+\): +(\d+) cached; \d+ of 62 full blocks hold the"
        r" same tokens, (\d+) the same hash", out("one_token_changed"))}
    # A change in block k keeps blocks 0..k-1; the partial block 62 is recomputed anyway.
    assert found == {999: (992, 62), 500: (31 * 16, 31), 3: (0, 0)}


def test_a_short_system_prompt_gives_zero_hits():
    text = out("short_system_prompt")
    assert "12 tokens: cached tokens per request [0, 0, 0, 0, 0], hit rate 0 / 160 = 0.0%" in text
    # 40 tokens: 2 full blocks shared by the four later requests, over 5 * 60 tokens.
    assert f"[0, 32, 32, 32, 32], hit rate 128 / {5 * 60} = 42.7%" in text


def test_multi_turn_hits_earlier_answers():
    rows = re.findall(r"prompt +(\d+) tokens, +(\d+) cached, +(\d+) of them earlier answers;"
                      r" computed (\d+)", out("multi_turn"))
    rows = [tuple(map(int, row)) for row in rows]
    # turn 1: 100 + 20 prompt, 50 answer; turn 2 adds 25 + 60; turn 3 adds 15 + 40.
    # Each turn hits the full blocks of what the previous turn computed (prompt + answer - 1).
    assert rows == [
        (120, 0, 0, 169),
        (195, 169 // 16 * 16, 169 // 16 * 16 - 120, 254),
        (270, 254 // 16 * 16, 50 + (254 // 16 * 16 - 195), 309),
    ]


def test_cache_salt_isolates_tenants():
    text = out("cache_salt_tenants")
    cached = [int(n) for n in re.findall(r"(\d+) cached", text)]
    assert cached == [0, max_hit(1030), 0, max_hit(1030), 0]
    assert "blocks with the same hash: 0 of 64" in text


def test_eviction_trace():
    text = out("eviction_trace")
    assert "C  72 tokens: cached  0, table [5, 6, 7, 4, 3], hit [], evicted [4, 3]" in text
    assert text.count("usage 0%") == 5
    assert "hit rate 64 / 232 = 27.6%" in text  # A2 and A3 hit 32 each, of 40 * 4 + 72


def test_hit_rate_is_token_weighted():
    text = out("hit_rate_weighting")
    queries, hits = 2 * 4000 + 8 * 20, max_hit(4000)
    assert f"10 requests, {queries} prompt tokens, {hits} cached" in text
    assert f"token-weighted (vLLM's): {hits / queries:.1%}" in text
    assert f"mean of per-request rates: {hits / 4000 / 10:.1%}" in text


def test_chain_picture_and_hash_root():
    text = out("chain_picture")
    assert "hit 48 tokens, blocks [1, 2, 3]" in text and "hit 16 tokens, blocks [1]" in text
    # The root of PYTHONHASHSEED=0 gives prefix_cache.py's hashes for the same tokens.
    cached = out("prefix_cache")
    first, second = re.search(r"\{1: '(\w+)', 2: '(\w+)'\}", cached).groups()
    assert f"block hashes: ['{first}', '{second}']" in out("hash_root")


def test_quiz_answers():
    assert f"cached {max_hit(2048)} of 2048, recomputed 16" in out("quiz_exact_multiple")
    assert f"one token less (2047): {max_hit(2047)} cached" in out("quiz_exact_multiple")
    assert f": {100 // 16 * 16} cached" in out("quiz_changed_token")
    assert f"hit rate {9 * 16} / {10 * 30} = 48.0%" in out("quiz_short_system")


def test_the_simulator_cites_vllm_where_it_mirrors_it():
    cited = {(claim.name, claim.value) for claim in claims(ROOT)
             if claim.kind == "source" and "prefix-caching/prefix_cache.py" in claim.where}
    assert {
        ("vllm/v1/core/kv_cache_utils.py", "init_none_hash"),
        ("vllm/v1/core/kv_cache_utils.py", "hash_block_tokens"),
        ("vllm/v1/core/kv_cache_manager.py", "KVCacheManager.get_computed_blocks"),
        ("vllm/v1/core/block_pool.py", "BlockPool.touch"),
        ("vllm/v1/core/block_pool.py", "BlockPool.reset_prefix_cache"),
        ("vllm/v1/metrics/stats.py", "PrefixCacheStats.record"),
    } <= cited


def test_the_accepted_hash_algorithms_are_the_wheels(vllm_src):
    cache = (vllm_src / "vllm/config/cache.py").read_text("utf-8")
    literal = re.search(r"^PrefixCachingHashAlgo = Literal\[(.*)\]$", cache, re.M)[1]
    accepted = re.findall(r'"(\w+)"', literal)
    assert accepted == ["sha256", "sha256_cbor", "xxhash", "xxhash_cbor"]
    assert 'prefix_caching_hash_algo: PrefixCachingHashAlgo = "sha256"' in cache
    for page in PAGES.values():
        row = next(line for line in page.splitlines()
                   if line.startswith("| `prefix_caching_hash_algo`"))
        named = re.findall(r"`(\w+)`", row.split("|")[4])
        assert [name for name in named if name in accepted or "hash" in name] == \
            accepted + ["xxhash"]  # the four values, then the package the last two need


def test_the_rules_the_pages_state_are_in_the_wheel(vllm_src):
    def source(path):
        return (vllm_src / "vllm" / path).read_text("utf-8")

    assert "[request.cache_salt] if (start_token_idx == 0 and request.cache_salt) else []" \
        in source("v1/core/kv_cache_utils.py")
    manager = source("v1/core/kv_cache_manager.py")
    assert "max_cache_hit_length = request.num_tokens - 1" in manager
    assert "if not self.enable_caching or request.skip_reading_prefix_cache:" in manager
    assert "self.skip_reading_prefix_cache = self.prompt_logprobs is not None" \
        in source("sampling_params.py")
    assert "def __init__(self, max_recent_requests: int = 1000) -> None:" \
        in source("v1/metrics/stats.py")
    loggers = source("v1/metrics/loggers.py")
    assert '"GPU KV cache usage: %.1f%%",\n                "Prefix cache hit rate: %.1f%%",' \
        in loggers
    for name in ("vllm:prefix_cache_queries", "vllm:prefix_cache_hits"):
        assert f'name="{name}"' in loggers
    # Counters are prometheus_client's, which export "<name>_total".
    assert "    _counter_cls = Counter\n" in loggers
    assert 'os.getenv("VLLM_LOG_STATS_INTERVAL", "10.")' in source("envs.py")
    for page in PAGES.values():
        for quoted in ("max_cache_hit_length = request.num_tokens - 1",
                       "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
                       "GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%"):
            assert quoted in page
        window = re.findall(r"(?:最近 ?|most recent )(\d+) ?(?:个请求|requests)", page)
        assert window and set(window) == {"1000"}, window
