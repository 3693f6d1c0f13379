"""vLLM 0.26.0's side of lesson 10's conformance test, run in the conformance venv (CPU
PyTorch): reads {"batches": [...], "hermes": [...]} as JSON on stdin and prints what vLLM's
own code does with them.

batches: each a list of requests {logits, prompt, output, params (SamplingParams keyword
arguments), logprobs}. Each batch goes through vllm/v1/sample/sampler.py: Sampler (the
sampler vLLM runs on the CPU, with its CPU top-k/top-p path) with a SamplingMetadata built
as vllm/v1/worker/gpu_input_batch.py: InputBatch.add_request builds it from the real
SamplingParams (temperature 0 for greedy requests, top_k = vocab size when off, one
torch.Generator seeded with each request's seed, as gpu_model_runner.py seeds it) and
vLLM's three built-in logits processors (vllm/v1/sample/logits_processor/builtin.py) fed
a BatchUpdate. MinPLogitsProcessor reads only vllm_config.scheduler_config.max_num_seqs,
so it gets a namespace holding that number, not a VllmConfig (which needs a model). Every
request has a seed: with all rows seeded, TopKTopPSampler.forward_cpu draws q row by row
from those generators; the driver draws the same q again from fresh generators with the
same seeds and returns it, so that the course's sampler can be run on vLLM's noise.

For each request it returns the stage logits vLLM's own functions give (apply_penalties,
the logits processors, apply_temperature, apply_top_k_top_p), the sampled token, and the
logprobs tensors (token ids, logprobs, rank) for logprobs_mode raw_logprobs and
processed_logprobs.

xgrammar: {vocab, eos, schema}: the grammar vLLM's XgrammarBackend compiles for a JSON
schema (the same xgrammar calls: TokenizerInfo, GrammarCompiler.compile_json_schema,
GrammarMatcher, allocate_token_bitmask, fill_next_token_bitmask), over a toy vocabulary
written in the test (no tokenizer download), with any_whitespace off (vLLM turns it off
with disable_any_whitespace; its default allows any whitespace). Every token sequence the
grammar allows is walked, and the bitmask after each one returned, keyed by its text.

hermes: model outputs {text, deltas}; each goes through vllm/tool_parsers/
hermes_tool_parser.py: Hermes2ProToolParser.extract_tool_calls (whole) and
extract_tool_calls_streaming (delta by delta). The parser reads nothing from its tokenizer
but requires one: it gets a PreTrainedTokenizerFast built here from a six-word WordLevel
vocabulary (no download).

    python sampling_and_tools_vllm_side.py < inputs.json > outputs.json
"""

import json
import os
import sys
import traceback
from types import SimpleNamespace

os.environ["VLLM_CONFIGURE_LOGGING"] = "0"  # stdout carries the JSON only

import torch  # noqa: E402
import vllm.utils.torch_utils  # noqa: E402
import vllm.v1.sample.ops.penalties  # noqa: E402
from vllm import SamplingParams  # noqa: E402
from vllm.v1.sample.logits_processor import LogitsProcessors  # noqa: E402
from vllm.v1.sample.logits_processor.builtin import (  # noqa: E402
    LogitBiasLogitsProcessor,
    MinPLogitsProcessor,
    MinTokensLogitsProcessor,
)
from vllm.v1.sample.logits_processor.interface import BatchUpdate  # noqa: E402
from vllm.v1.sample.metadata import SamplingMetadata  # noqa: E402
from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p  # noqa: E402
from vllm.v1.sample.sampler import Sampler  # noqa: E402

CPU = torch.device("cpu")
# This venv's platform is vLLM's UnspecifiedPlatform (the CUDA build of the wheel, no GPU),
# which claims pinned memory; there is none without an accelerator, as vllm/platforms/cpu.py:
# CpuPlatform.is_pin_memory_available says. The two modules that read the flag get False.
vllm.utils.torch_utils.PIN_MEMORY = False
vllm.v1.sample.ops.penalties.PIN_MEMORY = False


def processors(requests, params):
    config = SimpleNamespace(scheduler_config=SimpleNamespace(max_num_seqs=len(requests)))
    procs = [MinPLogitsProcessor(config, CPU, False), LogitBiasLogitsProcessor(config, CPU, False),
             MinTokensLogitsProcessor(config, CPU, False)]
    added = [(i, p, r["prompt"], list(r["output"])) for i, (r, p) in enumerate(zip(requests, params))]
    for proc in procs:
        proc.update_state(BatchUpdate(batch_size=len(requests), removed=[], added=added, moved=[]))
    return LogitsProcessors(procs)


def metadata(requests, params, vocab, max_logprobs):
    greedy = [p.temperature < 1e-5 for p in params]
    top_k = [p.top_k if 0 < p.top_k < vocab else vocab for p in params]
    prompt = torch.full((len(requests), max(len(r["prompt"]) for r in requests) or 1), vocab)
    for i, r in enumerate(requests):
        prompt[i, :len(r["prompt"])] = torch.tensor(r["prompt"], dtype=torch.long)
    no_penalties = all(p.presence_penalty == 0 and p.frequency_penalty == 0
                       and p.repetition_penalty == 1 for p in params)
    return SamplingMetadata(
        temperature=torch.tensor([0.0 if g else p.temperature for g, p in zip(greedy, params)]),
        all_greedy=all(greedy), all_random=not any(greedy),
        top_p=None if all(p.top_p == 1 for p in params) else torch.tensor([p.top_p for p in params]),
        top_k=None if all(k == vocab for k in top_k) else torch.tensor(top_k, dtype=torch.int32),
        generators={i: torch.Generator(device=CPU).manual_seed(p.seed) for i, p in enumerate(params)},
        max_num_logprobs=max_logprobs, no_penalties=no_penalties,
        prompt_token_ids=None if no_penalties else prompt,
        frequency_penalties=torch.tensor([p.frequency_penalty for p in params]),
        presence_penalties=torch.tensor([p.presence_penalty for p in params]),
        repetition_penalties=torch.tensor([p.repetition_penalty for p in params]),
        output_token_ids=[list(r["output"]) for r in requests],
        allowed_token_ids_mask=None, bad_words_token_ids={},
        logitsprocs=processors(requests, params))


