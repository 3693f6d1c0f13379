"""A stand-in for vLLM 0.26.0, for the dry run of the GPU job (.ci/gpu-job --dry-run): the
`vllm` module (LLM, SamplingParams) and the `vllm` command (`vllm serve`), with no GPU and no
model. It logs vLLM's own start-up lines with the figures vLLM's arithmetic gives for the
model's architecture (stand_in.py), starts its engine as a spawned process as vLLM may, and
answers the OpenAI API (stand_in_server.py). It runs only in the dry run and never where a GPU
is present.
"""

import multiprocessing
from types import SimpleNamespace

from vllm import stand_in
from vllm.v1.metrics.reader import Gauge

__version__ = stand_in.VERSION
STAND_IN = True


def _engine_core():
    """The engine process: spawned, so it imports the lab's main module again."""


class SamplingParams:
    def __init__(self, max_tokens=16, temperature=1.0, ignore_eos=False):
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.ignore_eos = ignore_eos


class LLMEngine:
    """LLM.llm_engine (vllm/v1/engine/llm_engine.py: LLMEngine), stepped by hand: add_request,
    step, has_unfinished_requests, get_metrics; the engine core's scheduler is stand_in's."""

    def __init__(self, engine, log_stats):
        self.log_stats = log_stats
        self._engine = engine
        self._scheduler = stand_in.Scheduler(engine, log_stats)

    def add_request(self, request_id, prompt, params, *args, **kwargs):
        if not isinstance(request_id, str):
            raise TypeError(f"request_id must be a string, got {type(request_id)}")
        self._scheduler.add_request(stand_in.Request(
            request_id, stand_in.dry_run_prompt_tokens(prompt), params.max_tokens,
            params.ignore_eos))
        return request_id

    def has_unfinished_requests(self):
        return self._scheduler.has_unfinished_requests()

    def step(self):
        """RequestOutputs of the requests that got a token, their token_ids cumulative
        (RequestOutputKind.CUMULATIVE, SamplingParams' default)."""
        return [SimpleNamespace(
            request_id=request.request_id, prompt_token_ids=request.prompt_token_ids,
            finished=request.finished,
            outputs=[SimpleNamespace(index=0, token_ids=list(request.output_token_ids),
                                     text=stand_in.dry_run_text(request.output_token_ids),
                                     finish_reason="length" if request.finished else None)])
            for request in self._scheduler.step()]

    def get_metrics(self):
        """LLMEngine.get_metrics: vllm/v1/metrics/reader.py: get_metrics_snapshot."""
        assert self.log_stats, "Stat logging disabled"
        return [Gauge(name=name, labels=dict(labels), value=value)
                for name, labels, value in stand_in.gauges(self._engine, self._scheduler)]


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
        self.engine = stand_in.start(model, options, "LLM_CLASS")
        self.llm_engine = LLMEngine(self.engine, not self.engine.options["disable_log_stats"])

    def get_metrics(self):
        """vllm/entrypoints/llm.py: LLM.get_metrics."""
        return self.llm_engine.get_metrics()

    def __getattr__(self, name):
        raise stand_in.StandInError(
            f"the stand-in for vLLM does not model LLM.{name}: model it in"
            " tests/stand_in_vllm/vllm/vllm/__init__.py, or drop it from the lab")

    def generate(self, prompts, sampling_params=None):
        text = " (dry run) Each decode step reads the weights and every sequence's KV cache."
        return [SimpleNamespace(prompt=prompt, outputs=[SimpleNamespace(text=text)])
                for prompt in prompts]
