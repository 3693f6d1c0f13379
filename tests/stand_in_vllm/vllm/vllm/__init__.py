"""A stand-in for vLLM 0.26.0, for the dry run of the GPU job (.ci/gpu-job --dry-run): the
`vllm` module (LLM, SamplingParams) and the `vllm` command (`vllm serve`), with no GPU and no
model. It logs vLLM's own start-up lines with the figures vLLM's arithmetic gives for the
model's architecture (stand_in.py), starts its engine as a spawned process as vLLM may, and
answers the OpenAI API (stand_in_server.py). It runs only in the dry run and never where a GPU
is present.
"""

import collections
import itertools
import multiprocessing
import os
import time
from types import SimpleNamespace
from typing import TypedDict

from vllm import stand_in, stand_in_startup

__version__ = stand_in.VERSION
STAND_IN = True

# The GPU time the stand-in models passes without being waited for: this process's clocks
# (time.perf_counter and time.monotonic, which labs time with) run ahead by it. A lab reads the
# same seconds as if the stand-in had slept them, and a dry run does not spend them.
_clocks_ahead = 0.0
_perf_counter, _monotonic = time.perf_counter, time.monotonic
time.perf_counter = lambda: _perf_counter() + _clocks_ahead
time.monotonic = lambda: _monotonic() + _clocks_ahead


def _pass_gpu_time(seconds: float) -> None:
    global _clocks_ahead
    _clocks_ahead += seconds


def _engine_core():
    """The engine process: spawned, so it imports the lab's main module again."""


class TokensPrompt(TypedDict, total=False):
    """vllm/inputs/llm.py: TokensPrompt: a prompt given as token ids (a dict at run time)."""

    prompt_token_ids: list[int]


class SamplingParams:
    def __init__(self, max_tokens=16, temperature=1.0, ignore_eos=False, prompt_logprobs=None):
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.ignore_eos = ignore_eos
        if prompt_logprobs not in (None, 0):
            raise stand_in.StandInError("the stand-in models prompt_logprobs=0 only: the"
                                        " logprob of each prompt token, no others")
        self.prompt_logprobs = prompt_logprobs
        # SamplingParams.__post_init__: a request that wants prompt logprobs does not read the
        # prefix cache (KVCacheManager.get_computed_blocks skips it, and counts no query).
        self.skip_reading_prefix_cache = prompt_logprobs is not None


class LLMEngine:
    """LLM.llm_engine (vllm/v1/engine/llm_engine.py: LLMEngine), stepped by hand: add_request,
    step, has_unfinished_requests, get_metrics; the engine core's scheduler is stand_in's.

    Where the engine core runs (VLLM_ENABLE_V1_MULTIPROCESSING, vllm/envs.py, default 1): in a
    process of its own, the core steps as soon as it has a request, whatever the lab does
    meanwhile (EngineCoreProc.run_busy_loop); the stand-in lets it run one step ahead of the
    lab, one timing a real run may take, so that a request added "before step s" may land in
    a later step. With VLLM_ENABLE_V1_MULTIPROCESSING=0 the core is in the lab's process and
    takes a step only when step() asks (InprocClient.get_output)."""

    def __init__(self, engine, log_stats):
        self.log_stats = log_stats
        self._engine = engine
        self._scheduler = stand_in.Scheduler(engine, log_stats)
        self._stats = stand_in.StatLoggers(engine, log_stats)
        self._multiprocess = os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING", "1") != "0"
        self._ahead = collections.deque()  # steps the core took that the lab has not seen
        self._unfinished = set()  # OutputProcessor: until the lab has seen the last output

    def add_request(self, request_id, prompt, params, *args, **kwargs):
        if not isinstance(request_id, str):
            raise TypeError(f"request_id must be a string, got {type(request_id)}")
        self._scheduler.add_request(stand_in.Request(
            request_id, stand_in.dry_run_prompt_tokens(prompt), params.max_tokens,
            params.ignore_eos, params.skip_reading_prefix_cache))
        self._unfinished.add(request_id)
        self._run_ahead()
        return request_id

    def _run_ahead(self):
        if (self._multiprocess and not self._ahead
                and self._scheduler.has_unfinished_requests()):
            self._ahead.append(self._scheduler.engine_step())

    def has_unfinished_requests(self):
        return bool(self._unfinished)

    def step(self):
        """RequestOutputs of the requests that got a token, their token_ids cumulative
        (RequestOutputKind.CUMULATIVE, SamplingParams' default). Stats are recorded only for
        a step with outputs (LLMEngine.step)."""
        if self._ahead:
            result = self._ahead.popleft()
        elif self._scheduler.has_unfinished_requests():
            result = self._scheduler.engine_step()
        else:
            return []
        self._run_ahead()
        if self.log_stats and result.sampled:
            self._stats.record(result, iteration_stats=True)
        outputs = []
        by_id = {request.request_id: request for request in result.sampled}
        for request_id, tokens, finished in result.outputs:
            outputs.append(SimpleNamespace(
                request_id=request_id, prompt_token_ids=by_id[request_id].prompt_token_ids,
                num_cached_tokens=by_id[request_id].num_cached_tokens, finished=finished,
                outputs=[SimpleNamespace(index=0, token_ids=tokens,
                                         text=stand_in.dry_run_text(tokens),
                                         finish_reason="length" if finished else None)]))
            if finished:
                self._unfinished.discard(request_id)
        return outputs

    def get_metrics(self):
        """LLMEngine.get_metrics: vllm/v1/metrics/reader.py: get_metrics_snapshot."""
        assert self.log_stats, "Stat logging disabled"
        return self._stats.metrics()

    def reset_prefix_cache(self, reset_running_requests=False, reset_connector=False):
        """LLMEngine.reset_prefix_cache -> EngineCore -> Scheduler.reset_prefix_cache: True
        once no request holds a block (the stand-in does not model preempting them)."""
        if reset_running_requests or reset_connector:
            raise stand_in.StandInError("the stand-in resets the prefix cache only as"
                                        " reset_prefix_cache() does by default")
        return self._scheduler.reset_prefix_cache()


