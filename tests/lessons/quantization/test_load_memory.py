"""load_memory.py: PyTorch's caching allocator as it charges a new tensor, worked by hand;
vLLM 0.26.0's load-time split limit, read from the wheel; and the model held against what
others published of "Model loading took" (someone else's measurements, older vLLM)."""

import pytest
from load_memory import (
    LOAD_MAX_SPLIT,
    MIB,
    NO_LIMIT,
    allocator_charge,
    loading_parts,
    weight_tensors,
)
from quant_memory import weight_bytes

from coursekit import vllm_source

GIB = 1024**3


@pytest.mark.parametrize(("size", "no_limit", "split_20"), [
    (4, 512, 512),  # a float32 scalar: the small pool's 512 bytes
    (9216, 9216, 9216),  # a bias, already a multiple of 512
    (8 * MIB, 8 * MIB, 8 * MIB),  # RoPE's table: a 20 MiB segment, split
    (33_030_144, 32 * MIB, 32 * MIB),  # qkv_proj, 31.5 MiB: 0.5 MiB left, not split
    (25_690_112, 25_690_112, 26 * MIB),  # o_proj, 24.5 MiB: split only without a limit
    (int(12.25 * MIB), int(12.25 * MIB), int(12.25 * MIB)),  # under 20 MiB: split
])
def test_the_allocator_charges_blocks(size, no_limit, split_20):
    assert allocator_charge(size, NO_LIMIT) == no_limit
    assert allocator_charge(size, LOAD_MAX_SPLIT) == split_20


def test_vllm_loads_with_a_split_limit_of_20_mib():
    source = (vllm_source.source_dir() / "vllm/v1/worker/gpu_worker.py").read_text("utf-8")
    assert "self._scoped_allocator_max_split(max_split_size_mb=20)," in source
    assert LOAD_MAX_SPLIT == 20 * MIB


def test_every_tensor_is_counted():
    for fmt in ("bf16", "fp8", "awq-int4-g128", "gptq-int4-g128"):
        assert sum(weight_tensors("Qwen2.5-7B-Instruct", fmt)) == weight_bytes(
            "Qwen2.5-7B-Instruct", fmt)


def test_the_model_meets_published_loading_lines():
    """Published logs of older vLLM (PyTorch's default allocator, no split limit):
    Qwen2-7B-Instruct, the same shapes as Qwen2.5-7B-Instruct, "14.2488 GiB" (V1 runner,
    2025) and "14.25 GiB" (vLLM 0.8.5); Llama-3.1-8B "14.9888 GB" (V0 engine, which kept no
    attention scalars on the GPU). vLLM 0.26.0's 20 MiB limit adds 42 MiB for Qwen: each
    24.5 MiB o_proj keeps its 26 MiB segment."""
    qwen = loading_parts("Qwen2.5-7B-Instruct", "bf16", NO_LIMIT)
    assert round(sum(qwen.values()) / GIB, 4) == 14.2488
    assert qwen["rounding"] == 57 * MIB and qwen["rope"] == 8 * MIB
    llama = loading_parts("Llama-3.1-8B-Instruct", "bf16", NO_LIMIT)
    assert round((sum(llama.values()) - llama["scalars"]) / GIB, 4) == 14.9888
    new = loading_parts("Qwen2.5-7B-Instruct", "bf16", LOAD_MAX_SPLIT)
    assert new["rounding"] - qwen["rounding"] == 28 * (26 * MIB - 25_690_112)
    assert round(sum(new.values()) / GIB, 2) == 14.29
