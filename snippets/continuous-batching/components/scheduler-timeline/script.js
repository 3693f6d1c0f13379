// The scheduler timeline component: a view over scheduler.js, scheduler.py's JavaScript twin
// (courseModules.scheduler, on block_pool.js), which runs the link's workload as scheduler.py
// does (and so vLLM 0.26.0's Scheduler.schedule); tests/test_js_mirrors.py holds the twin to
// the Python. parity.py says what the page must show for each link, and the tests check it in
// Chromium. The kit's stepper runs the link, the presets, the form and the steps. Texts go in
// with textContent only.
(() => {
  const { Refused, fill, element, whole, flag, once, calm, stepper, compact } = courseKit;
  const { Request, run, enough_blocks } = courseModules.scheduler;
  const SETTINGS = ["max_num_batched_tokens", "max_num_seqs", "num_gpu_blocks", "block_size",
                    "long_prefill_token_threshold", "enable_chunked_prefill"];
  // NAME:PROMPT:MAX_TOKENS:ARRIVAL, each number read by the kit's whole().
  const REQUEST = /^([A-Z]):([^:]+):([^:]+)(?::([^:]+))?$/;
  const NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const NONE = "—";

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
    if (new Set(workload.map((r) => r.id)).size !== workload.length) return null; // unique names
    return workload.some((r) => r.prompt === null || r.maxTokens === null || r.arrival === null)
      ? null : workload;
  }

  // A link's value (a setting, or the workload), or undefined where the page does not take it.
  function read(name, text, limits) {
    if (name === "requests") return readWorkload(text, limits) ?? undefined;
    if (name === "num_gpu_blocks" && text === "") return null; // enough blocks
    if (name === "enable_chunked_prefill") return flag(text) ?? undefined; // 1 or true, 0 or false
    return whole(text, limits[name]) ?? undefined;
  }

  function write(name, value) {
    if (name === "requests") return value.map((r) => `${r.id}:${r.prompt}:${r.maxTokens}:${r.arrival}`).join(",");
    return value === null ? "" : value === true ? "1" : value === false ? "0" : value;
  }

  // The link's workload through the twin's run(); a run longer than the page's limit is
  // refused (the page's limit, not scheduler.py's). Each scheduled request's kind, as
  // parity.py reads it: a decode, a recompute (preempted before), or a prefill.
  function simulate(model, maxSteps) {
    const requests = model.workload.map((r) => new Request(r.id, r.prompt, r.maxTokens, r.arrival));
    // A run that cannot end within the limit is refused before it runs (41,000 steps take a
    // second): a step schedules at most the budget, and samples one token of a request.
    const computed = model.workload.reduce((sum, r) => sum + r.prompt + r.maxTokens - 1, 0);
    const least = Math.max(Math.ceil(computed / model.settings.max_num_batched_tokens),
                           ...model.workload.map((r) => r.arrival + r.maxTokens));
    const steps = least > maxSteps ? [] : run(requests, undefined, model.settings);
    if (least > maxSteps || steps.length > maxSteps) throw new Refused("too_many_steps", { max: maxSteps });
    const preemptedBefore = new Set();
    for (const step of steps) {
      step.kinds = new Map([...step.scheduled.keys()].map((id) => [id, step.decoding.includes(id) ? "decode"
        : preemptedBefore.has(id) ? "recompute" : "prefill"]));
      for (const id of step.preempted) preemptedBefore.add(id);
      step.total = [...step.scheduled.values()].reduce((sum, n) => sum + n, 0);
    }
    const blocks = model.settings.num_gpu_blocks ?? enough_blocks(requests, model.settings.block_size);
    return { steps, usable: blocks - 1 };
  }

  const listed = (items) => items.join(", ") || NONE;
  const hue = (id) => (id.charCodeAt(0) * 47) % 360;
  const tinted = (made, id) => { made.style.setProperty("--st-hue", hue(id)); return made; };

  function setup(root) {
    compact(root);
    const heads = JSON.parse(root.dataset.heads);
    const workloadBody = root.querySelector(".st-workload tbody");
    const addButton = root.querySelector(".st-add");
    const bar = root.querySelector(".st-bar");
    const timelineBox = root.querySelector(".st-timeline-box");
    const timelineHead = root.querySelector(".st-timeline thead tr");
    const timelineBody = root.querySelector(".st-timeline tbody");
    const key = (name) => root.querySelector(`[data-key="${name}"]`);
    const limits = JSON.parse(root.dataset.limits);

    // The run: the totals, each request's time to first token (scheduler.py: ttft_steps), and
    // the timeline, one row per step, as scheduler.py's table() writes it.
    function draw(result, model) {
      const first = new Map();
      for (const step of result?.steps ?? []) for (const id of step.sampled) if (!first.has(id)) first.set(id, step.step);
      for (const r of model.workload) {
        key(`ttft-${r.id}`).textContent = first.has(r.id) ? String(first.get(r.id) - r.arrival + 1) : NONE;
      }
      if (!result) return;
      key("steps").value = String(result.steps.length);
      key("preemptions").value = String(result.steps.reduce((n, step) => n + step.preempted.length, 0));
      timelineHead.replaceChildren(element("th", heads.step, { scope: "col" }), element("th", heads.total, { scope: "col" }),
        ...model.workload.map((r) => tinted(element("th", r.id, { scope: "col", class: "st-id" }), r.id)),
        element("th", heads.waiting, { scope: "col" }));
      timelineBody.replaceChildren(...result.steps.map((step) => {
        const row = element("tr", null, { "data-step": String(step.step) });
        row.append(element("th", String(step.step), { scope: "row" }),
                   element("td", String(step.total), { "data-key": `t${step.step}-total` }));
        for (const r of model.workload) {
          const attributes = { "data-key": `t${step.step}-${r.id}` };
          let text = ".";
          if (step.scheduled.has(r.id)) {
            text = `${step.scheduled.get(r.id)}${step.sampled.includes(r.id) ? "*" : ""}`;
            attributes.class = `st-${step.kinds.get(r.id)}`;
          } else if (step.preempted.includes(r.id)) {
            [text, attributes.class] = ["x", "st-out"];
          }
          row.append(tinted(element("td", text, attributes), r.id));
        }
        row.append(element("td", step.waiting.join(",") || "-", { "data-key": `t${step.step}-waiting` }));
        return row;
      }));
    }

    // The step shown: its budget, its tokens per request, queues and blocks after it.
    function show(result, model) {
      if (!result) return;
      const step = result.steps[model.step];
      const budget = model.settings.max_num_batched_tokens;
      key("step").value = String(model.step);
      key("tokens").value = `${step.total}/${budget}`;
      const of = (kind) => [...step.scheduled].filter(([id]) => step.kinds.get(id) === kind);
      key("prefill").value = listed(of("prefill").map(([id, n]) => `${id}:${n}`));
      key("recompute").value = listed(of("recompute").map(([id, n]) => `${id}:${n}`));
      key("decode").value = listed(of("decode").map(([id]) => id));
      for (const name of ["sampled", "preempted", "finished", "running", "waiting"]) key(name).value = listed(step[name]);
      key("free").value = `${step.free_blocks}/${result.usable}`;
      // The budget as a bar: each request's share of it, in schedule order.
      bar.replaceChildren(...[...step.scheduled].map(([id, n]) => {
        const segment = tinted(element("span", `${id} ${n}`, { class: `st-seg st-${step.kinds.get(id)}` }), id);
        segment.style.width = `${(100 * n) / budget}%`;
        return segment;
      }));
      for (const row of timelineBody.querySelectorAll("[aria-current]")) row.removeAttribute("aria-current");
      const row = timelineBody.children[model.step];
      row.setAttribute("aria-current", "step");
      // Keep the row in view inside the timeline's own scroll box, not the page's.
      const head = timelineHead.getBoundingClientRect().height;
      const top = row.getBoundingClientRect().top - timelineBox.getBoundingClientRect().top + timelineBox.scrollTop;
      if (top - head < timelineBox.scrollTop ||
          top + row.offsetHeight > timelineBox.scrollTop + timelineBox.clientHeight) {
        timelineBox.scrollTop = Math.max(0, top - head - row.offsetHeight);
      }
    }

    // The workload's editors: a row per request, its numbers in text fields.
    function fillWorkload(model, { invalid }) {
      invalid.forget(workloadBody.querySelectorAll("input"));
      workloadBody.replaceChildren(...model.workload.map((r, index) => {
        const row = element("tr", null, { "data-index": String(index) });
        row.append(tinted(element("th", r.id, { scope: "row", class: "st-id" }), r.id));
        for (const [field, limit] of [["prompt", "prompt_tokens"], ["maxTokens", "max_tokens"], ["arrival", "arrival_step"]]) {
          const label = root.querySelector(`.st-workload thead th:nth-child(${row.children.length + 1})`).textContent;
          const input = element("input", null, { type: "text", inputmode: "numeric", autocomplete: "off", spellcheck: "false",
                                                 "data-field": field, "data-limit": limit, "aria-label": `${r.id} · ${label}` });
          input.value = String(r[field]);
          row.append(element("td", null));
          row.lastElementChild.append(input);
        }
        row.append(element("td", NONE, { "data-key": `ttft-${r.id}` }));
        const remove = element("button", "×", { type: "button", class: "st-remove", title: `${root.dataset.remove} ${r.id}`,
                                                "aria-label": `${root.dataset.remove} ${r.id}` });
        remove.disabled = model.workload.length <= limits.requests[0];
        row.append(element("td", null));
        row.lastElementChild.append(remove);
        return row;
      }));
      addButton.disabled = model.workload.length >= limits.requests[1];
    }

    const kit = stepper(root, "st", {
      settings: SETTINGS, workload: "requests", invalid: { num_gpu_blocks: "invalid_blocks" },
      read: (name, text) => read(name, text, limits), write,
      run: (model) => simulate(model, limits.steps[1]), view: [root.querySelector(".st-view"), root.querySelector(".st-summary")],
      first: () => 0, last: (model, result) => (result ? result.steps.length - 1 : null),
      fill: fillWorkload, draw, show,
    });
    const { model } = kit;

    // A number the reader typed into the workload: a whole number within the limits, or the
    // field is marked once typing pauses and the page keeps computing with the value from
    // before the edit (the kit's calm()).
    const request = (input) => model.workload[Number(input.closest("tr").dataset.index)];
    calm(workloadBody, kit.invalid, {
      handles: (input) => "field" in input.dataset,
      current: (input) => request(input)[input.dataset.field],
      read: (input) => whole(input.value.trim(), limits[input.dataset.limit]) ?? undefined,
      take: (input, value) => {
        request(input)[input.dataset.field] = value;
        kit.changed();
      },
      message: (input, kept) => {
        const [least, most] = limits[input.dataset.limit];
        return fill(kit.messages.invalid, { label: input.getAttribute("aria-label"), least, most, kept });
      },
    });
    workloadBody.addEventListener("click", (event) => {
      const remove = event.target.closest(".st-remove");
      if (!remove || model.workload.length <= limits.requests[0]) return;
      model.workload.splice(Number(remove.closest("tr").dataset.index), 1);
      fillWorkload(model, kit);
      kit.changed();
      addButton.focus();
    });
    addButton.addEventListener("click", () => {
      if (model.workload.length >= limits.requests[1]) return;
      const id = [...NAMES].find((c) => !model.workload.some((r) => r.id === c));
      model.workload.push({ id, prompt: 16, maxTokens: 4, arrival: Math.min(model.result ? model.step : 0, limits.arrival_step[1]) });
      fillWorkload(model, kit);
      kit.changed();
      workloadBody.lastElementChild.querySelector("input").focus();
    });
    timelineBody.addEventListener("click", (event) => {
      const row = event.target.closest("tr");
      if (row) kit.go(Number(row.dataset.step));
    });
    root.dataset.ready = "true";
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="scheduler-timeline"]').forEach(once(setup)));
})();
