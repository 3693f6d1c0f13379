"""The lab's check on lines built from vLLM 0.26.0's own format strings, and the wheel facts
the page and the stand-in quote: the custom all-reduce warning, its world sizes, the
vocabulary padding, VLLM_SKIP_P2P_CHECK's default and the one-GPU refusal."""

import ast

import pytest
from lab_tp_check import NO_P2P, compare, predicted

from coursekit import ROOT

STAND_IN = ROOT / "tests/stand_in_vllm/vllm/vllm/stand_in_parallelism.py"


def log(tokens: int, concurrency: float, extra: str = "") -> str:
    # vllm/v1/core/kv_cache_utils.py: the two lines' format strings
    return ("GPU KV cache size: %s tokens\n" % f"{tokens:,}"
            + "Maximum concurrency for %s tokens per request: %.2fx\n" % ("8,192", concurrency)
            + extra)


def test_the_check_holds_the_log_to_the_prediction():
    want = predicted(1)
    rows, problems = compare(1, log(want.tokens, want.max_concurrency))
    assert problems == [] and "74,896" in rows["GPU KV cache size, tokens"]
    _, problems = compare(1, log(want.tokens + 16, want.max_concurrency))
    assert problems
    two = predicted(2)
    rows, problems = compare(2, log(two.tokens, two.max_concurrency, NO_P2P))
    assert problems == [] and rows["all-reduce"].startswith("off")


def _strings(call: ast.Call) -> str:
    return "".join(a.value for a in ast.walk(call.args[0]) if isinstance(a, ast.Constant))


def test_the_warning_and_world_sizes_are_vllms(vllm_src):
    source = (vllm_src / "vllm/distributed/device_communicators/custom_all_reduce.py").read_text()
    warnings = [_strings(node) for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "warning"]
    assert any(w.startswith(NO_P2P) for w in warnings)
    assert "_SUPPORTED_WORLD_SIZES = [2, 4, 6, 8]" in source
    assert "max_size=8192 * 1024" in source
    envs = (vllm_src / "vllm/envs.py").read_text()
    assert '"VLLM_SKIP_P2P_CHECK": lambda: os.getenv("VLLM_SKIP_P2P_CHECK", "1") == "1"' in envs
    vocab = (vllm_src / "vllm/model_executor/layers/vocab_parallel_embedding.py").read_text()
    assert "DEFAULT_VOCAB_PADDING_SIZE = 64" in vocab


def test_the_stand_in_refuses_as_vllm_does(vllm_src):
    parallel = (vllm_src / "vllm/config/parallel.py").read_text()
    for part in ('f"World size ({self.world_size}) is larger than the number of "',
                 'f"available GPUs ({gpu_count}) in this node. If this is "',
                 '"intentional and you are using:\\n"',
                 '"- ray, set \'--distributed-executor-backend ray\'.\\n"',
                 '"- multiprocessing, set \'--nnodes\' appropriately."'):
        assert part in parallel, part
    namespace = {}
    exec(STAND_IN.read_text(), namespace)
    with pytest.raises(ValueError) as refused:
        namespace["check"]({"tensor_parallel_size": 2})
    assert str(refused.value) == (
        "World size (2) is larger than the number of available GPUs (1) in this node. If this"
        " is intentional and you are using:\n- ray, set '--distributed-executor-backend ray'.\n"
        "- multiprocessing, set '--nnodes' appropriately.")
    namespace["check"]({"tensor_parallel_size": 1})