def tolist(t):
    return [None if x == float("-inf") else x for x in t.tolist()]


def run_batch(requests):
    # JSON keys are strings; the API server gives SamplingParams int token ids
    params = [SamplingParams(**{**r["params"], "logit_bias": {
        int(t): b for t, b in r["params"].get("logit_bias", {}).items()} or None}) for r in requests]
    logits = torch.tensor([r["logits"] for r in requests], dtype=torch.float32)
    vocab = logits.shape[1]
    max_logprobs = max(r["logprobs"] for r in requests)
    out = [{"params": {k: getattr(p, k) for k in ("temperature", "top_p", "top_k", "min_p")}}
           for p in params]
    # The stages, by vLLM's own functions in Sampler's order.
    meta = metadata(requests, params, vocab, max_logprobs)
    stage = Sampler().apply_logits_processors(logits.clone(), meta, False)
    stages = {"penalties": stage.clone()}
    stage = Sampler.apply_temperature(stage, meta.temperature, meta.all_random)
    stages["temperature"] = stage.clone()
    for proc in meta.logitsprocs.argmax_invariant:
        stage = proc.apply(stage)
    stages["min_p"] = stage.clone()
    stages["top_p"] = apply_top_k_top_p(stage, meta.top_k, meta.top_p)
    for i, r in enumerate(out):
        r["stages"] = {name: tolist(t[i]) for name, t in stages.items()}
        r["noise"] = torch.empty(vocab).exponential_(
            generator=torch.Generator(device=CPU).manual_seed(params[i].seed)).tolist()
    # The whole Sampler, once per logprobs mode, on fresh metadata (generators, state).
    for mode in ("raw_logprobs", "processed_logprobs"):
        got = Sampler(logprobs_mode=mode)(logits.clone(), metadata(requests, params, vocab, max_logprobs))
        lp = got.logprobs_tensors
        for i, r in enumerate(out):
            r["token"] = got.sampled_token_ids[i, 0].item()
            r[mode] = {"ids": lp.logprob_token_ids[i].tolist(), "logprobs": tolist(lp.logprobs[i]),
                       "rank": lp.selected_token_ranks[i].item()}
    return out


def hermes(cases):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.tool_parsers.hermes_tool_parser import Hermes2ProToolParser

    words = ["<unk>", "<tool_call>", "</tool_call>", "{", "}", "name"]
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(
        WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>")))
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}])
    results = []
    for case in cases:
        whole = Hermes2ProToolParser(tokenizer).extract_tool_calls(case["text"], request)
        parser, text, streamed = Hermes2ProToolParser(tokenizer), "", []
        for delta in case["deltas"]:
            previous, text = text, text + delta
            message = parser.extract_tool_calls_streaming(previous, text, delta, [], [], [], request)
            if message is None:
                streamed.append(None)
                continue
            streamed.append({"content": message.content, "tool_calls": [
                {"index": c.index, "name": (c.function or {}).get("name") if isinstance(c.function, dict)
                 else getattr(c.function, "name", None),
                 "arguments": (c.function or {}).get("arguments") if isinstance(c.function, dict)
                 else getattr(c.function, "arguments", None),
                 "has_id": c.id is not None} for c in message.tool_calls]})
        results.append({
            "tools_called": whole.tools_called, "content": whole.content,
            "calls": [[c.function.name, c.function.arguments] for c in whole.tool_calls],
            "streamed": streamed})
    return results


def xgrammar_masks(given):
    import xgrammar as xgr

    vocab = given["vocab"]
    info = xgr.TokenizerInfo(vocab, vocab_type=xgr.VocabType.RAW, vocab_size=len(vocab),
                             stop_token_ids=[given["eos"]])
    compiled = xgr.GrammarCompiler(info, max_threads=1).compile_json_schema(
        json.dumps(given["schema"]), any_whitespace=False)
    masks, todo = {}, [[]]
    while todo:
        path = todo.pop()
        matcher = xgr.GrammarMatcher(compiled)
        for token in path:
            assert matcher.accept_token(token), path
        bitmask = xgr.allocate_token_bitmask(1, len(vocab))
        matcher.fill_next_token_bitmask(bitmask)
        words = bitmask[0].tolist()
        masks["".join(vocab[t] for t in path)] = words
        todo += [path + [t] for t in range(len(vocab))
                 if t != given["eos"] and words[t // 32] >> (t % 32) & 1]
    return masks


def main():
    given, outputs = json.load(sys.stdin), {}
    for part, run in (("batches", lambda g: [run_batch(b) for b in g]), ("hermes", hermes),
                      ("xgrammar", xgrammar_masks)):
        try:
            outputs[part] = {"result": run(given[part])}
        except Exception:
            outputs[part] = {"error": traceback.format_exc()}
    json.dump(outputs, sys.stdout)


if __name__ == "__main__":
    main()
