"""Lesson 8's startup_budget.capture_sizes gives the CUDA graph capture sizes vLLM 0.26.0's
own VllmConfig._set_cudagraph_sizes gives (run on the CPU by vllm_capture_sizes.py in the
conformance venv: the vllm_sizes fixture of conftest.py), on hand-picked edges and seeded
random settings (capture_settings.py): max_num_seqs, max_num_batched_tokens, speculative
tokens, enforce-eager and the performance mode."""

from capture_settings import SETTINGS
from startup_budget import capture_sizes


def lesson(s: dict) -> list[int]:
    return capture_sizes(s["max_num_seqs"], s["max_num_batched_tokens"],
                         s["num_speculative_tokens"], s["enforce_eager"], s["performance_mode"])


def test_every_setting_gives_vllms_sizes(vllm_sizes):
    mismatches = [f"{s}:\n  lesson 8: {lesson(s)}\n  vLLM:     {theirs}"
                  for s, theirs in zip(SETTINGS, vllm_sizes, strict=True) if lesson(s) != theirs]
    assert not mismatches, (f"{len(mismatches)} of {len(SETTINGS)} settings differ from vLLM;"
                            " the first ones:\n" + "\n".join(mismatches[:3]))


def test_the_settings_reach_every_rule(vllm_sizes):
    """The comparison means something only where each rule of the list decides: step 16
    above 256, a full step appended off-stride, speculative steps, eager, interactivity."""
    assert any(len(theirs) > 40 for theirs in vllm_sizes)
    assert sum(s["max_num_batched_tokens"] in theirs and s["max_num_batched_tokens"] % 8
               for s, theirs in zip(SETTINGS, vllm_sizes)) >= 5
    assert sum(theirs == [] for theirs in vllm_sizes) >= 5
    assert sum(s["num_speculative_tokens"] > 0 and theirs[-1] > 2 * s["max_num_seqs"]
               for s, theirs in zip(SETTINGS, vllm_sizes) if theirs) >= 5
    assert sum(theirs[:3] == [1, 2, 3] for theirs in vllm_sizes) >= 5
