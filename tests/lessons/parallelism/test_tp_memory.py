"""tp_memory, tp_budget and tp_comm: each GPU's share adds up to lesson 1's count, the
refusals come in vLLM's order, the pipeline split and the bad inputs, and the decode step
at TP 1 is lesson 1's own."""

import pytest
from decode_batch import BANDWIDTH, PEAK_BF16, decode_step
from hf_config import read_presets
from model_weights import count
from tp_budget import gpu_budget
from tp_comm import LINKS, comm_seconds, gpu_seconds, ring_factor
from tp_memory import (
    kv_head_replicas,
    kv_tokens,
    layer_parameters,
    layout,
    pp_indices,
    refusal,
    vocab_rows,
)

DENSE = ["Qwen2.5-0.5B-Instruct", "Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct",
         "Qwen2.5-72B-Instruct", "Qwen3-8B", "Llama-3.1-8B-Instruct", "Mistral-7B-Instruct-v0.3"]


@pytest.mark.parametrize("name", DENSE)
def test_one_gpu_holds_lesson_1s_count(name):
    config = read_presets()[name].config
    assert [r.parameters for r in layout(config, 1)] == [count(config).total]


@pytest.mark.parametrize("name", DENSE)
def test_stages_add_up_to_the_whole_model(name):
    config = read_presets()[name].config
    stages = layout(config, 1, 4)
    assert sum(r.parameters for r in stages) == count(config).total + (
        # a tied table sits on the first and the last stage
        config["vocab_size"] * config["hidden_size"] if config.get("tie_word_embeddings")
        else 0)


def test_tp_splits_all_but_the_norms():
    qwen = read_presets()["Qwen2.5-7B-Instruct"].config
    h = qwen["hidden_size"]
    for tp in (2, 4):  # 4 KV heads: no copies up to TP 4
        assert tp * layer_parameters(qwen, tp) == layer_parameters(qwen, 1) + (tp - 1) * 2 * h


def test_refusals_in_vllms_order():
    qwen = read_presets()["Qwen2.5-7B-Instruct"].config
    assert refusal(qwen, 3).startswith("ValueError: Total number of attention heads (28)")
    assert refusal(qwen, 7) == "AssertionError at model build: 4 KV heads and TP 7"
    assert refusal(qwen, 28) == "AssertionError at model build: 18944 is not divisible by 28"
    with pytest.raises(ValueError, match="vLLM refuses TP 8"):
        layout(qwen, 8)
    with pytest.raises(ValueError, match="positive integer"):
        refusal(qwen, 0)
    with pytest.raises(ValueError, match="pipeline size"):
        layout(qwen, 1, 29)


def test_kv_heads_are_copied_past_their_number():
    small = read_presets()["Qwen2.5-1.5B-Instruct"].config  # 2 KV heads
    assert [kv_head_replicas(2, tp) for tp in (1, 2, 4)] == [1, 1, 2]
    assert {r.kv_heads for r in layout(small, 4)} == {1}


def test_pp_split_and_partition_errors():
    assert [pp_indices(28, s, 3) for s in range(3)] == [(0, 9), (9, 19), (19, 28)]
    assert [pp_indices(80, s, 3) for s in range(3)] == [(0, 27), (27, 54), (54, 80)]
    assert pp_indices(28, 1, 2, "10,18") == (10, 28)
    with pytest.raises(ValueError, match="does not match num_hidden_layers"):
        pp_indices(28, 0, 2, "10,17")
    with pytest.raises(ValueError, match="Invalid partition string"):
        pp_indices(28, 0, 2, "a,b")
    with pytest.raises(ValueError, match="pp_rank"):
        pp_indices(28, 2, 2)


def test_vocab_padding_goes_to_the_last_ranks():
    assert [vocab_rows(130, 2, r) for r in range(2)] == [(96, 96), (96, 34)]
    with pytest.raises(ValueError, match="not divisible"):
        vocab_rows(100, 3, 0)


def test_tp_2_holds_twice_the_blocks_in_the_same_memory():
    qwen = read_presets()["Qwen2.5-7B-Instruct"].config
    one, two = (kv_tokens(qwen, layout(qwen, tp)[0], 4 * 1024**3, 8192) for tp in (1, 2))
    assert two.num_blocks == 2 * one.num_blocks


def test_the_budget_refuses_what_does_not_fit():
    budget, tokens, _ = gpu_budget("Qwen2.5-7B-Instruct", 2)
    _, one, _ = gpu_budget("Qwen2.5-7B-Instruct", 1)
    assert tokens > 4 * one and budget.kv > 0
    with pytest.raises(ValueError, match="no memory left"):
        gpu_budget("Qwen2.5-32B-Instruct", 2)


def test_tp_1_step_is_lesson_1s():
    qwen = read_presets()["Qwen2.5-7B-Instruct"].config
    for batch, context in ((1, 1024), (64, 1024), (16, 4096)):
        read, weight_flops, attention_flops = decode_step(batch, context)
        lesson_1 = max(read / BANDWIDTH, (weight_flops + attention_flops) / PEAK_BF16)
        assert gpu_seconds(qwen, 1, batch, context) == pytest.approx(lesson_1, rel=1e-12)
        assert comm_seconds(qwen, 1, batch, LINKS["NVLink"]) == 0


def test_ring_factor():
    assert [ring_factor(n) for n in (1, 2, 4, 8)] == [0, 1, 1.5, 1.75]
    with pytest.raises(ValueError):
        ring_factor(0)
