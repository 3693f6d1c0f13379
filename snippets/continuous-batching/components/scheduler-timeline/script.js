// The scheduler timeline component. It runs the link's workload through a scheduler that
// follows snippets/continuous-batching/scheduler.py rule for rule (and so vLLM 0.26.0's
// Scheduler.schedule), with KV blocks counted as snippets/paged-attention/block_pool.py
// counts them. Each rule names the scheduler.py function it mirrors, and the vLLM function
// that one mirrors. parity.py says what the page must show for each link, and the tests
// check it in Chromium. Texts go in with textContent only.
(() => {
  const { Refused, fill, element, whole, once, LinkValues, attempt, share, fallbackNote,
          InvalidFields, stepControls, compact } = courseKit;
  const SETTINGS = ["max_num_batched_tokens", "max_num_seqs", "num_gpu_blocks", "block_size",
                    "long_prefill_token_threshold", "enable_chunked_prefill"];
  // NAME:PROMPT:MAX_TOKENS:ARRIVAL, each number read by the kit's whole().
  const REQUEST = /^([A-Z]):([^:]+):([^:]+)(?::([^:]+))?$/;
  const NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const NONE = "—";

  // block_pool.py: blocks_for (vLLM's cdiv in SingleTypeKVCacheManager.allocate_new_blocks).
  const blocksFor = (numTokens, blockSize) => Math.ceil(numTokens / blockSize);

  // block_pool.py: BlockPool, reduced to what scheduling reads: how many blocks each request
  // holds and how many are free. Which block ids a request holds changes no decision here
  // (no prefix caching, as scheduler.py), so the ids are not tracked.
  class BlockPool {
    constructor(numGpuBlocks, blockSize) {
      this.numGpuBlocks = numGpuBlocks;
      this.blockSize = blockSize;
      // Block 0 is the null block, never handed out (BlockPool.__init__; vLLM's
      // BlockPool.__init__).
      this.numFreeBlocks = numGpuBlocks - 1;
      this.tables = new Map(); // request id -> blocks held (SingleTypeKVCacheManager.req_to_blocks)
    }

    held(id) {
      return this.tables.get(id) ?? 0;
    }

    // BlockPool.allocate: grow the request's block table to hold numTokens tokens; new blocks
    // = blocks needed - blocks held (SingleTypeKVCacheManager.get_num_blocks_to_allocate).
    // Too few free: false, and nothing changes (NoFreeBlocks).
    allocate(id, numTokens) {
      const held = this.held(id);
      const needed = blocksFor(numTokens, this.blockSize) - held;
      if (needed > this.numFreeBlocks) return false;
      this.numFreeBlocks -= needed;
      this.tables.set(id, held + needed);
      return true;
    }

    // BlockPool.free: the request gives all its blocks back (SingleTypeKVCacheManager.free).
    free(id) {
      this.numFreeBlocks += this.tables.get(id);
      this.tables.delete(id);
    }
  }

  // scheduler.py: _State (vLLM's vllm/v1/request.py: Request).
  const newState = (request) => ({ request, id: request.id, numComputedTokens: 0,
                                   numOutputTokens: 0, preempted: false });
  // _State.num_tokens (Request.num_tokens): prompt + output tokens.
  const numTokens = (state) => state.request.prompt + state.numOutputTokens;

  class Scheduler {
    // scheduler.py: Scheduler.__init__.
    constructor(numGpuBlocks, settings) {
      this.maxNumBatchedTokens = settings.max_num_batched_tokens;
      this.maxNumSeqs = settings.max_num_seqs;
      // vllm/config/scheduler.py: SchedulerConfig.verify_max_model_len: budget >= max_num_seqs.
      if (this.maxNumBatchedTokens < this.maxNumSeqs) {
        throw new Refused("seqs_over_budget", { budget: this.maxNumBatchedTokens,
                                                seqs: this.maxNumSeqs });
      }
      this.longPrefillTokenThreshold = settings.long_prefill_token_threshold;
      this.enableChunkedPrefill = settings.enable_chunked_prefill;
      this.pool = new BlockPool(numGpuBlocks, settings.block_size);
      this.waiting = []; // FCFSRequestQueue: a deque, head first
      this.running = [];
    }

    // scheduler.py: Scheduler.check: refuse a request that could never finish.
    check(request) {
      // The most it ever holds: its last output token is sampled, never computed.
      const most = request.prompt + request.maxTokens - 1;
      const needed = blocksFor(most, this.pool.blockSize);
      const usable = this.pool.numGpuBlocks - 1; // block 0 is the null block
      if (needed > usable) {
        throw new Refused("never_fits", { r: request.id, tokens: most, needed, usable });
      }
      // Without chunked prefill vLLM requires max_model_len <= max_num_batched_tokens
      // (SchedulerConfig.verify_max_model_len): a whole prompt fits in one step.
      const total = request.prompt + request.maxTokens;
      if (!this.enableChunkedPrefill && total > this.maxNumBatchedTokens) {
        throw new Refused("no_chunking", { r: request.id, total,
                                           budget: this.maxNumBatchedTokens });
      }
    }

    // scheduler.py: Scheduler.add_request: a new request joins the back of the waiting queue
    // (vLLM's Scheduler.add_request).
    addRequest(state) {
      this.check(state.request);
      this.waiting.push(state);
    }

    // scheduler.py: Scheduler._allocate_slots (vLLM's KVCacheManager.allocate_slots, one
    // full-attention group, no prefix-cache hit, no lookahead, no watermark).
    allocateSlots(state, numNewTokens, fullSequenceMustFit) {
      const pool = this.pool;
      const held = pool.held(state.id);
      // A waiting request is admitted only if its whole sequence so far fits in the free
      // blocks (SchedulerConfig.scheduler_reserve_full_isl, default True).
      if (fullSequenceMustFit) {
        const whole = blocksFor(numTokens(state), pool.blockSize);
        if (whole - held > pool.numFreeBlocks) return false;
      }
      // Blocks for the tokens computed so far and this step's new ones.
      return pool.allocate(state.id, state.numComputedTokens + numNewTokens);
    }

    // scheduler.py: Scheduler._preempt_request (vLLM's Scheduler._preempt_request): free all
    // its blocks, forget what it computed (recompute), put it at the waiting queue's front
    // (FCFSRequestQueue.prepend_request).
    preemptRequest(state) {
      if (this.pool.tables.has(state.id)) this.pool.free(state.id);
      state.numComputedTokens = 0; // recompute
      state.preempted = true; // for the page only: its next chunks are a recompute
      this.waiting.unshift(state);
    }

    // scheduler.py: Scheduler.schedule (vLLM's Scheduler.schedule): the tokens scheduled per
    // request, in schedule order, and the requests preempted in this step.
    schedule() {
      let tokenBudget = this.maxNumBatchedTokens; // max_num_scheduled_tokens unset
      const threshold = this.longPrefillTokenThreshold;
      const scheduled = new Map();
      const preempted = [];

      // First the RUNNING requests, in their order, while the budget lasts.
      let reqIndex = 0;
      while (reqIndex < this.running.length && tokenBudget > 0) {
        const state = this.running[reqIndex];
        // What it lacks: the rest of its prompt (or recompute), or one token.
        let numNewTokens = numTokens(state) - state.numComputedTokens;
        if (threshold > 0 && threshold < numNewTokens) numNewTokens = threshold;
        numNewTokens = Math.min(numNewTokens, tokenBudget);
        // Blocks run out: preempt the last running request (FCFS policy), again and again,
        // until this one fits or is itself the one preempted.
        let fits = true;
        while (!this.allocateSlots(state, numNewTokens, false)) {
          const victim = this.running.pop();
          this.preemptRequest(victim);
          preempted.push(victim.id);
          if (victim === state) {
            fits = false;
            break;
          }
        }
        if (!fits) break; // no running request after it is scheduled in this step
        scheduled.set(state.id, numNewTokens);
        tokenBudget -= numNewTokens;
        reqIndex += 1;
      }

      // Then the WAITING requests, head first; none in a step that preempted.
      if (preempted.length === 0) {
        while (this.waiting.length > 0 && tokenBudget > 0) {
          if (this.running.length >= this.maxNumSeqs) break;
          const state = this.waiting[0];
          // A new request computes its prompt; a preempted one its prompt and the tokens it
          // had generated (request.num_tokens).
          let numNewTokens = numTokens(state) - state.numComputedTokens;
          if (threshold > 0 && threshold < numNewTokens) numNewTokens = threshold;
          // Without chunked prefill, a prompt longer than what is left of the budget ends
          // this step's admissions: no later request jumps it.
          if (!this.enableChunkedPrefill && numNewTokens > tokenBudget) break;
          numNewTokens = Math.min(numNewTokens, tokenBudget);
          if (!this.allocateSlots(state, numNewTokens, true)) break; // it waits, and all behind it
          this.waiting.shift();
          this.running.push(state);
          scheduled.set(state.id, numNewTokens);
          tokenBudget -= numNewTokens;
        }
      }
      return { scheduled, preempted };
    }

    // scheduler.py: Scheduler.update_from_output (vLLM's Scheduler.update_from_output): who
    // sampled a token, who finished.
    updateFromOutput(scheduled) {
      const sampled = [];
      const finished = [];
      const byId = new Map(this.running.map((state) => [state.id, state]));
      for (const [id, n] of scheduled) {
        const state = byId.get(id);
        // The tokens count as computed (vLLM: Scheduler._update_after_schedule).
        state.numComputedTokens += n;
        // A partial prompt chunk samples nothing (the V2 model runner counts no sampled token
        // for it: vllm/v1/worker/gpu/input_batch.py: get_num_sampled_and_rejected); the step
        // that computes a prompt's last token samples the first output.
        if (state.numComputedTokens < numTokens(state)) continue;
        state.numOutputTokens += 1;
        sampled.push(id);
        // Finished at max_tokens (vllm/v1/core/sched/utils.py: check_stop): its blocks go
        // back to the pool (Scheduler._free_request).
        if (state.numOutputTokens >= state.request.maxTokens) {
          finished.push(id);
          this.pool.free(id);
        }
      }
      this.running = this.running.filter((state) => !finished.includes(state.id));
      return { sampled, finished };
    }
  }

  // scheduler.py: run: every request to completion, one record per step from step 0; a
  // request arriving at step s joins the waiting queue before step s is scheduled. A run
  // longer than maxSteps is refused (the page's limit, not scheduler.py's).
  function run(workload, settings, maxSteps) {
    let numGpuBlocks = settings.num_gpu_blocks;
    if (numGpuBlocks === null) { // enough blocks that none ever runs out
      numGpuBlocks = 1;
      for (const r of workload) numGpuBlocks += blocksFor(r.prompt + r.maxTokens - 1, settings.block_size);
    }
    const scheduler = new Scheduler(numGpuBlocks, settings);
    for (const request of workload) scheduler.check(request); // refuse before the first step
    // Arrival order, and list order among requests arriving at the same step (a stable sort).
    const pending = [...workload].sort((a, b) => a.arrival - b.arrival);
    const steps = [];
    while (pending.length || scheduler.waiting.length || scheduler.running.length) {
      const step = steps.length;
      if (step >= maxSteps) throw new Refused("too_many_steps", { max: maxSteps });
      while (pending.length && pending[0].arrival <= step) {
        scheduler.addRequest(newState(pending.shift()));
      }
      const states = [...scheduler.running, ...scheduler.waiting];
      // One token after the prompt: a decode (run's `decoding`).
      const decoding = new Set(states
        .filter((s) => s.numOutputTokens > 0 && s.numComputedTokens === numTokens(s) - 1)
        .map((s) => s.id));
      const recomputing = new Set(states.filter((s) => s.preempted).map((s) => s.id));
      const { scheduled, preempted } = scheduler.schedule();
      if (!scheduled.size && (scheduler.waiting.length || scheduler.running.length)) {
        throw new Error(`step ${step}: no request could be scheduled`);
      }
      const { sampled, finished } = scheduler.updateFromOutput(scheduled);
      const kinds = new Map([...scheduled.keys()].map((id) => [id,
        decoding.has(id) ? "decode" : recomputing.has(id) ? "recompute" : "prefill"]));
      steps.push({
        scheduled, kinds, sampled, preempted, finished,
        running: scheduler.running.map((s) => s.id),
        waiting: scheduler.waiting.map((s) => s.id),
        freeBlocks: scheduler.pool.numFreeBlocks,
      });
    }
    return { steps, usable: numGpuBlocks - 1 };
  }

  // A link's value of a setting, or undefined where it is not one the page takes.
  function readSetting(name, text, limits) {
    if (name === "num_gpu_blocks" && text === "") return null; // enough blocks
    if (name === "enable_chunked_prefill") {
      return text === "1" ? true : text === "0" ? false : undefined;
    }
    return whole(text, limits[name]) ?? undefined;
  }

  // A link's workload, or null where it is not one the page takes.
  function readWorkload(text, limits) {
    const items = text.split(",").map((item) => item.match(REQUEST));
    const [least, most] = limits.requests;
    if (items.some((m) => !m) || items.length < least || items.length > most) return null;
    const workload = items.map(([, id, prompt, maxTokens, arrival]) => ({
      id, prompt: whole(prompt, limits.prompt_tokens),
      maxTokens: whole(maxTokens, limits.max_tokens),
      arrival: whole(arrival ?? "0", limits.arrival_step),
    }));
    const ids = new Set(workload.map((r) => r.id));
    if (ids.size !== workload.length) return null; // names are unique
    if (workload.some((r) => r.prompt === null || r.maxTokens === null || r.arrival === null)) {
      return null;
    }
    return workload;
  }

  const encode = (workload) =>
    workload.map((r) => `${r.id}:${r.prompt}:${r.maxTokens}:${r.arrival}`).join(",");
  const listed = (items) => items.join(", ") || NONE;
  const hue = (id) => (id.charCodeAt(0) * 47) % 360;

  function setup(root) {
    compact(root);
    const presets = JSON.parse(root.dataset.presets);
    const limits = JSON.parse(root.dataset.limits);
    const messages = JSON.parse(root.dataset.messages);
    const fieldNames = JSON.parse(root.dataset.fields);
    const presetNames = JSON.parse(root.dataset.presetNames);
    const heads = JSON.parse(root.dataset.heads);
    const start = root.dataset.start;
    const form = root.querySelector(".st-settings");
    const error = root.querySelector(".st-error");
    const view = root.querySelector(".st-view");
    const totals = root.querySelector(".st-summary");
    const workloadBody = root.querySelector(".st-workload tbody");
    const addButton = root.querySelector(".st-add");
    const slider = root.querySelector(".st-slider");
    const bar = root.querySelector(".st-bar");
    const timelineBox = root.querySelector(".st-timeline-box");
    const timelineHead = root.querySelector(".st-timeline thead tr");
    const timelineBody = root.querySelector(".st-timeline tbody");
    const key = (name) => root.querySelector(`[data-key="${name}"]`);
    const invalid = new InvalidFields(root.querySelector(".st-invalid"));
    const showFallback = fallbackNote(root, messages, limits, presetNames[start]);

    // What the page runs: the link's values, or the fence's trace's where the link has none
    // or one the page does not take (named in the note).
    const link = new LinkValues(presets[start]);
    const model = { settings: {}, workload: null, step: 0 };
    for (const name of SETTINGS) {
      model.settings[name] = link.read(name, (text) => readSetting(name, text, limits));
    }
    model.workload = link.read("requests", (text) => readWorkload(text, limits) ?? undefined);
    let result = null; // the run shown: { steps, usable, ttft }, or null when refused

    function compute() {
      result = attempt(() => run(model.workload, model.settings, limits.steps[1]), error,
                     [view, totals], messages);
      // Time to first token in steps (scheduler.py: ttft_steps): from arrival to the end of
      // the step that produced the first token.
      const first = new Map();
      if (result) {
        result.steps.forEach((step, index) => {
          for (const id of step.sampled) if (!first.has(id)) first.set(id, index);
        });
      }
      for (const r of model.workload) {
        key(`ttft-${r.id}`).textContent = first.has(r.id) ? String(first.get(r.id) - r.arrival + 1) : NONE;
      }
      if (!result) return;
      const { steps } = result;
      key("steps").value = String(steps.length);
      key("preemptions").value = String(steps.reduce((n, step) => n + step.preempted.length, 0));
      slider.max = String(steps.length - 1);

      // The timeline: one row per step, as scheduler.py's table() writes it.
      timelineHead.replaceChildren(element("th", heads.step, { scope: "col" }),
                                   element("th", heads.total, { scope: "col" }));
      for (const r of model.workload) {
        const head = element("th", r.id, { scope: "col", class: "st-id" });
        head.style.setProperty("--st-hue", hue(r.id));
        timelineHead.append(head);
      }
      timelineHead.append(element("th", heads.waiting, { scope: "col" }));
      const rows = steps.map((step, index) => {
        const row = element("tr", null, { "data-step": String(index) });
        let total = 0;
        for (const n of step.scheduled.values()) total += n;
        row.append(element("th", String(index), { scope: "row" }),
                   element("td", String(total), { "data-key": `t${index}-total` }));
        for (const r of model.workload) {
          let text = ".";
          const attributes = { "data-key": `t${index}-${r.id}` };
          if (step.scheduled.has(r.id)) {
            text = `${step.scheduled.get(r.id)}${step.sampled.includes(r.id) ? "*" : ""}`;
            attributes.class = `st-${step.kinds.get(r.id)}`;
          } else if (step.preempted.includes(r.id)) {
            text = "x";
            attributes.class = "st-out";
          }
          const cell = element("td", text, attributes);
          cell.style.setProperty("--st-hue", hue(r.id));
          row.append(cell);
        }
        row.append(element("td", step.waiting.join(",") || "-", { "data-key": `t${index}-waiting` }));
        return row;
      });
      timelineBody.replaceChildren(...rows);
    }

    // The step shown: its budget, its tokens per request, queues and blocks after it.
    function showStep() {
      if (!result) return;
      const { steps, usable } = result;
      const step = steps[model.step];
      key("step").value = String(model.step);
      slider.value = String(model.step);
      let total = 0;
      for (const n of step.scheduled.values()) total += n;
      const budget = model.settings.max_num_batched_tokens;
      key("tokens").value = `${total}/${budget}`;
      const of = (kind) => [...step.scheduled].filter(([id]) => step.kinds.get(id) === kind);
      key("prefill").value = listed(of("prefill").map(([id, n]) => `${id}:${n}`));
      key("recompute").value = listed(of("recompute").map(([id, n]) => `${id}:${n}`));
      key("decode").value = listed(of("decode").map(([id]) => id));
      key("sampled").value = listed(step.sampled);
      key("preempted").value = listed(step.preempted);
      key("finished").value = listed(step.finished);
      key("running").value = listed(step.running);
      key("waiting").value = listed(step.waiting);
      key("free").value = `${step.freeBlocks}/${usable}`;

      // The budget as a bar: each request's share of it, in schedule order.
      const segments = [...step.scheduled].map(([id, n]) => {
        const segment = element("span", `${id} ${n}`, { class: `st-seg st-${step.kinds.get(id)}` });
        segment.style.width = `${(100 * n) / budget}%`;
        segment.style.setProperty("--st-hue", hue(id));
        return segment;
      });
      bar.replaceChildren(...segments);

      for (const row of timelineBody.querySelectorAll("[aria-current]")) row.removeAttribute("aria-current");
      const row = timelineBody.children[model.step];
      row.setAttribute("aria-current", "step");
      // Keep the row in view inside the timeline's own scroll box, not the page's.
      const boxTop = timelineBox.getBoundingClientRect().top;
      const head = timelineHead.getBoundingClientRect().height;
      const top = row.getBoundingClientRect().top - boxTop + timelineBox.scrollTop;
      if (top - head < timelineBox.scrollTop ||
          top + row.offsetHeight > timelineBox.scrollTop + timelineBox.clientHeight) {
        timelineBox.scrollTop = Math.max(0, top - head - row.offsetHeight);
      }
    }

    function shareState() {
      const values = {};
      for (const name of SETTINGS) {
        const value = model.settings[name];
        values[name] = value === null ? "" : value === true ? "1" : value === false ? "0" : value;
      }
      share({ ...values, requests: encode(model.workload), step: model.step });
      showFallback([]); // the link no longer holds the values the note is about
    }

    // A value the reader typed: a whole number within the limits, or the field is marked and
    // the page keeps computing with the last valid value.
    function typed(input, limitName, label, emptyMeansNull = false) {
      const text = input.value.trim();
      const value = emptyMeansNull && text === "" ? null : whole(text, limits[limitName]);
      const ok = value !== null || (emptyMeansNull && text === "");
      const [least, most] = limits[limitName];
      invalid.mark(input, ok ? null : fill(messages[emptyMeansNull ? "invalid_blocks" : "invalid"],
                                           { label, least, most }));
      return ok ? { value } : null;
    }

    // Recompute after a reader's change; the step stays where it was if the run still has it.
    function changed() {
      compute();
      if (result) model.step = Math.min(model.step, result.steps.length - 1);
      showStep();
      shareState();
    }

    function fillForm() {
      for (const name of SETTINGS) {
        const input = form.elements.namedItem(name);
        const value = model.settings[name];
        if (name === "enable_chunked_prefill") input.checked = value;
        else input.value = value === null ? "" : String(value);
        invalid.mark(input, null);
      }
    }

    function fillWorkload() {
      invalid.forget(workloadBody.querySelectorAll("input"));
      const rows = model.workload.map((r, index) => {
        const row = element("tr", null, { "data-index": String(index) });
        const name = element("th", r.id, { scope: "row", class: "st-id" });
        name.style.setProperty("--st-hue", hue(r.id));
        row.append(name);
        for (const [field, limit] of [["prompt", "prompt_tokens"], ["maxTokens", "max_tokens"],
                                      ["arrival", "arrival_step"]]) {
          const head = `.st-workload thead th:nth-child(${row.children.length + 1})`;
          const label = root.querySelector(head).textContent;
          const input = element("input", null, {
            type: "text", inputmode: "numeric", autocomplete: "off", spellcheck: "false",
            "data-field": field, "data-limit": limit, "aria-label": `${r.id} · ${label}`,
          });
          input.value = String(r[field]);
          const cell = element("td", null);
          cell.append(input);
          row.append(cell);
        }
        row.append(element("td", NONE, { "data-key": `ttft-${r.id}` }));
        const remove = element("button", "×", { type: "button", class: "st-remove",
                                                "aria-label": `${root.dataset.remove} ${r.id}`,
                                                title: `${root.dataset.remove} ${r.id}` });
        remove.disabled = model.workload.length <= limits.requests[0];
        const cell = element("td", null);
        cell.append(remove);
        row.append(cell);
        return row;
      });
      workloadBody.replaceChildren(...rows);
      addButton.disabled = model.workload.length >= limits.requests[1];
    }

    fillForm();
    fillWorkload();
    compute();
    if (result && link.params.has("step")) {
      const step = whole(link.params.get("step"), [0, result.steps.length - 1]);
      if (step === null) link.fallback.push("step");
      model.step = step ?? 0;
    }
    showFallback(link.fallback);
    showStep();

    root.querySelector(".st-presets").addEventListener("click", (event) => {
      const name = event.target.closest("button")?.dataset.preset;
      if (!name) return;
      for (const setting of SETTINGS) {
        model.settings[setting] = readSetting(setting, presets[name][setting], limits);
      }
      model.workload = readWorkload(presets[name].requests, limits);
      model.step = 0;
      fillForm();
      fillWorkload();
      changed();
    });
    form.addEventListener("input", (event) => {
      const input = event.target;
      const name = input.name;
      if (name === "enable_chunked_prefill") {
        model.settings[name] = input.checked;
      } else {
        const label = fieldNames[name];
        const read = typed(input, name, label, name === "num_gpu_blocks");
        if (!read) return;
        model.settings[name] = read.value;
      }
      changed();
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    workloadBody.addEventListener("input", (event) => {
      const input = event.target;
      const index = Number(input.closest("tr").dataset.index);
      const read = typed(input, input.dataset.limit, input.getAttribute("aria-label"));
      if (!read) return;
      model.workload[index][input.dataset.field] = read.value;
      changed();
    });
    workloadBody.addEventListener("click", (event) => {
      const remove = event.target.closest(".st-remove");
      if (!remove || model.workload.length <= limits.requests[0]) return;
      model.workload.splice(Number(remove.closest("tr").dataset.index), 1);
      fillWorkload();
      changed();
      addButton.focus();
    });
    addButton.addEventListener("click", () => {
      if (model.workload.length >= limits.requests[1]) return;
      const id = [...NAMES].find((c) => !model.workload.some((r) => r.id === c));
      const arrival = Math.min(result ? model.step : 0, limits.arrival_step[1]);
      model.workload.push({ id, prompt: 16, maxTokens: 4, arrival });
      fillWorkload();
      changed();
      workloadBody.lastElementChild.querySelector("input").focus();
    });

    function go(step) {
      if (!result) return;
      model.step = step;
      showStep();
      shareState();
    }
    stepControls(root.querySelector(".st-steps"), slider,
                 () => result && { step: model.step, last: result.steps.length - 1 }, go);
    timelineBody.addEventListener("click", (event) => {
      const row = event.target.closest("tr");
      if (row) go(Number(row.dataset.step));
    });
    root.dataset.ready = "true";
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="scheduler-timeline"]').forEach(once(setup)));
})();
