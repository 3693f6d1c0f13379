"""What vLLM 0.26.0's sampler does to one request's logits, step by step, in its order
(vllm/v1/sample/sampler.py: Sampler.forward, the sampler vLLM runs on the CPU; the GPU
model runner's twin, vllm/v1/worker/gpu/sample/sampler.py:
Sampler.apply_sampling_params, applies the same operations, bad words after the
penalties, with its own noise).

    raw logprobs   log_softmax of the logits as the model gave them (logprobs_mode
                   "raw_logprobs", the default: vllm/config/model.py: ModelConfig)
    1 logit_bias   + bias (builtin.py: LogitBiasLogitsProcessor), min_tokens: the stop
                   tokens at -inf until enough tokens (MinTokensLogitsProcessor)
    2 penalties    repetition (divide a positive logit, multiply a negative one, for a
                   token seen in the prompt or the output), then frequency (- f * count
                   in the output), then presence (- p if it is in the output)
                   (vllm/model_executor/layers/utils.py: apply_penalties)
    greedy         argmax here, before the temperature (Sampler.sample)
    3 temperature  / T (Sampler.apply_temperature)
    4 min_p        -inf where p < min_p * max p (builtin.py: MinPLogitsProcessor.apply)
    5 top_k        -inf below the k-th largest logit (ops/topk_topp_sampler.py:
                   apply_top_k_only)
    6 top_p        sort ascending, -inf where the running sum of p <= 1 - top_p, the
                   largest always kept (apply_top_k_top_p_pytorch)
    random         argmax of p / q with q ~ Exp(1) per token (random_sample)

The numbers are Python floats (float64); vLLM computes in float32, so they agree to some
1e-6, and a threshold can fall the other way where a value sits on it."""

import math
import random
from dataclasses import dataclass, field

F32_ZERO = 2.0**-150  # a probability below it is 0 in float32 (rounds to zero)
SAMPLING_EPS = 1e-5  # vllm/sampling_params.py: _SAMPLING_EPS, below it: greedy
MAX_TEMP = 1e-2  # _MAX_TEMP: a temperature in (0, 0.01) is raised to 0.01
NEG_INF = -math.inf


@dataclass
class Params:
    """The sampling fields of vllm/sampling_params.py: SamplingParams, its defaults, and
    what its __post_init__ and _verify_args do with them."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0 (or -1): all tokens
    min_p: float = 0.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    logit_bias: dict[int, float] = field(default_factory=dict)
    min_tokens: int = 0
    stop_token_ids: tuple[int, ...] = ()
    seed: int | None = None

    def __post_init__(self):
        checks = [
            (-2.0 <= self.presence_penalty <= 2.0, "presence_penalty in [-2, 2]"),
            (-2.0 <= self.frequency_penalty <= 2.0, "frequency_penalty in [-2, 2]"),
            (
                math.isfinite(self.repetition_penalty) and self.repetition_penalty > 0,
                "repetition_penalty > 0",
            ),
            (0.0 <= self.temperature <= 2.0, "temperature in [0, 2]"),
            (0.0 < self.top_p <= 1.0, "top_p in (0, 1]"),
            (type(self.top_k) is int and self.top_k >= -1, "top_k >= -1, an int"),
            (0.0 <= self.min_p <= 1.0, "min_p in [0, 1]"),
            (type(self.min_tokens) is int and self.min_tokens >= 0, "min_tokens >= 0"),
        ]
        for ok, rule in checks:
            if not ok:
                raise ValueError(f"SamplingParams needs {rule}: got {self}")
        if 0 < self.temperature < MAX_TEMP:
            self.temperature = MAX_TEMP
        if self.temperature < SAMPLING_EPS:  # greedy: the other knobs are reset
            self.top_p, self.top_k, self.min_p = 1.0, 0, 0.0

    @property
    def greedy(self) -> bool:
        return self.temperature < SAMPLING_EPS


def log_softmax(logits: list[float]) -> list[float]:
    top = max(logits)
    if top == NEG_INF:
        raise ValueError("every logit is -inf: nothing can be sampled")
    log_sum = top + math.log(sum(math.exp(x - top) for x in logits))
    return [x - log_sum for x in logits]


def softmax(logits: list[float]) -> list[float]:
    return [math.exp(x) for x in log_softmax(logits)]


def argmax(values: list[float]) -> int:
    """The first of the largest, as torch.argmax."""
    return max(range(len(values)), key=lambda i: (values[i], -i))


def apply_bias(logits, params: Params, num_output: int) -> list[float]:
    out = list(logits)
    if num_output < params.min_tokens:  # MinTokensLogitsProcessor.apply
        for token in params.stop_token_ids:
            out[token] = NEG_INF
    for token, bias in params.logit_bias.items():  # LogitBiasLogitsProcessor.apply
        out[token] += bias
    return out


def apply_penalties(logits, params: Params, prompt, output) -> list[float]:
    seen, counts = set(prompt) | set(output), {}
    for token in output:
        counts[token] = counts.get(token, 0) + 1
    out = []
    for token, x in enumerate(logits):
        if token in seen:  # apply_repetition_penalties_torch
            r = params.repetition_penalty
            x = x * (1.0 / r) if x > 0 else x * r
        x -= params.frequency_penalty * counts.get(token, 0)
        x -= params.presence_penalty * (token in counts)
        out.append(x)
    return out


def apply_min_p(logits, min_p: float) -> list[float]:
    if min_p <= 0:  # MinPLogitsProcessor: no request with min_p, no change
        return list(logits)
    probs = softmax(logits)
    threshold = max(probs) * min_p
    return [NEG_INF if p < threshold else x for x, p in zip(logits, probs)]


def apply_top_k(logits, k: int) -> list[float]:
    if not 0 < k < len(logits):  # InputBatch: top_k off is k = vocab size
        return list(logits)
    kth = sorted(logits, reverse=True)[k - 1]
    return [NEG_INF if x < kth else x for x in logits]


def apply_top_p(logits, p: float, batch_top_p: bool = False) -> list[float]:
    """batch_top_p: another request of the batch uses top_p, so vLLM runs this row
    through the top-p mask too, even at p = 1: there, exactly the tokens whose float32
    probability is 0 (and every smaller one) go to -inf."""
    if p >= 1.0 and not batch_top_p:
        return list(logits)
    order = sorted(range(len(logits)), key=lambda i: logits[i])  # ascending
    probs = [0.0 if x < F32_ZERO else x for x in softmax([logits[i] for i in order])]
    out, running = list(logits), 0.0
    for rank, token in enumerate(order[:-1]):  # the largest is always kept
        running += probs[rank]
        if running <= 1 - p:
            out[token] = NEG_INF
    return out


def exponential_noise(seed: int, vocab: int) -> list[float]:
    """q ~ Exp(1) per token from a seeded generator: Python's, not torch's, so the same
    rule as vLLM's but other numbers."""
    generator = random.Random(seed)
    return [generator.expovariate(1.0) for _ in range(vocab)]


