"""The request-level metrics of vLLM 0.26.0's PrometheusStatLogger, for the stand-in's `vllm
serve` (vllm/v1/metrics/loggers.py: PrometheusStatLogger.record; vllm/v1/metrics/stats.py:
IterationStats.update_from_output, update_from_finished_request): the counters
vllm:prompt_tokens (a request's whole prompt, at its first token), vllm:generation_tokens and
vllm:request_success (finished_reason="length", as every stand-in request ends), and four
histograms: vllm:time_to_first_token_seconds at a request's first output,
vllm:inter_token_latency_seconds at each later one, vllm:e2e_request_latency_seconds and
vllm:request_time_per_output_token_seconds when it finishes. Counts are exact; the times
observed are the stand-in's own (its steps times STEP_SECONDS), no GPU's. Only the histograms'
+Inf bucket, _count and _sum are written."""

STEP_SECONDS = 0.01  # the stand-in server's time per step (stand_in_server.STEP_SECONDS)
COUNTERS = {
    "vllm:prompt_tokens": "Number of prefill tokens processed.",
    "vllm:generation_tokens": "Number of generation tokens processed.",
    "vllm:request_success": "Count of successfully processed requests.",
}
HISTOGRAMS = {
    "vllm:time_to_first_token_seconds": "Histogram of time to first token in seconds.",
    "vllm:inter_token_latency_seconds": "Histogram of inter-token latency in seconds.",
    "vllm:e2e_request_latency_seconds": "Histogram of e2e request latency in seconds.",
    "vllm:request_time_per_output_token_seconds":
        "Histogram of time_per_output_token_seconds per request.",
}


class RequestMetrics:
    def __init__(self):
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.observed = {name: [] for name in HISTOGRAMS}
        self.steps = 0
        self.first_token_step: dict[str, int] = {}

    def record(self, result) -> None:
        """One step with outputs (its IterationStats): result is a stand_in.StepResult."""
        self.steps += 1
        self.counters["vllm:prompt_tokens"] += result.prompt_tokens
        for request_id, tokens, finished in result.outputs:
            self.counters["vllm:generation_tokens"] += 1
            if len(tokens) == 1:
                self.first_token_step[request_id] = self.steps
                self.observed["vllm:time_to_first_token_seconds"].append(STEP_SECONDS)
            else:
                self.observed["vllm:inter_token_latency_seconds"].append(STEP_SECONDS)
            if finished:
                self.counters["vllm:request_success"] += 1
                decode = (self.steps - self.first_token_step.pop(request_id)) * STEP_SECONDS
                self.observed["vllm:e2e_request_latency_seconds"].append(
                    STEP_SECONDS + decode)
                self.observed["vllm:request_time_per_output_token_seconds"].append(
                    decode / (len(tokens) - 1) if len(tokens) > 1 else 0)

    def lines(self, model: str) -> list[str]:
        tags = f'model_name="{model}",engine="0"'
        lines = []
        for name, text in COUNTERS.items():
            labels = f'{tags},finished_reason="length"' if name == "vllm:request_success" \
                else tags
            lines += [f"# HELP {name}_total {text}", f"# TYPE {name}_total counter",
                      f"{name}_total{{{labels}}} {float(self.counters[name])!r}"]
        for name, text in HISTOGRAMS.items():
            values = self.observed[name]
            lines += [f"# HELP {name} {text}", f"# TYPE {name} histogram",
                      f'{name}_bucket{{{tags},le="+Inf"}} {float(len(values))!r}',
                      f"{name}_count{{{tags}}} {float(len(values))!r}",
                      f"{name}_sum{{{tags}}} {float(sum(values))!r}"]
        return lines
