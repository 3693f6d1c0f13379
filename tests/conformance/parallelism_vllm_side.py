"""vLLM 0.26.0's own answers for lesson 11's parallel layouts, printed as JSON: the other side
of test_parallelism_conformance.py, which runs it once per test module in the conformance venv
(.ci/setup: the pinned wheel, PyTorch's CPU build).

For each model config (written to a folder as config.json; no weights, no hub) and TP size it
builds a real ModelConfig and ParallelConfig and asks ModelConfig.verify_with_parallel_config,
get_num_kv_heads and get_num_attention_heads; for layer splits, vllm/distributed/utils.py:
get_pp_indices (with and without VLLM_PP_LAYER_PARTITION) and
ModelConfig.get_layers_start_end_indices; for the vocabulary,
vllm/model_executor/layers/vocab_parallel_embedding.py: pad_vocab_size and
VocabParallelEmbedding._get_indices; for experts,
vllm/model_executor/layers/fused_moe/expert_map_manager.py: determine_expert_map.

What cannot run on the CPU: building the layers themselves (QKVParallelLinear,
MergedColumnParallelLinear, VocabParallelEmbedding.__init__), which needs an initialised
tensor-parallel process group. Their size checks are vLLM's own `divide`
(vllm/distributed/utils.py), applied here to the sizes each __init__ passes it (quoted
beside each call); nothing of vLLM is stubbed.

    python parallelism_vllm_side.py < inputs.json > outputs.json
"""

import json
import os
import sys
import tempfile
from pathlib import Path

# vLLM's own logging writes to stdout, where the results go: leave Python's default.
os.environ["VLLM_CONFIGURE_LOGGING"] = "0"

from vllm import config as vc  # noqa: E402
from vllm.distributed.utils import divide, get_pp_indices  # noqa: E402
from vllm.model_executor.layers.fused_moe.expert_map_manager import (  # noqa: E402
    determine_expert_map,
)
from vllm.model_executor.layers.vocab_parallel_embedding import (  # noqa: E402
    VocabParallelEmbedding,
    pad_vocab_size,
)

# What transformers needs besides the fields the course reads (Qwen2's config.json).
QWEN2 = {"model_type": "qwen2", "hidden_act": "silu", "rms_norm_eps": 1e-06,
         "rope_theta": 1000000.0, "torch_dtype": "bfloat16", "max_window_layers": 28,
         "use_sliding_window": False, "sliding_window": 131072}


def model_config(config: dict, folder: Path) -> vc.ModelConfig:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**QWEN2, **config}))
    return vc.ModelConfig(model=str(folder), skip_tokenizer_init=True, dtype="bfloat16",
                          max_model_len=2048)


def layers_build(config: dict, tp: int) -> str | None:
    """The size checks of the layers' __init__, with vLLM's divide: None if all pass."""
    kv, heads = config["num_key_value_heads"], config["num_attention_heads"]
    try:
        divide(heads, tp)  # QKVParallelLinear: self.num_heads = divide(total_num_heads, tp)
        if tp >= kv:  # ... num_kv_head_replicas = divide(tp_size, total_num_kv_heads)
            divide(tp, kv)
        else:  # ... num_kv_heads = divide(total_num_kv_heads, tp_size)
            divide(kv, tp)
        divide(config["intermediate_size"], tp)  # MergedColumnParallelLinear
        divide(pad_vocab_size(config["vocab_size"]), tp)  # VocabParallelEmbedding
    except AssertionError as error:
        return str(error)
    return None


def tp_answers(cases: list[dict]) -> list[dict]:
    answers = []
    with tempfile.TemporaryDirectory() as work:
        for n, case in enumerate(cases):
            model = model_config(case["config"], Path(work) / str(n))
            rows = []
            for tp in case["tps"]:
                parallel = vc.ParallelConfig(tensor_parallel_size=tp)
                try:
                    model.verify_with_parallel_config(parallel)
                    refused = None
                except ValueError as error:
                    refused = str(error)
                rows.append({"tp": tp, "refused": refused,
                             "kv_heads": model.get_num_kv_heads(parallel),
                             "heads": model.get_num_attention_heads(parallel),
                             "layers_build": layers_build(case["config"], tp)})
            stages = []
            for tp, pp in case["layouts"]:
                parallel = [vc.ParallelConfig(tensor_parallel_size=tp, pipeline_parallel_size=pp,
                                              rank=rank) for rank in range(tp * pp)]
                stages.append([list(model.get_layers_start_end_indices(p)) for p in parallel])
            answers.append({"tp": rows, "layouts": stages})
    return answers


def pp_answers(cases: list[list]) -> list:
    answers = []
    for layers, pp, partition in cases:
        if partition is None:
            os.environ.pop("VLLM_PP_LAYER_PARTITION", None)
        else:
            os.environ["VLLM_PP_LAYER_PARTITION"] = partition
        try:
            answers.append([list(get_pp_indices(layers, rank, pp)) for rank in range(pp)])
        except ValueError as error:
            answers.append(str(error))
    os.environ.pop("VLLM_PP_LAYER_PARTITION", None)
    return answers


def vocab_answers(cases: list[list[int]]) -> list:
    answers = []
    for vocab, tp in cases:
        padded = pad_vocab_size(vocab)
        try:
            shards = [VocabParallelEmbedding._get_indices(padded, padded, vocab, vocab, rank, tp)
                      for rank in range(tp)]
        except AssertionError as error:
            answers.append({"padded": padded, "error": str(error)})
            continue
        answers.append({"padded": padded, "shards": [
            [s.num_elements_padded, s.org_vocab_end_index - s.org_vocab_start_index]
            for s in shards]})
    return answers


def expert_answers(cases: list[list]) -> list:
    answers = []
    for ep, experts, strategy in cases:
        ranks = []
        for rank in range(ep):
            try:
                local, mapping, _ = determine_expert_map(ep, rank, experts, strategy)
            except RuntimeError as error:  # torch.arange of an empty round-robin range
                ranks.append(str(error))
                continue
            ranks.append([local, None if mapping is None else mapping.tolist()])
        answers.append(ranks)
    return answers


def main():
    given = json.load(sys.stdin)
    print(json.dumps({"tp": tp_answers(given["tp"]), "pp": pp_answers(given["pp"]),
                      "vocab": vocab_answers(given["vocab"]),
                      "experts": expert_answers(given["experts"])}))


if __name__ == "__main__":
    main()
