"""launch_overhead.py: lesson 4's GPU floor against the estimated CPU launch time; the
7B step is the GPU's at batch 1, a small model's is the CPU's."""

import pytest
from launch_overhead import eager_cpu_ms, gpu_floor_ms, kernels_per_step
from quant_memory import decode_floor_ms


def test_the_floor_is_lesson_4s():
    assert gpu_floor_ms("Qwen2.5-7B-Instruct") == decode_floor_ms(
        "Qwen2.5-7B-Instruct", "bf16", 1, 1024
    )
    assert round(gpu_floor_ms("Qwen2.5-7B-Instruct"), 2) == 14.09


def test_who_sets_the_step():
    assert eager_cpu_ms("Qwen2.5-7B-Instruct") < gpu_floor_ms("Qwen2.5-7B-Instruct")
    assert eager_cpu_ms("Qwen2.5-0.5B-Instruct") > gpu_floor_ms("Qwen2.5-0.5B-Instruct")
    assert kernels_per_step("Qwen2.5-7B-Instruct") == 28 * 15 + 10


def test_an_unknown_model_is_refused():
    with pytest.raises(ValueError, match="unknown preset"):
        kernels_per_step("GPT-5")
