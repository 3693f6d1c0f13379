// The block table component: a view over courseModules.block_trace, block_trace.py's JavaScript
// twin (on block_pool.js, block_pool.py's), whose run replays the link's operations as
// block_trace.py does, and so vLLM 0.26.0's BlockPool (test_block_trace_twin.py and
// test_js_mirrors.py hold the twins to the Python). parity.py says what the page must show for
// each link, and the tests check it in Chromium.
(() => {
  const { fill, element, whole, flag, fixed, share, fieldLabel, InvalidFields, fallbackNote, calm, compact, once } =
    courseKit;
  const { run, encode } = courseModules.block_trace;
  // A request's name and its tokens (read by the kit's whole()) or free.
  const OP = /^([A-Z]):([^:]+)$/;
  const TOKENS = [0, 999999];

  // A link the page cannot replay: one it does not take, or one block_pool.js refuses
  // (a ValueError: a request that shrinks, or one that finishes twice).
  class BadLink extends Error {}

  // What the settings' fields take; a request's tokens are TOKENS.
  const LIMITS = { blocks: [2, 64], block_size: [1, 64] };

  // A whole number from least to most, as the kit reads numbers.
  function bounded(text, least, most) {
    const value = whole(text, [least, most]);
    if (value === null) throw new BadLink(`${text} is not from ${least} to ${most}`);
    return value;
  }

  // The link's operations as a trace ([request, tokens], null: it finishes), run to the
  // step: the pool then, what the step did and the operations refused on the way.
  function replay(state) {
    const blocks = bounded(state.blocks, ...LIMITS.blocks);
    const blockSize = bounded(state.block_size, ...LIMITS.block_size);
    if (flag(state.caching) === null) throw new BadLink("caching");
    const trace = (state.ops ? state.ops.split(",") : []).map((op) => {
      const [, request, tokens] = op.match(OP) ?? [];
      if (!request || (tokens !== "free" && whole(tokens, TOKENS) === null)) throw new BadLink("ops");
      return [request, tokens === "free" ? null : whole(tokens, TOKENS)];
    });
    const step = state.step === null ? trace.length : bounded(state.step, 0, trace.length);
    const steps = [...run(trace.slice(0, step), blocks, flag(state.caching), blockSize)];
    const [, pool, happened] = steps.at(-1); // run's one pool, after the step
    const refused = steps.filter(([, , did]) => did.kind === "refused").map(([, , did]) => encode([[did.r, did.n]]));
    return { pool, ops: trace.map((op) => encode([op])), refused, happened, step, total: trace.length };
  }

  // replay(state), or null for a link the page cannot replay.
  function replayed(state) {
    try {
      return replay(state);
    } catch (problem) {
      if (problem instanceof BadLink || problem?.name === "ValueError") return null;
      throw problem;
    }
  }

  const NAMED = 4; // operations a note names before "…"
  const listed = (ops) => ops.slice(0, NAMED).join(", ") + (ops.length > NAMED ? ", …" : "");

  function setup(root) {
    compact(root);
    const text = JSON.parse(root.dataset.text);
    const labels = JSON.parse(root.dataset.labels);
    const settings = root.querySelector(".bt-settings");
    const newRequest = root.querySelector(".bt-new");
    const happenedLine = root.querySelector(".bt-happened");
    const later = root.querySelector(".bt-later");
    const dropped = root.querySelector(".bt-dropped");
    const invalid = new InvalidFields(root.querySelector(".bt-invalid"));
    const key = (name) => root.querySelector(`[data-key="${name}"]`);
    // The link's values; one the page does not take falls back to the lesson's (the fence's),
    // and the kit's note names it: a setting out of its limits, operations the pool cannot
    // replay (a request that shrinks or finishes twice), a step past the last. Each is read in
    // turn against what the page kept of those before it, so that what it keeps replays.
    const link = new URLSearchParams(location.search);
    const defaults = { blocks: root.dataset.blocks, block_size: root.dataset.blockSize, caching: "0",
                       ops: root.dataset.ops, step: null };
    const fallback = [];
    const state = { ...defaults };
    for (const name of Object.keys(defaults)) {
      if (!link.has(name)) continue;
      // The step last: read against the operations the page keeps.
      if (replayed({ ...state, [name]: link.get(name) })) state[name] = link.get(name);
      else fallback.push(name);
    }
    const showFallback = fallbackNote(root, JSON.parse(root.dataset.messages), LIMITS, "");
    let current = null, undo = null; // undo: the state before an operation dropped the steps after it

    const button = (label, onClick) => Object.assign(element("button", label, { type: "button" }), { onclick: onClick });

    function show(result) {
      const { pool, ops, refused, happened, step, total } = result;
      key("step").value = `${step}/${total}`;
      const values = { ...happened, blocks: (happened.blocks ?? []).join(", ") };
      happenedLine.textContent = fill(text[happened.kind], values);
      // Before the last step, an operation drops the steps after it: the page says so first.
      later.hidden = step === total;
      later.textContent = step === total ? "" : fill(text.later, {
        step, total, count: total - step, ops: listed(ops.slice(step)) });
      const body = root.querySelector(".bt-requests tbody");
      body.replaceChildren();
      const owner = new Map([[pool.null_block, "null"]]);
      const { hashed, free_queue: free } = pool;
      for (const request of pool.requests.sort()) {
        const table = pool.block_table(request);
        const held = pool.num_tokens(request);
        table.forEach((block, index) => owner.set(block, `${request}${index}`));
        const row = element("tr", null);
        const actions = element("td", null);
        actions.append(button(labels.grow_one, () => act(`${request}:${held + 1}`)),
                       button(labels.grow_block, () => act(`${request}:${held + pool.block_size}`)),
                       button(labels.finish, () => act(`${request}:free`)));
        row.append(element("th", request), element("td", String(held), { "data-key": `tokens-${request}` }),
                   element("td", table.join(" ") || "—", { "data-key": `table-${request}` }),
                   element("td", held ? String(pool.slot(request, held - 1)) : "—", { "data-key": `slot-${request}` }),
                   actions);
        body.append(row);
      }
      const grid = root.querySelector(".bt-pool");
      grid.replaceChildren();
      for (let block = 0; block < pool.num_gpu_blocks; block += 1) {
        const label = owner.get(block) ?? (hashed.has(block) ? "free#" : "free");
        const kind = block === pool.null_block ? "null" : owner.has(block) ? "used" : label;
        const box = element("div", null, { class: `bt-block bt-${kind.replace("#", "-hashed")}` });
        if (kind === "used") box.style.setProperty("--bt-hue", (label.charCodeAt(0) * 47) % 360);
        box.append(element("span", String(block), { class: "bt-id" }),
                   element("span", label, { "data-key": `block-${block}` }));
        grid.append(box);
      }
      key("free").value = free.map((block) => (hashed.has(block) ? `${block}#` : String(block))).join(" ") || "—";
      key("used").value = `${pool.num_gpu_blocks - 1 - free.length}/${pool.num_gpu_blocks - 1}`;
      // The gauge to 4 decimals, as block_trace.py prints it, and as vLLM's log line writes
      // it (vllm/v1/metrics/loggers.py: LoggingStatLogger.log: "%.1f%%" of usage * 100).
      key("gauge").value = fixed(pool.usage, 4);
      key("percent").value = `${fixed(pool.usage * 100, 1)}%`;
      key("refused").value = refused.join(", ") || "—";
    }

    // The settings' fields show the state's values, none of them marked.
    function fillForm() {
      settings.elements.blocks.value = state.blocks;
      settings.elements.block_size.value = state.block_size;
      settings.elements.caching.checked = state.caching === "1";
      for (const input of [settings.elements.blocks, settings.elements.block_size]) invalid.mark(input, null);
    }

    // Replay the state; what the link holds goes into it as the page reads it (１２ is 12).
    // dropping: { ops, step }, the operations after the step that a reader's operation there
    // dropped, named in a note.
    function update(keepInLink, dropping = null) {
      current = replayed(state); // the link's values as read (fallback) replay, and so do the reader's
      Object.assign(state, {
        blocks: String(current.pool.num_gpu_blocks), block_size: String(current.pool.block_size),
        caching: flag(state.caching) ? "1" : "0", ops: current.ops.join(","),
        step: current.step === current.total ? null : String(current.step),
      });
      show(current);
      dropped.hidden = dropping === null;
      if (dropping) {
        dropped.querySelector(".bt-dropped-text").textContent = fill(text.dropped, {
          count: dropping.ops.length, step: dropping.step, ops: listed(dropping.ops) });
      } else undo = null;
      if (keepInLink) {
        share(state); // a step of null: the last one
        showFallback([]); // the link no longer holds the values the note is about
      }
      root.dataset.ready = "true";
    }

    // A reader's operation replaces whatever came after the step shown; the note says which
    // operations that dropped, with a button to bring them back.
    function act(op) {
      if (!current) return;
      const before = { ...state };
      const { ops, step } = current;
      Object.assign(state, { ops: ops.slice(0, step).concat(op).join(","), step: null });
      update(true, step < ops.length ? { ops: ops.slice(step), step } : null);
      if (step < ops.length) undo = before;
    }

    dropped.querySelector(".bt-undo").addEventListener("click", () => {
      if (!undo) return;
      Object.assign(state, undo);
      update(true);
      root.querySelector('[data-go="next"]').focus();
    });
    root.querySelector(".bt-steps").addEventListener("click", (event) => {
      const go = event.target.closest("button")?.dataset.go;
      if (!go) return;
      if (go === "reset" || go === "clear") {
        Object.assign(state, defaults, { ops: go === "reset" ? defaults.ops : "" });
        fillForm();
      } else if (current) {
        const moves = { first: 0, prev: current.step - 1, next: current.step + 1, last: current.total };
        const step = Math.min(Math.max(moves[go], 0), current.total);
        state.step = step === current.total ? null : String(step);
      }
      update(true);
    });
    // A value the reader typed: the page takes it, or marks the field once typing pauses and
    // shows (and shares) the value the field held when the reader began to edit it: not a
    // number typed on the way to another (the 6 of 65). The kit's calm() does it.
    const replays = (input) => {
      const value = whole(input.value, LIMITS[input.name]);
      return value !== null && (!current || replayed({ ...state, [input.name]: String(value) })) ? String(value) : undefined;
    };
    calm(settings, invalid, {
      handles: (input) => input.name in LIMITS,
      current: (input) => state[input.name],
      read: replays,
      take: (input, value) => {
        state[input.name] = value;
        update(true);
      },
      message: (input, kept) => {
        const [least, most] = LIMITS[input.name];
        const value = whole(input.value, LIMITS[input.name]);
        return fill(value === null ? text.invalid : text.invalid_replay, { label: fieldLabel(input), least, most, value, kept });
      },
    });
    settings.elements.caching.addEventListener("input", (event) => {
      state.caching = event.target.checked ? "1" : "0";
      update(true);
    });
    settings.addEventListener("submit", (event) => event.preventDefault());
    const tokensField = newRequest.elements.tokens;
    // The new request's tokens: marked once typing pauses, or as the field loses focus or the
    // reader adds the request.
    const readTokens = () => {
      const tokens = whole(tokensField.value, [1, TOKENS[1]]);
      invalid.later(tokensField, tokens !== null ? null : fill(text.invalid_tokens, {
        label: fieldLabel(tokensField), least: 1, most: TOKENS[1].toLocaleString("en-US") }));
      return tokens;
    };
    tokensField.addEventListener("input", readTokens);
    tokensField.addEventListener("blur", () => invalid.now(tokensField));
    newRequest.addEventListener("submit", (event) => {
      event.preventDefault();
      const tokens = readTokens();
      invalid.now(tokensField);
      if (!current || tokens === null) return;
      const name = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"].find((c) => !current.pool.requests.includes(c));
      if (name) act(`${name}:${tokens}`);
    });
    update(false);
    showFallback(fallback);
    fillForm();
  }

  document$.subscribe(() => document.querySelectorAll('[data-component="block-table"]').forEach(once(setup)));
})();
