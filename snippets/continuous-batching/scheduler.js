// scheduler.py's JavaScript twin, for the lesson's components: the same names, the same
// numbered steps, null where the Python returns None, a ValueError where it raises one.
// Python's keyword arguments come as one object. tests/test_js_mirrors.py runs both, in Node,
// on every workload the conformance tests run against vLLM, and compares them step by step.
(globalThis.courseModules ??= {}).scheduler ??= (() => {
  const { BLOCK_SIZE, ValueError, whole, BlockPool, blocks_for } = courseModules.block_pool;

  // `vllm serve` on a card under 70 GiB (EngineArgs.get_batch_defaults).
  const MAX_NUM_BATCHED_TOKENS = 2048;
  const MAX_NUM_SEQS = 256;
  // Token ids above the vocabulary: a request given no prompt gets a run of them.
  const UNIQUE_TOKENS = 1_000_000_000;

  // The settings the scheduler reads (vllm/config/scheduler.py: SchedulerConfig), and the
  // KV cache's size: num_gpu_blocks null gives enough blocks that none ever runs out.
  class SchedulerConfig {
    constructor({
      max_num_batched_tokens = MAX_NUM_BATCHED_TOKENS, max_num_seqs = MAX_NUM_SEQS,
      num_gpu_blocks = null, block_size = BLOCK_SIZE, long_prefill_token_threshold = 0,
      enable_chunked_prefill = true, async_scheduling = false,
    } = {}) {
      Object.assign(this, { max_num_batched_tokens, max_num_seqs, num_gpu_blocks, block_size,
                            long_prefill_token_threshold, enable_chunked_prefill, async_scheduling });
      const least = { max_num_batched_tokens: 1, max_num_seqs: 1, num_gpu_blocks: 1, block_size: 1,
                      long_prefill_token_threshold: 0 };
      for (const [name, smallest] of Object.entries(least)) {
        if (this[name] !== null) whole(name, this[name], smallest);
      }
      // SchedulerConfig.verify_max_model_len
      if (max_num_batched_tokens < max_num_seqs) {
        throw new ValueError(
          `max_num_batched_tokens (${max_num_batched_tokens}) must be greater than or equal to max_num_seqs (${max_num_seqs})`,
          "seqs_over_budget", { budget: max_num_batched_tokens, seqs: max_num_seqs });
      }
      Object.freeze(this);
    }
  }

  // A request: its prompt length, the tokens it generates, when it arrives; prompt: its
  // token ids, for prefix caching (null: tokens no other prompt has).
  class Request {
    constructor(request_id, prompt_tokens, max_tokens, arrival_step = 0, prompt = null) {
      if (!request_id) throw new ValueError(`request_id must be a non-empty string, got ${request_id}`);
      Object.assign(this, { request_id, prompt_tokens, max_tokens, arrival_step, prompt });
      for (const [name, least] of [["prompt_tokens", 1], ["max_tokens", 1], ["arrival_step", 0]]) {
        whole(`${name} of request ${request_id}`, this[name], least);
      }
      if (prompt !== null && prompt.length !== prompt_tokens) {
        throw new ValueError(`prompt of request ${request_id} must hold its ${prompt_tokens} token ids`);
      }
      Object.freeze(this);
    }
  }

  // What the scheduler tracks of a request (vllm/v1/request.py: Request).
  class _State {
    constructor(request, prompt) {
      this.request = request;
      this.id = request.request_id;
      this.tokens = prompt; // Request.all_token_ids: prompt, then output tokens
      this.num_computed_tokens = 0;
      this.num_output_tokens = 0;
      this.num_output_placeholders = 0; // scheduled, output not processed yet (async)
      this.num_preemptions = 0;
      this.is_prefill_chunk = false;
      this.preempted = false; // RequestStatus.PREEMPTED, until it runs again
    }

    get num_tokens() { // Request.num_tokens: prompt + output tokens
      return this.request.prompt_tokens + this.num_output_tokens;
    }
  }

  // vllm/v1/core/sched/scheduler.py: Scheduler, on the KV cache manager it is handed.
  class Scheduler {
    constructor(config, kv_cache_manager) {
      this.config = config;
      this.kv_cache_manager = kv_cache_manager;
      this.waiting = []; // FCFSRequestQueue, head first
      this.running = [];
      this._next_unique = UNIQUE_TOKENS;
    }

    // Refuse a request that could never finish, as vLLM refuses such a setup.
    check(request) {
      const name = request.request_id;
      const kv = this.kv_cache_manager;
      // The most it ever holds: its last output token is sampled, never computed.
      const most = request.prompt_tokens + request.max_tokens - 1;
      const needed = blocks_for(most, kv.block_size);
      const usable = kv.num_gpu_blocks - 1; // block 0 is the null block
      if (needed > usable) {
        throw new ValueError(`request ${name} needs ${needed} blocks for its ${most} tokens, the pool has ${usable}`,
                             "never_fits", { r: name, tokens: most, needed, usable });
      }
      // Without chunked prefill, max_model_len <= max_num_batched_tokens.
      const total = request.prompt_tokens + request.max_tokens;
      const budget = this.config.max_num_batched_tokens;
      if (!this.config.enable_chunked_prefill && total > budget) {
        throw new ValueError(`request ${name} has ${total} tokens, more than max_num_batched_tokens=${budget}`,
                             "no_chunking", { r: name, total, budget });
      }
    }

    // A new request joins the back of the waiting queue (Scheduler.add_request).
    add_request(request) {
      this.check(request);
      let prompt = request.prompt;
      if (prompt === null) {
        prompt = [];
        for (let t = 0; t < request.prompt_tokens; t += 1) prompt.push(this._next_unique + t);
        this._next_unique += request.prompt_tokens;
      }
      this.waiting.push(new _State(request, [...prompt]));
    }

    // Scheduler._preempt_request: free its blocks, forget what it computed (recompute),
    // put it at the waiting queue's front.
    _preempt_request(state) {
      if (this.kv_cache_manager.requests.includes(state.id)) this.kv_cache_manager.free(state.id);
      state.num_computed_tokens = 0;
      state.num_preemptions += 1;
      state.preempted = true;
      this.waiting.unshift(state);
    }

    // Scheduler.schedule: the tokens scheduled per request, the requests preempted.
    schedule() {
      const config = this.config;
      const kv = this.kv_cache_manager;
      let token_budget = config.max_num_batched_tokens;
      const threshold = config.long_prefill_token_threshold;
      const scheduled = new Map();
      const preempted = [];

      // 1. The RUNNING requests, in their order, while the budget lasts.
      let req_index = 0;
      while (req_index < this.running.length && token_budget > 0) {
        const state = this.running[req_index];
        // No extra step for a request whose last token is already on its way.
        if (state.num_output_placeholders > 0 &&
            state.num_computed_tokens + 2 - state.num_output_placeholders >=
            state.request.prompt_tokens + state.request.max_tokens) {
          req_index += 1;
          continue;
        }
        // What it lacks, counting the tokens still on their way as known.
        let num_new_tokens = state.num_tokens + state.num_output_placeholders - state.num_computed_tokens;
        if (threshold > 0 && threshold < num_new_tokens) num_new_tokens = threshold;
        num_new_tokens = Math.min(num_new_tokens, token_budget);
        // 2. Blocks run out (allocate_slots returns null): preempt the last running
        // request, again and again, until this one fits or is itself the one preempted.
        while (kv.allocate_slots(state.id, state.tokens, state.num_computed_tokens, num_new_tokens) === null) {
          const victim = this.running.pop();
          this._preempt_request(victim);
          preempted.push(victim.id);
          if (victim === state) break;
        }
        if (state.preempted) break; // no running request after it is scheduled
        scheduled.set(state.id, num_new_tokens);
        token_budget -= num_new_tokens;
        req_index += 1;
      }

      // 3. The WAITING requests, head first; none in a step that preempted.
      while (!preempted.length && this.waiting.length && token_budget > 0) {
        if (this.running.length >= config.max_num_seqs) break;
        const state = this.waiting[0];
        // Its cached blocks, looked up (and counted) at every try.
        const [hit, num_computed_tokens] = kv.get_computed_blocks(
          state.tokens, { preempted: state.num_preemptions > 0 });
        let num_new_tokens = state.num_tokens - num_computed_tokens;
        if (threshold > 0 && threshold < num_new_tokens) num_new_tokens = threshold;
        // Without chunked prefill, a prompt longer than the budget left ends admissions.
        if (!config.enable_chunked_prefill && num_new_tokens > token_budget) break;
        num_new_tokens = Math.min(num_new_tokens, token_budget);
        // Admitted only if its whole sequence so far fits (scheduler_reserve_full_isl).
        const new_blocks = kv.allocate_slots(state.id, state.tokens, state.num_computed_tokens,
                                             num_new_tokens, hit, true);
        if (new_blocks === null) break; // too few free blocks: it waits, and all behind it
        this.waiting.shift();
        this.running.push(state);
        state.preempted = false;
        state.num_computed_tokens = num_computed_tokens;
        scheduled.set(state.id, num_new_tokens);
        token_budget -= num_new_tokens;
      }

      this._update_after_schedule(scheduled);
      return [scheduled, preempted];
    }

    // 4. The scheduled tokens count as computed at once (_update_after_schedule); a chunk
    // that does not reach the end of the known tokens samples nothing.
    _update_after_schedule(scheduled) {
      const by_id = new Map(this.running.map((state) => [state.id, state]));
      for (const [request_id, num_tokens] of scheduled) {
        const state = by_id.get(request_id);
        state.num_computed_tokens += num_tokens;
        state.is_prefill_chunk = state.num_computed_tokens < state.num_tokens + state.num_output_placeholders;
      }
    }

    // 5. A step's output is back (Scheduler.update_from_output): who sampled, who finished.
    update_from_output(scheduled, sampled = null) {
      if (sampled === null) sampled = this.sampling(scheduled);
      const finished = [];
      const states = new Map([...this.running, ...this.waiting].map((state) => [state.id, state]));
      for (const request_id of scheduled.keys()) {
        const state = states.get(request_id);
        if (state === undefined || !sampled.includes(request_id)) continue;
        this._update_request_with_output(state);
        // Finished at max_tokens (check_stop): its blocks go back (_free_request).
        if (state.num_output_tokens >= state.request.max_tokens) {
          finished.push(request_id);
          if (this.kv_cache_manager.requests.includes(request_id)) this.kv_cache_manager.free(request_id);
        }
      }
      this.running = this.running.filter((state) => !finished.includes(state.id));
      this.waiting = this.waiting.filter((state) => !finished.includes(state.id));
      return [sampled, finished];
    }

    // The stand-in model samples token id -1 - k as a request's k-th output token.
    _update_request_with_output(state) {
      state.tokens.push(-1 - state.num_output_tokens);
      state.num_output_tokens += 1;
    }

    // Who of a step just scheduled gets a token sampled.
    sampling(scheduled) {
      const states = new Map(this.running.map((state) => [state.id, state]));
      return [...scheduled.keys()].filter((id) => !states.get(id).is_prefill_chunk);
    }
  }

  // vllm/v1/core/sched/async_scheduler.py: AsyncScheduler, vLLM's default.
  class AsyncScheduler extends Scheduler {
    _update_after_schedule(scheduled) { // a placeholder per sampling request
      super._update_after_schedule(scheduled);
      for (const state of this.running) {
        if (scheduled.has(state.id) && !state.is_prefill_chunk) state.num_output_placeholders += 1;
      }
    }

    _update_request_with_output(state) { // the token replaces its placeholder
      super._update_request_with_output(state);
      state.num_output_placeholders -= 1;
      if (!state.preempted) {
        this.kv_cache_manager.cache_blocks(state.id, state.tokens,
                                           state.num_computed_tokens - state.num_output_placeholders);
      }
    }
  }

  // A pool in which blocks never run out: the null block plus every whole sequence.
  function enough_blocks(requests, block_size = BLOCK_SIZE) {
    let total = 1;
    for (const r of requests) total += blocks_for(r.prompt_tokens + r.max_tokens - 1, block_size);
    return total;
  }

  // Run the requests to completion, one Step per engine step from step 0 (scheduler.py: run,
  // its Step's fields; dicts are Maps, in their order).
  function run(requests, kv_cache_manager = BlockPool, settings = {}) {
    let config = new SchedulerConfig(settings);
    const ids = requests.map((request) => request.request_id);
    const repeated = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))].sort();
    if (repeated.length) throw new ValueError(`request ids must be unique: ${repeated.join(", ")} repeat`);
    if (config.num_gpu_blocks === null) {
      config = new SchedulerConfig({ ...config, num_gpu_blocks: enough_blocks(requests, config.block_size) });
    }
    const kv = new kv_cache_manager(config.num_gpu_blocks, config.block_size);
    const scheduler_cls = config.async_scheduling ? AsyncScheduler : Scheduler;
    const scheduler = new scheduler_cls(config, kv);
    for (const request of requests) scheduler.check(request); // refuse before the first step
    // Arrival order, and list order among requests arriving together (a stable sort).
    const pending = [...requests].sort((a, b) => a.arrival_step - b.arrival_step);
    // Steps whose output is not processed yet, newest first; two in flight with async.
    const in_flight = [];
    const depth = config.async_scheduling ? 2 : 1;
    const steps = [];
    while (pending.length || scheduler.waiting.length || scheduler.running.length || in_flight.length) {
      const step = steps.length;
      while (pending.length && pending[0].arrival_step <= step) scheduler.add_request(pending.shift());
      const states = [...scheduler.running, ...scheduler.waiting];
      const computed = new Map(states.map((s) => [s.id, s.num_computed_tokens]));
      const decoding = states.filter((s) => s.num_output_tokens &&
        s.num_computed_tokens === s.num_tokens + s.num_output_placeholders - 1).map((s) => s.id);
      let scheduled = new Map();
      let preempted = [];
      let sampled = [];
      let finished = [];
      if (scheduler.waiting.length || scheduler.running.length) {
        [scheduled, preempted] = scheduler.schedule();
        if (!scheduled.size && !in_flight.length) throw new Error(`step ${step}: no request could be scheduled`);
        sampled = scheduler.sampling(scheduled);
        in_flight.unshift([scheduled, sampled]);
      }
      if (in_flight.length && (in_flight.length === depth || !(scheduler.waiting.length || scheduler.running.length))) {
        finished = scheduler.update_from_output(...in_flight.pop())[1];
      }
      steps.push({
        step, scheduled,
        computed_before: new Map([...scheduled.keys()].map((i) => [i, computed.get(i)])),
        decoding: [...scheduled.keys()].filter((i) => decoding.includes(i)),
        sampled, preempted, finished,
        running: scheduler.running.map((s) => s.id),
        waiting: scheduler.waiting.map((s) => s.id),
        free_blocks: kv.num_free_blocks,
        hits: kv.hits,
        queries: kv.queries,
        block_tables: new Map(scheduler.running.map((s) => [s.id, kv.block_table(s.id)])),
      });
    }
    // The engine's last turn may only process an empty step: not a step to show.
    while (steps.length && !steps.at(-1).scheduled.size && !steps.at(-1).finished.length) steps.pop();
    return steps;
  }

  // Time to first token in steps, from arrival to the end of the step of the first token.
  function ttft_steps(requests, steps) {
    const first = new Map();
    for (const step of steps) for (const id of step.sampled) if (!first.has(id)) first.set(id, step.step);
    return new Map(requests.map((r) => [r.request_id, first.get(r.request_id) - r.arrival_step + 1]));
  }

  return { SchedulerConfig, Request, Scheduler, AsyncScheduler, enough_blocks, run, ttft_steps };
})();
