"""The CUDA graph capture sizes vLLM 0.26.0's own config code computes for scheduler
settings, printed as JSON: the other side of test_capture_sizes_conformance.py, which runs
it through vllm_side.py, in one process with the other drivers.

It runs in the conformance venv (.ci/setup: the pinned wheel, PyTorch's CPU build). Each
setting builds a real VllmConfig of Qwen2.5-7B-Instruct (a local config.json; no weights,
no hub), with a real SpeculativeConfig (n-gram) when it asks for speculative tokens. On
the CPU the platform turns CUDA graphs off (cudagraph_mode NONE); the driver then gives
the compilation config what a GPU gives it, the default cudagraph_mode
FULL_AND_PIECEWISE and no sizes, and runs vLLM's own VllmConfig._set_cudagraph_sizes
again. Nothing of vLLM is stubbed.

    python vllm_capture_sizes.py < settings.json > sizes.json
"""

import json
import os
import sys
from functools import cache

# vLLM's own logging writes to stdout, where the results go: leave Python's default.
os.environ["VLLM_CONFIGURE_LOGGING"] = "0"

from vllm import config as vc  # noqa: E402
from vllm.config.compilation import CUDAGraphMode  # noqa: E402
from vllm_trace import MAX_MODEL_LEN, MODEL  # noqa: E402


@cache
def model_config(enforce_eager: bool) -> vc.ModelConfig:
    return vc.ModelConfig(model=str(MODEL), skip_tokenizer_init=True, dtype="bfloat16",
                          max_model_len=MAX_MODEL_LEN, enforce_eager=enforce_eager)


def speculative_config(model: vc.ModelConfig, tokens: int) -> vc.SpeculativeConfig | None:
    if not tokens:
        return None
    return vc.SpeculativeConfig(method="ngram", num_speculative_tokens=tokens,
                                prompt_lookup_max=3, prompt_lookup_min=2,
                                target_model_config=model,
                                target_parallel_config=vc.ParallelConfig())


def capture_sizes(setting: dict) -> list[int]:
    model = model_config(setting["enforce_eager"])
    scheduler = vc.SchedulerConfig(max_model_len=MAX_MODEL_LEN, is_encoder_decoder=False,
                                   max_num_batched_tokens=setting["max_num_batched_tokens"],
                                   max_num_seqs=setting["max_num_seqs"])
    config = vc.VllmConfig(model_config=model, scheduler_config=scheduler,
                           device_config=vc.DeviceConfig(device="cpu"),
                           speculative_config=speculative_config(
                               model, setting["num_speculative_tokens"]),
                           performance_mode=setting["performance_mode"])
    compilation = config.compilation_config
    compilation.cudagraph_mode = CUDAGraphMode.FULL_AND_PIECEWISE
    compilation.cudagraph_capture_sizes = None
    compilation.max_cudagraph_capture_size = None
    config._set_cudagraph_sizes()
    return compilation.cudagraph_capture_sizes


def sizes(settings: list[dict]) -> list[list[int]]:
    return [capture_sizes(setting) for setting in settings]


def main():
    print(json.dumps(sizes(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