def sample(
    logits, params: Params, prompt=(), output=(), noise=None, batch_top_p=False
) -> dict:
    """Every stage of the sampler for one request: each stage's logits, the greedy and
    the sampled token, and the logprobs of the raw and of the processed logits. noise
    is q (one Exp(1) per token); without it, exponential_noise(params.seed or 0).
    batch_top_p: see apply_top_p."""
    if not logits:
        raise ValueError("logits must not be empty")
    stages = {"raw": [float(x) for x in logits]}
    stages["bias"] = apply_bias(stages["raw"], params, len(output))
    stages["penalties"] = apply_penalties(stages["bias"], params, prompt, output)
    result = {"stages": stages, "greedy": argmax(stages["penalties"])}
    result["raw_logprobs"] = log_softmax(stages["raw"])
    if params.greedy:  # Sampler.sample: all_greedy returns before the temperature
        result["token"] = result["greedy"]
        result["processed_logprobs"] = log_softmax(stages["penalties"])
        return result
    stages["temperature"] = [x / params.temperature for x in stages["penalties"]]
    stages["min_p"] = apply_min_p(stages["temperature"], params.min_p)
    stages["top_k"] = apply_top_k(stages["min_p"], params.top_k)
    stages["top_p"] = apply_top_p(stages["top_k"], params.top_p, batch_top_p)
    probs = softmax(stages["top_p"])
    if noise is None:
        noise = exponential_noise(params.seed or 0, len(logits))
    if len(noise) != len(logits) or min(noise) <= 0:
        raise ValueError("noise needs one positive number per token")
    result["probs"] = probs
    result["token"] = argmax([p / q for p, q in zip(probs, noise)])
    result["processed_logprobs"] = log_softmax(stages["top_p"])
    return result


def top_logprobs(logprobs: list[float], token: int, n: int) -> dict:
    """What Sampler.gather_logprobs returns: the token's logprob and rank (1 + how many
    are larger; ties count: batched_count_greater_than is x >= value), then the n
    largest."""
    mine = logprobs[token]
    top = sorted(range(len(logprobs)), key=lambda i: (-logprobs[i], i))[:n]
    return {
        "token": (token, mine),
        "rank": sum(x >= mine for x in logprobs),
        "top": [(i, logprobs[i]) for i in top],
    }


VOCAB = ["the", "a", "cat", "dog", "sat", "ran", ".", "<eos>"]
LOGITS = [2.0, 1.5, 1.2, 1.0, 0.5, 0.2, -0.5, -1.0]
EXAMPLE = Params(
    temperature=0.7,
    top_k=5,
    top_p=0.9,
    min_p=0.1,
    repetition_penalty=1.05,
    presence_penalty=0.5,
    min_tokens=2,
    stop_token_ids=(7,),
    seed=1234,
)
PROMPT, OUTPUT = (2, 4), (0,)  # "cat sat" in the prompt, "the" already written


def show(row: list[float]) -> str:
    return " ".join("   -inf" if x == NEG_INF else f"{x:7.3f}" for x in row)


if __name__ == "__main__":
    run = sample(LOGITS, EXAMPLE, PROMPT, OUTPUT)
    print("token       " + " ".join(f"{w:>7}" for w in VOCAB))
    for stage, row in run["stages"].items():
        print(f"{stage:<12}{show(row)}")
    print(f"{'p':<12}" + " ".join(f"{p:7.3f}" for p in run["probs"]))
    print(f"greedy (argmax after the penalties): {VOCAB[run['greedy']]}")
    print(f"sampled (seed {EXAMPLE.seed}, Python's noise): {VOCAB[run['token']]}")
    for mode in ("raw_logprobs", "processed_logprobs"):
        got = top_logprobs(run[mode], run["token"], 2)
        top = ", ".join(f"{VOCAB[i]} {x:.3f}" for i, x in got["top"])
        print(f"{mode}: sampled {got['token'][1]:.3f} (rank {got['rank']}); top {top}")
