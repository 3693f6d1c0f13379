"""Run greedy generations with n-gram speculation through vLLM 0.26.0's own Scheduler and
NgramProposer on the CPU, and print what they did, step by step, as JSON: the other side of
tests/conformance/test_spec_decode_conformance.py, which runs it through vllm_side.py, in one
process with the other drivers. It runs in the conformance venv.

The engine is driven as vllm/v1/engine/core.py: EngineCore.step, then .post_step, drive it
with n-gram speculation (async scheduling is off for "ngram": VllmConfig.__post_init__):
schedule, run the model, update_from_output, then the drafts go to
update_draft_token_ids. The
NgramProposer is vLLM's own (numba), built from a real VllmConfig with a SpeculativeConfig,
and given its inputs as vllm/v1/worker/gpu_model_runner.py: propose_draft_token_ids does.
The model is played: request["answer"][j] is the target's greedy choice at output position
j. Verification is played too, by the rule of vllm/v1/sample/rejection_sampler.py:
rejection_greedy_sample_kernel, since that kernel is Triton code and Triton does not run
without a GPU driver (vllm/triton_utils/importing.py): its output rows (the tokens, then
PLACEHOLDER_TOKEN_ID up to max_spec_len + 1) go through vLLM's own
RejectionSampler.parse_output, as the model runner hands them to the scheduler; the
scheduler's own accounting of what it is told (num_computed_tokens, SpecDecodingStats) is
vLLM's.

    python spec_trace.py < workloads.json > traces.json
"""

import json  # noqa: I001 - vllm_trace first: it keeps vLLM's logging off stdout
import sys

from vllm_trace import MODEL, scheduler_on

import numpy as np  # noqa: E402
import torch  # noqa: E402
from vllm.config import (  # noqa: E402
    CacheConfig,
    DeviceConfig,
    ModelConfig,
    ParallelConfig,
    SchedulerConfig,
    SpeculativeConfig,
    VllmConfig,
)
from vllm.sampling_params import SamplingParams  # noqa: E402
from vllm.utils.hashing import get_hash_fn_by_name  # noqa: E402
from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash  # noqa: E402
from vllm.v1.outputs import DraftTokenIds, ModelRunnerOutput  # noqa: E402
from vllm.v1.request import Request  # noqa: E402
from vllm.v1.sample.rejection_sampler import (  # noqa: E402
    PLACEHOLDER_TOKEN_ID,
    RejectionSampler,
)
from vllm.v1.spec_decode.ngram_proposer import (  # noqa: E402
    NgramProposer,
    _find_longest_matched_ngram_and_propose_tokens,
)

MAX_MODEL_LEN = 2048
VOCAB_SIZE = 152064  # Qwen2.5-7B-Instruct's config.json


def build(config: dict):
    max_model_len = config.get("max_model_len", MAX_MODEL_LEN)
    model = ModelConfig(model=str(MODEL), skip_tokenizer_init=True, dtype="bfloat16",
                        max_model_len=max_model_len)
    parallel = ParallelConfig()
    speculative = SpeculativeConfig(
        method="ngram", num_speculative_tokens=config["num_spec_tokens"],
        prompt_lookup_min=config["prompt_lookup_min"],
        prompt_lookup_max=config["prompt_lookup_max"],
        target_model_config=model, target_parallel_config=parallel,
    )
    scheduler_config = SchedulerConfig(
        max_model_len=max_model_len, is_encoder_decoder=False,
        max_num_batched_tokens=config["max_num_batched_tokens"], max_num_seqs=4,
        enable_chunked_prefill=True,
    )
    vllm_config = VllmConfig(
        model_config=model, parallel_config=parallel, speculative_config=speculative,
        cache_config=CacheConfig(block_size=config["block_size"]),
        scheduler_config=scheduler_config, device_config=DeviceConfig(device="cpu"),
    )
    assert not vllm_config.scheduler_config.async_scheduling
    scheduler = scheduler_on(vllm_config, config["num_gpu_blocks"])
    return scheduler, NgramProposer(vllm_config)


def greedy_verify(answer: list[int], drafts: list[int]) -> list[int]:
    """The tokens rejection_greedy_sample_kernel writes: each draft while it equals the
    target's argmax, then the argmax at the first mismatch, or the bonus after all."""
    out = []
    for draft, target in zip(drafts, answer):
        out.append(target)
        if draft != target:
            return out
    return out + [answer[len(drafts)]]