class LLM:
    def __init__(self, model, **options):
        stand_in.refuse_unless_dry_run()
        engine = multiprocessing.get_context("spawn").Process(target=_engine_core)
        engine.start()
        engine.join()
        if engine.exitcode:
            raise RuntimeError("Engine core initialization failed. See root cause above.")
        # vllm/entrypoints/llm.py: LLM.__init__ sets disable_log_stats=True unless given.
        options.setdefault("disable_log_stats", True)
        from vllm import stand_in_parallelism  # lesson 11: TP 1 only

        stand_in_parallelism.check(options)
        self.engine = stand_in.start(model, options, "LLM_CLASS")
        self.llm_engine = LLMEngine(self.engine, not self.engine.options["disable_log_stats"])
        self.llm_engine.vllm_config = stand_in_startup.after_kv_cache(self.engine)
        self._request_ids = itertools.count()  # LLM.request_counter

    def get_metrics(self):
        """vllm/entrypoints/llm.py: LLM.get_metrics."""
        return self.llm_engine.get_metrics()

    def reset_prefix_cache(self, reset_running_requests=False, reset_connector=False):
        """vllm/entrypoints/llm.py: LLM.reset_prefix_cache."""
        return self.llm_engine.reset_prefix_cache(reset_running_requests, reset_connector)

    def __getattr__(self, name):
        raise stand_in.StandInError(
            f"the stand-in for vLLM does not model LLM.{name}: model it in"
            " tests/stand_in_vllm/vllm/vllm/__init__.py, or drop it from the lab")

    def generate(self, prompts, sampling_params=None, use_tqdm=True):
        """The prompts run through the stand-in's engine core (LLMEngine, above) until each
        has generated max_tokens tokens (no end-of-sequence token is sampled here), while the
        clocks pass the time the stand-in's engine takes (_pass_gpu_time): a prefill, then
        max_tokens - 1 decode steps of its own estimate for that many prompts decoding together
        (stand_in.Engine.decode_seconds). One prompt (a text or a dict such as TokensPrompt) or
        a list of them (vllm/renderers/inputs/preprocess.py: prompt_to_seq); RequestOutputs in
        the prompts' order."""
        params = sampling_params or SamplingParams()
        if isinstance(prompts, (str, dict)):
            prompts = [prompts]
        steps = max(params.max_tokens - 1, 0)
        _pass_gpu_time(stand_in.PREFILL_SECONDS + steps * self.engine.decode_seconds(len(prompts)))
        engine, done = self.llm_engine, {}
        ids = [str(next(self._request_ids)) for _ in prompts]
        for request_id, prompt in zip(ids, prompts):
            engine.add_request(request_id, prompt, params)
        while len(done) < len(ids):
            for output in engine.step():
                if output.finished:
                    done[output.request_id] = output
        return [SimpleNamespace(
            request_id=request_id, prompt=prompt if isinstance(prompt, str) else None,
            prompt_token_ids=done[request_id].prompt_token_ids,
            prompt_logprobs=self._prompt_logprobs(done[request_id].prompt_token_ids, params),
            num_cached_tokens=done[request_id].num_cached_tokens, finished=True,
            outputs=done[request_id].outputs) for request_id, prompt in zip(ids, prompts)]

    def _prompt_logprobs(self, token_ids, params):
        """RequestOutput.prompt_logprobs with prompt_logprobs=0: None for the first token, then
        {token id: Logprob} with the token's own logprob, rank and text; the logprob is the
        stand-in's figure for the engine's weights (stand_in.dry_run_prompt_logprob)."""
        if params.prompt_logprobs is None:
            return None
        logprob = stand_in.dry_run_prompt_logprob(self.engine)
        return [None] + [{token: SimpleNamespace(logprob=logprob, rank=1, decoded_token=None)}
                         for token in token_ids[1:]]
