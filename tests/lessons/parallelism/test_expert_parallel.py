"""expert_parallel.expert_map: every expert on exactly one GPU, the first GPUs holding the
extra ones, round_robin's stride, and the edge vLLM's torch.arange fails on."""

import pytest
from expert_parallel import expert_map, held, ranks_reached


@pytest.mark.parametrize("strategy", ["linear", "round_robin"])
@pytest.mark.parametrize("ep,experts", [(8, 128), (8, 60), (3, 10), (16, 16)])
def test_every_expert_on_one_gpu(ep, experts, strategy):
    owners = [held(expert_map(ep, r, experts, strategy), experts) for r in range(ep)]
    assert sorted(e for held_ in owners for e in held_) == list(range(experts))


def test_the_first_gpus_take_the_extra_experts():
    assert [len(held(expert_map(8, r, 60), 60)) for r in range(8)] == [8] * 4 + [7] * 4
    assert held(expert_map(4, 1, 10, "round_robin"), 10) == [1, 5, 9]
    assert expert_map(1, 0, 128) is None


def test_bad_input_and_vllms_edge():
    with pytest.raises(ValueError, match="Unsupported expert placement strategy"):
        expert_map(2, 0, 8, "random")
    with pytest.raises(ValueError, match="ep_rank"):
        expert_map(2, 2, 8)
    with pytest.raises(ValueError, match="no expert"):
        expert_map(16, 9, 8, "round_robin")
    assert held(expert_map(16, 8, 8, "round_robin"), 8) == []  # an empty range: no error


def test_ranks_reached_is_between_one_and_all():
    assert ranks_reached(128, 8, 1) == 1
    assert 1 < ranks_reached(128, 8, 8) < 8