def run(workload: dict) -> dict:
    config = workload["config"]
    scheduler, proposer = build(config)
    answers = {r["request_id"]: r["answer"] for r in workload["requests"]}
    # Prefix caching is on, as by default: the scheduler hashes every full block.
    hash_fn = get_hash_fn_by_name("sha256")
    init_none_hash(hash_fn)
    block_hasher = get_request_block_hasher(config["block_size"], hash_fn)
    for r in workload["requests"]:
        scheduler.add_request(Request(
            request_id=r["request_id"], prompt_token_ids=list(r["prompt"]),
            sampling_params=SamplingParams(max_tokens=r["max_tokens"], ignore_eos=True,
                                           temperature=0.0),
            pooling_params=None, block_hasher=block_hasher,
        ))
    steps, totals = [], {"num_drafts": 0, "num_draft_tokens": 0, "num_accepted_tokens": 0,
                         "accepted_per_pos": [0] * config["num_spec_tokens"],
                         "draft_per_pos": [0] * config["num_spec_tokens"]}
    while scheduler.has_unfinished_requests():
        output = scheduler.schedule()
        req_ids = list(output.num_scheduled_tokens)
        drafts = {r: list(t) for r, t in output.scheduled_spec_decode_tokens.items()}
        # The kernel's output: a row per request, placeholders after the last token.
        rows = torch.full((len(req_ids), config["num_spec_tokens"] + 1),
                          PLACEHOLDER_TOKEN_ID, dtype=torch.int32)
        for i, r in enumerate(req_ids):
            request = scheduler.requests[r]
            start = len(request.output_token_ids)
            tokens = greedy_verify(answers[r][start:], drafts.get(r, []))
            rows[i, :len(tokens)] = torch.tensor(tokens, dtype=torch.int32)
        # A prompt chunk that does not reach the end samples nothing (discarded rows).
        partial = [i for i, r in enumerate(req_ids) if scheduler.requests[r].is_prefill_chunk]
        sampled, _ = RejectionSampler.parse_output(rows, VOCAB_SIZE, partial)
        accepted = {r: len(sampled[i]) - 1 for i, r in enumerate(req_ids)
                    if drafts.get(r) and sampled[i]}
        engine_outputs = scheduler.update_from_output(output, ModelRunnerOutput(
            req_ids=req_ids, req_id_to_index={r: i for i, r in enumerate(req_ids)},
            sampled_token_ids=sampled,
        ))
        finished, new_tokens = [], {}
        for outputs in engine_outputs.values():
            new_tokens.update({o.request_id: o.new_token_ids for o in outputs.outputs})
            finished += [o.request_id for o in outputs.outputs if o.finish_reason is not None]
            stats = outputs.scheduler_stats and outputs.scheduler_stats.spec_decoding_stats
            if stats:
                totals["num_drafts"] += stats.num_drafts
                totals["num_draft_tokens"] += stats.num_draft_tokens
                totals["num_accepted_tokens"] += stats.num_accepted_tokens
                for key, got in (("accepted_per_pos", stats.num_accepted_tokens_per_pos),
                                 ("draft_per_pos", stats.num_draft_tokens_per_pos)):
                    totals[key] = [a + b for a, b in zip(totals[key], got)]
        # The runner's drafting: vLLM's NgramProposer over the batch's token rows.
        rows = np.zeros((len(req_ids), config.get("max_model_len", MAX_MODEL_LEN)),
                        dtype=np.int32)
        lengths = np.zeros(len(req_ids), dtype=np.int32)
        for i, r in enumerate(req_ids):
            tokens = scheduler.requests[r].all_token_ids if r in scheduler.requests else []
            rows[i, :len(tokens)] = tokens
            lengths[i] = len(tokens)
        proposals = proposer.propose(config["num_spec_tokens"], sampled, lengths, rows)
        scheduler.update_draft_token_ids(DraftTokenIds(req_ids, proposals))
        steps.append({
            "scheduled": output.num_scheduled_tokens,
            "drafts": drafts,
            "accepted": accepted,
            "new_tokens": new_tokens,
            "blocks": {r.request_id: len(scheduler.kv_cache_manager.get_block_ids(
                r.request_id)[0]) for r in scheduler.running},
            "finished": finished,
        })
    return {"steps": steps, "stats": totals}


def propose(case: dict) -> list[int]:
    """vLLM's matching function itself, on one token sequence."""
    return _find_longest_matched_ngram_and_propose_tokens(
        np.array(case["tokens"], dtype=np.int32), case["min_n"], case["max_n"],
        case["max_model_len"], case["k"]).tolist()


def traces(work: dict) -> dict:
    return {"runs": [run(w) for w in work["runs"]],
            "proposals": [propose(c) for c in work["proposals"]]}


def main():
    json.dump(traces(json.load(sys.stdin)), sys.stdout)


if __name__ == "__main__":
    main()
