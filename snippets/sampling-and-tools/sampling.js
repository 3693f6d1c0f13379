// sampling.py's JavaScript twin, for the lesson's component: the same names, the same
// rules in the same order (vLLM 0.26.0's sampler: bias, penalties, greedy, temperature,
// min_p, top_k, top_p, random), and the same noise: Random is CPython's Mersenne Twister
// (Modules/_randommodule.c: init_by_array seeded by an int, genrand_res53) and its
// random() and expovariate(), so a seed draws the same numbers, bit for bit, as Python's
// random.Random(seed). Where the two can differ: Math.exp and Math.log (V8's) and the C
// library's exp and log (Python's) each round to within one unit in the last place, not
// always the same way, so a probability or a q can differ in its last bit; every sum
// runs left to right, as Python 3.11's sum() does. tests/lessons/sampling-and-tools/
// test_sampling_twin.py runs both in Node on seeded cases and compares them stage by stage.
(globalThis.courseModules ??= {}).sampling ??= (() => {
  const { ValueError } = courseModules.block_pool;

  const F32_ZERO = 2 ** -150; // a probability below it is 0 in float32
  const SAMPLING_EPS = 1e-5; // vllm/sampling_params.py: _SAMPLING_EPS, below it: greedy
  const MAX_TEMP = 1e-2; // _MAX_TEMP: a temperature in (0, 0.01) is raised to 0.01
  const NEG_INF = -Infinity;
  // Largest first; equal values (two -inf too) keep their order, as Python's sorted().
  const descending = (a, b) => (a < b) - (a > b);

  // CPython's random.Random, seeded by a whole number (random_seed: its absolute value, in
  // 32-bit words, least significant first; 0 is one word, 0).
  class Random {
    static N = 624;
    static M = 397;

    constructor(seed) {
      if (!Number.isSafeInteger(seed)) {
        throw new ValueError(`the seed must be a whole number, got ${seed}`, "seed", { seed });
      }
      const key = [];
      for (let n = Math.abs(seed); n > 0 || key.length === 0; n = Math.floor(n / 2 ** 32)) {
        key.push(n % 2 ** 32);
      }
      this.mt = new Uint32Array(Random.N);
      this.init_by_array(key);
    }

    init_genrand(s) {
      const mt = this.mt;
      mt[0] = s;
      for (let i = 1; i < Random.N; i++) {
        const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
        mt[i] = Math.imul(1812433253, prev) + i;
      }
      this.mti = Random.N;
    }

    init_by_array(key) {
      const { N } = Random;
      const mt = this.mt;
      this.init_genrand(19650218);
      let i = 1;
      let j = 0;
      for (let k = Math.max(N, key.length); k; k--) {
        const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
        mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) >>> 0) + key[j] + j; // non linear
        i++;
        j++;
        if (i >= N) {
          mt[0] = mt[N - 1];
          i = 1;
        }
        if (j >= key.length) j = 0;
      }
      for (let k = N - 1; k; k--) {
        const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
        mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) >>> 0) - i; // non linear
        i++;
        if (i >= N) {
          mt[0] = mt[N - 1];
          i = 1;
        }
      }
      mt[0] = 0x80000000; // the initial array is not all zero
    }

    // genrand_uint32: the next 32 random bits.
    next_uint32() {
      const { N, M } = Random;
      const mt = this.mt;
      const twist = (kk, next, far) => {
        const y = (mt[kk] & 0x80000000) | (mt[next] & 0x7fffffff);
        mt[kk] = mt[far] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      };
      if (this.mti >= N) {
        let kk = 0;
        for (; kk < N - M; kk++) twist(kk, kk + 1, kk + M);
        for (; kk < N - 1; kk++) twist(kk, kk + 1, kk + (M - N));
        twist(N - 1, 0, M - 1);
        this.mti = 0;
      }
      let y = mt[this.mti++];
      y ^= y >>> 11;
      y ^= (y << 7) & 0x9d2c5680;
      y ^= (y << 15) & 0xefc60000;
      y ^= y >>> 18;
      return y >>> 0;
    }

    // random(): genrand_res53, a float in [0, 1) of 53 random bits.
    random() {
      const a = this.next_uint32() >>> 5;
      const b = this.next_uint32() >>> 6;
      return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
    }

    expovariate(lambd) {
      return -Math.log(1.0 - this.random()) / lambd;
    }
  }

  // vllm/sampling_params.py: SamplingParams, its defaults and what its __post_init__ and
  // _verify_args do with them (sampling.py: Params).
  class Params {
    constructor({
      temperature = 1.0, top_p = 1.0, top_k = 0, min_p = 0.0, presence_penalty = 0.0,
      frequency_penalty = 0.0, repetition_penalty = 1.0, logit_bias = {}, min_tokens = 0,
      stop_token_ids = [], seed = null,
    } = {}) {
      Object.assign(this, { temperature, top_p, top_k, min_p, presence_penalty,
                            frequency_penalty, repetition_penalty, logit_bias, min_tokens,
                            stop_token_ids, seed });
      const checks = [
        [-2.0 <= presence_penalty && presence_penalty <= 2.0, "presence_penalty in [-2, 2]",
         "presence_penalty"],
        [-2.0 <= frequency_penalty && frequency_penalty <= 2.0, "frequency_penalty in [-2, 2]",
         "frequency_penalty"],
        [Number.isFinite(repetition_penalty) && repetition_penalty > 0, "repetition_penalty > 0",
         "repetition_penalty"],
        [0.0 <= temperature && temperature <= 2.0, "temperature in [0, 2]", "temperature"],
        [0.0 < top_p && top_p <= 1.0, "top_p in (0, 1]", "top_p"],
        [Number.isInteger(top_k) && top_k >= -1, "top_k >= -1, an int", "top_k"],
        [0.0 <= min_p && min_p <= 1.0, "min_p in [0, 1]", "min_p"],
        [Number.isInteger(min_tokens) && min_tokens >= 0, "min_tokens >= 0", "min_tokens"],
      ];
      for (const [ok, rule, name] of checks) {
        if (!ok) {
          throw new ValueError(`SamplingParams needs ${rule}: got ${this[name]}`, name,
                               { name, value: this[name] });
        }
      }
      if (this.temperature > 0 && this.temperature < MAX_TEMP) this.temperature = MAX_TEMP;
      if (this.temperature < SAMPLING_EPS) { // greedy: the other knobs are reset
        this.top_p = 1.0;
        this.top_k = 0;
        this.min_p = 0.0;
      }
    }

    get greedy() {
      return this.temperature < SAMPLING_EPS;
    }
  }

  // sum() of Python 3.11: left to right.
  const sum = (values) => values.reduce((total, x) => total + x, 0);

  function log_softmax(logits) {
    const top = Math.max(...logits);
    if (top === NEG_INF) {
      throw new ValueError("every logit is -inf: nothing can be sampled", "all_masked", {});
    }
    const log_sum = top + Math.log(sum(logits.map((x) => Math.exp(x - top))));
    return logits.map((x) => x - log_sum);
  }

  const softmax = (logits) => log_softmax(logits).map(Math.exp);

  // The first of the largest, as torch.argmax.
  function argmax(values) {
    let best = 0;
    for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
    return best;
  }

  function apply_bias(logits, params, num_output) {
    const out = [...logits];
    if (num_output < params.min_tokens) { // MinTokensLogitsProcessor.apply
      for (const token of params.stop_token_ids) out[token] = NEG_INF;
    }
    for (const [token, bias] of Object.entries(params.logit_bias)) out[token] += bias;
    return out;
  }

  function apply_penalties(logits, params, prompt, output) {
    const seen = new Set([...prompt, ...output]);
    const counts = new Map();
    for (const token of output) counts.set(token, (counts.get(token) ?? 0) + 1);
    return logits.map((logit, token) => {
      let x = logit;
      if (seen.has(token)) { // apply_repetition_penalties_torch
        const r = params.repetition_penalty;
        x = x > 0 ? x * (1.0 / r) : x * r;
      }
      x -= params.frequency_penalty * (counts.get(token) ?? 0);
      x -= params.presence_penalty * (counts.has(token) ? 1 : 0);
      return x;
    });
  }

  function apply_min_p(logits, min_p) {
    if (min_p <= 0) return [...logits]; // MinPLogitsProcessor: no request with min_p
    const probs = softmax(logits);
    const threshold = Math.max(...probs) * min_p;
    return logits.map((x, i) => (probs[i] < threshold ? NEG_INF : x));
  }

  function apply_top_k(logits, k) {
    if (!(k > 0 && k < logits.length)) return [...logits]; // top_k off: k = vocab size
    const kth = [...logits].sort(descending)[k - 1];
    return logits.map((x) => (x < kth ? NEG_INF : x));
  }

  // batch_top_p: another request of the batch uses top_p (sampling.py: apply_top_p).
  function apply_top_p(logits, p, batch_top_p = false) {
    if (p >= 1.0 && !batch_top_p) return [...logits];
    // ascending; a stable sort, as Python's sorted()
    const order = logits.map((_, i) => i).sort((a, b) => descending(logits[b], logits[a]) || a - b);
    const probs = softmax(order.map((i) => logits[i])).map((x) => (x < F32_ZERO ? 0.0 : x));
    const out = [...logits];
    let running = 0.0;
    for (const [rank, token] of order.slice(0, -1).entries()) { // the largest is kept
      running += probs[rank];
      if (running <= 1 - p) out[token] = NEG_INF;
    }
    return out;
  }

  // q ~ Exp(1) per token, from Python's random.Random(seed).
  function exponential_noise(seed, vocab) {
    const generator = new Random(seed);
    return Array.from({ length: vocab }, () => generator.expovariate(1.0));
  }

  // Every stage of the sampler for one request (sampling.py: sample).
  function sample(logits, params, prompt = [], output = [], noise = null, batch_top_p = false) {
    if (!logits.length) throw new ValueError("logits must not be empty", "empty", {});
    const stages = { raw: logits.map(Number) };
    stages.bias = apply_bias(stages.raw, params, output.length);
    stages.penalties = apply_penalties(stages.bias, params, prompt, output);
    const result = { stages, greedy: argmax(stages.penalties) };
    result.raw_logprobs = log_softmax(stages.raw);
    if (params.greedy) { // Sampler.sample: all_greedy returns before the temperature
      result.token = result.greedy;
      result.processed_logprobs = log_softmax(stages.penalties);
      return result;
    }
    stages.temperature = stages.penalties.map((x) => x / params.temperature);
    stages.min_p = apply_min_p(stages.temperature, params.min_p);
    stages.top_k = apply_top_k(stages.min_p, params.top_k);
    stages.top_p = apply_top_p(stages.top_k, params.top_p, batch_top_p);
    const probs = softmax(stages.top_p);
    const q = noise ?? exponential_noise(params.seed || 0, logits.length);
    if (q.length !== logits.length || Math.min(...q) <= 0) {
      throw new ValueError("noise needs one positive number per token", "noise", {});
    }
    result.probs = probs;
    result.token = argmax(probs.map((p, i) => p / q[i]));
    result.processed_logprobs = log_softmax(stages.top_p);
    return result;
  }

  // Sampler.gather_logprobs: the token's logprob and rank (ties count), the n largest.
  function top_logprobs(logprobs, token, n) {
    const mine = logprobs[token];
    const top = logprobs.map((_, i) => i)
      .sort((a, b) => descending(logprobs[a], logprobs[b]) || a - b).slice(0, n);
    return {
      token: [token, mine],
      rank: logprobs.filter((x) => x >= mine).length,
      top: top.map((i) => [i, logprobs[i]]),
    };
  }

  return { F32_ZERO, SAMPLING_EPS, MAX_TEMP, NEG_INF, Random, Params, log_softmax, softmax,
           argmax, apply_bias, apply_penalties, apply_min_p, apply_top_k, apply_top_p,
           exponential_noise, sample, top_logprobs };
})();
