"""Lesson 11's tp_memory and expert_parallel give what vLLM 0.26.0's own code gives
(parallelism_vllm_side.py, run once for this module in the conformance venv): per TP size the
refusal of ModelConfig.verify_with_parallel_config (its exact message), the KV heads and
attention heads per GPU (ModelConfig.get_num_kv_heads, get_num_attention_heads) and the layers'
size checks; the layers of each pipeline stage (get_pp_indices, with and without
VLLM_PP_LAYER_PARTITION, and ModelConfig.get_layers_start_end_indices); the padded vocabulary
and each rank's rows (pad_vocab_size, VocabParallelEmbedding._get_indices); and each GPU's
experts (determine_expert_map). Qwen2.5-7B, 32B and 72B as the presets have them, hand-picked
edges and seeded random sizes."""

import random
from pathlib import Path

import pytest
from expert_parallel import expert_map
from hf_config import read_presets
from tp_memory import kv_heads_per_rank, pp_indices, refusal, vocab_rows

from coursekit.vllm_source import run_in_conformance_venv

DRIVER = Path(__file__).with_name("parallelism_vllm_side.py")
TPS = [1, 2, 3, 4, 5, 6, 7, 8, 16]
REAL = ["Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct", "Qwen2.5-72B-Instruct"]
RANDOM_CONFIGS, RANDOM_PP, RANDOM_VOCAB, RANDOM_EXPERTS = 40, 150, 150, 60


def random_config(rng: random.Random) -> dict:
    kv = rng.choice([1, 2, 3, 4, 5, 6, 8, 16])
    heads = kv * rng.choice([1, 2, 3, 4, 5, 7, 8])
    head_dim = rng.choice([64, 128])
    return {"architectures": ["Qwen2ForCausalLM"], "num_hidden_layers": rng.randint(1, 90),
            "num_attention_heads": heads, "num_key_value_heads": kv,
            "hidden_size": heads * head_dim, "intermediate_size": 32 * rng.randint(1, 900),
            "vocab_size": rng.randint(1000, 200_000), "tie_word_embeddings": rng.random() < .3,
            "max_position_embeddings": 32768}


def inputs() -> dict:
    rng = random.Random(11)
    configs = [read_presets()[name].config for name in REAL]
    configs += [random_config(rng) for _ in range(RANDOM_CONFIGS)]
    tp_cases = [{"config": c, "tps": TPS, "layouts": [[1, 2], [2, 3], [1, 4]]} for c in configs]
    pp = [[28, 3, None], [28, 8, None], [80, 3, None], [64, 6, None], [5, 4, None], [2, 4, None],
          [28, 2, "10,18"], [28, 2, "10,17"], [28, 3, "10,18"], [28, 2, "a,b"]]
    pp += [[rng.randint(1, 120), rng.randint(1, 16), None] for _ in range(RANDOM_PP)]
    vocab = [[152064, 8], [151936, 4], [151937, 2], [100, 3], [32000, 16], [64, 128]]
    vocab += [[rng.randint(1, 300_000), rng.choice([1, 2, 3, 4, 6, 8, 16])]
              for _ in range(RANDOM_VOCAB)]
    experts = [[1, 128, "linear"], [8, 128, "linear"], [8, 60, "linear"], [8, 60, "round_robin"],
               [3, 128, "round_robin"], [16, 8, "linear"]]
    experts += [[rng.randint(1, 16), rng.randint(1, 300), rng.choice(["linear", "round_robin"])]
                for _ in range(RANDOM_EXPERTS)]
    return {"tp": tp_cases, "pp": pp, "vocab": vocab, "experts": experts}


@pytest.fixture(scope="module")
def given() -> dict:
    return inputs()


@pytest.fixture(scope="module")
def vllm(given) -> dict:
    return run_in_conformance_venv(DRIVER, given)


def test_tp_refusals_and_heads_per_gpu(given, vllm):
    compared, refused, built_refused, replicated = 0, 0, 0, 0
    for case, answer in zip(given["tp"], vllm["tp"], strict=True):
        c = case["config"]
        for row in answer["tp"]:
            tp, ours = row["tp"], refusal(c, row["tp"])
            if row["refused"]:
                assert ours == f"ValueError: {row['refused']}", (c, tp)
                refused += 1
            elif row["layers_build"]:
                assert ours is not None and ours.startswith("AssertionError at model build"), (
                    c, tp, row["layers_build"])
                built_refused += 1
            else:
                assert ours is None, (c, tp, ours)
            assert kv_heads_per_rank(c["num_key_value_heads"], tp) == row["kv_heads"], (c, tp)
            assert c["num_attention_heads"] // tp == row["heads"], (c, tp)
            replicated += tp > c["num_key_value_heads"] and not ours
            compared += 1
    assert compared == len(given["tp"]) * len(TPS)
    assert refused >= 50 and built_refused >= 10 and replicated >= 20, (
        refused, built_refused, replicated)


def test_the_real_models_refusals():
    """7B: 28 heads; TP 7 passes vLLM's config check and fails at the layers (4 KV heads)."""
    qwen = read_presets()["Qwen2.5-7B-Instruct"].config
    assert refusal(qwen, 8) == ("ValueError: Total number of attention heads (28) must be"
                                " divisible by tensor parallel size (8).")
    assert refusal(qwen, 7).startswith("AssertionError at model build")
    assert refusal(qwen, 4) is None


def test_stage_layers(given, vllm):
    for case, answer in zip(given["tp"], vllm["tp"], strict=True):
        layers = case["config"]["num_hidden_layers"]
        for (tp, pp), ranks in zip(case["layouts"], answer["layouts"], strict=True):
            ours = [list(pp_indices(layers, rank // tp % pp, pp)) for rank in range(tp * pp)]
            assert ours == ranks, (layers, tp, pp)
    for (layers, pp, partition), theirs in zip(given["pp"], vllm["pp"], strict=True):
        try:
            ours = [list(pp_indices(layers, rank, pp, partition)) for rank in range(pp)]
        except ValueError as error:
            ours = str(error)
        assert ours == theirs, (layers, pp, partition)
    assert sum(isinstance(theirs, str) for theirs in vllm["pp"]) == 3


def test_vocab_rows_per_rank(given, vllm):
    padded_some = 0
    for (vocab, tp), theirs in zip(given["vocab"], vllm["vocab"], strict=True):
        if "error" in theirs:
            with pytest.raises(ValueError, match=theirs["error"]):
                vocab_rows(vocab, tp, 0)
            continue
        assert [list(vocab_rows(vocab, tp, rank)) for rank in range(tp)] == theirs["shards"]
        padded_some += theirs["padded"] > vocab
    assert padded_some >= 100


def test_expert_maps(given, vllm):
    uneven, crashes = 0, 0
    for (ep, experts, strategy), theirs in zip(given["experts"], vllm["experts"], strict=True):
        for rank, answer in enumerate(theirs):
            if isinstance(answer, str):  # vLLM's torch.arange fails: ours refuses it
                with pytest.raises(ValueError, match="no expert"):
                    expert_map(ep, rank, experts, strategy)
                crashes += 1
                continue
            local, mapping = answer
            ours = expert_map(ep, rank, experts, strategy)
            assert ours == mapping, (ep, experts, strategy, rank)
            assert (experts if ours is None else sum(i >= 0 for i in ours)) == local
        uneven += len({answer[0] for answer in theirs if not isinstance(answer, str)}) > 1
    assert uneven >= 20 and crashes >= 1, (uneven, crashes)
