// The GPU layout. data.py gives each model's config and the lesson's constants; the split
// is tp_memory.js (tp_memory.py's twin), the KV budget follows tp_budget.py (lesson 8's
// kv_budget on the fullest GPU), the wire and the times tp_comm.py (lesson 1's decode
// model per rank, plus the all-reduces). parity.py says what the page must show for each
// link. Texts go in with textContent only.
(() => {
  const { Refused, fill, element, number, whole, fixed, once, LinkValues, attempt, share,
          fallbackNote, fieldLabel, InvalidFields, calm, compact } = courseKit;
  const { refusal, layout, kv_tokens, kv_head_replicas, vocab_rows, _dense } =
    courseModules.tp_memory;
  const GIB = 1024 ** 3;
  const NONE = "—";
  const LINKS = ["pcie", "nvlink"];
  // GiB with 2 decimals, as Python's f"{x:.2f}" writes a negative number too.
  const gib = (bytes) => (bytes < 0 ? "-" : "") + fixed(Math.abs(bytes) / GIB, 2);
  // A whole number with its thousands grouped, as Python's f"{n:,}".
  const grouped = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

  // tp_comm.py: ring_factor: what each GPU sends and receives per byte reduced.
  const ringFactor = (n) => 2 * (n - 1) / n;

  // tp_comm.py: allreduce_bytes: two all-reduces of hidden_size 16-bit values per token
  // and layer (o_proj, down_proj).
  const allreduceBytes = (config, tokens) =>
    2 * config.num_hidden_layers * tokens * config.hidden_size * 2;

  // tp_comm.py: comm_seconds: each all-reduce costs the link's latency plus its bytes times
  // the ring factor over the bus bandwidth.
  function commSeconds(config, tp, tokens, link) {
    if (tp === 1) return 0;
    const count = 2 * config.num_hidden_layers;
    const perCall = allreduceBytes(config, tokens) / count;
    const seconds = link.latency_us * 1e-6 + perCall * ringFactor(tp) / (link.bus_gb_s * 1e9);
    return count * seconds;
  }

  // tp_comm.py: gpu_seconds: one decode step on one TP rank, lesson 1's way
  // (decode_batch.py: weights_read on this rank's slice of the tables, matmul_flops / tp).
  function gpuSeconds(n, model, tp, batch, context) {
    const config = model.config;
    const c = _dense(config), rank = layout(config, tp)[0];
    const kvPerToken = 2 * config.num_hidden_layers * rank.kv_heads * c.head_dim * 2;
    const row = 2 * config.hidden_size;
    const weights = config.tie_word_embeddings ? rank.weight_bytes
      : rank.weight_bytes - rank.vocab_rows * row + batch * row;
    const read = weights + batch * context * kvPerToken;
    const attention = batch * context * config.num_hidden_layers * rank.heads;
    const matmul = 2 * model.linear * batch + 2 * config.vocab_size * config.hidden_size * batch;
    const flops = matmul / tp + attention * c.head_dim * 4;
    return Math.max(read / n.bandwidth, flops / n.peak);
  }

  // tp_budget.py: gpu_budget: lesson 8's kv_budget on the fullest GPU (its share, rounded
  // up, less its weights, the activation peak and non-torch memory), and why vLLM would not
  // start (null: it starts).
  function budget(n, model, ranks, utilization) {
    const fullest = ranks.reduce((most, rank) => (rank.weight_bytes > most.weight_bytes ? rank : most));
    const requested = Math.ceil(n.total * utilization);
    const kv = requested - fullest.weight_bytes - model.activation - n.non_torch;
    const refused = n.total - n.context_memory < requested ? "no_free" : kv <= 0 ? "no_kv" : null;
    return { fullest, requested, kv, refused };
  }

  // Everything the page shows for the values v; Refused where vLLM refuses the TP size.
  function compute(n, v) {
    const model = n.models[v.model], config = model.config;
    const why = refusal(config, v.tp);
    if (why) throw new Refused("refused", { tp: v.tp, reason: why });
    const ranks = layout(config, v.tp, v.pp);
    const b = budget(n, model, ranks, v.gpu_memory_utilization);
    const fits = b.refused === null;
    const held = (rank, length) => kv_tokens(config, rank, b.kv, length);
    const stages = [];
    for (let stage = 0; stage < v.pp; stage++) {
      const rank = ranks[stage * v.tp];
      const gpus = [stage * v.tp, stage * v.tp + v.tp - 1];
      const tables = [["embed", stage === 0], ["lm_head", stage === v.pp - 1]]
        .filter(([, has]) => has).map(([table]) => table);
      stages.push({
        gpus: [...new Set(gpus.map(String))].join("–"),
        layers: `${rank.layers[0]}–${rank.layers[1] - 1}`,
        tables: tables.join(", ") || NONE,
        weights: gib(rank.weight_bytes),
        tokens: fits ? held(rank, n.max_model_len).tokens : null,
      });
    }
    const tokens = fits ? Math.min(...ranks.map((rank) => held(rank, n.max_model_len).tokens)) : null;
    const concurrency = fits ? tokens / n.max_model_len : null;
    // Sequences of the step's context the engine holds: the fewest blocks of any GPU.
    const seqs = fits
      ? Math.floor(Math.min(...ranks.map((rank) => held(rank, n.context).num_blocks)) /
                   Math.ceil(n.context / courseModules.tp_memory.BLOCK_SIZE))
      : null;
    const reachable = fits && v.batch <= seqs;
    const wire = v.tp > 1;
    const layers = config.num_hidden_layers;
    const perStep = wire ? allreduceBytes(config, v.batch) : 0;
    const first = ranks[0];
    const out = {
      gpus: String(v.tp * v.pp),
      weights: gib(b.fullest.weight_bytes),
      tokens: fits ? grouped(tokens) : NONE,
      per_token: grouped(wire ? allreduceBytes(config, 1) : 0),
      heads: `${first.heads} / ${config.num_attention_heads}`,
      kv_heads: `${first.kv_heads} / ${config.num_key_value_heads}`,
      copies: String(kv_head_replicas(config.num_key_value_heads, v.tp)),
      vocab_rows: grouped(vocab_rows(config.vocab_size, v.tp, 0)[0]),
      share: gib(b.requested),
      activation: gib(model.activation),
      non_torch: gib(n.non_torch),
      kv_gib: gib(b.kv),
      concurrency: fits ? fixed(concurrency, 2) : NONE,
      seqs: fits ? grouped(seqs) : NONE,
      per_layer: grouped(wire ? Math.floor(allreduceBytes(config, 1) / layers) : 0),
      calls: String(wire ? 2 * layers : 0),
      per_step: grouped(perStep),
      ring: fixed(ringFactor(v.tp), 2),
      sent: grouped(Math.trunc(perStep * ringFactor(v.tp))),
    };
    for (const key of LINKS) {
      const link = n.links[key];
      const comm = commSeconds(config, v.tp, v.batch, link);
      out[`ar_${key}_row`] = reachable ? fixed(comm * 1e3, 2) : NONE;
      const step = 1e3 * (gpuSeconds(n, model, v.tp, v.batch, n.context) + comm);
      out[`step_${key}`] = reachable && v.pp === 1 ? fixed(step, 2) : NONE;
    }
    out.ar_pcie = out.ar_pcie_row;
    return { out, stages, budget: b, fits, seqs, reachable, least: fits ? tokens : null };
  }

  function setup(root) {
    const n = JSON.parse(root.dataset.numbers);
    const messages = JSON.parse(root.dataset.messages);
    const text = JSON.parse(root.dataset.text);
    const form = root.querySelector(".gl-form");
    const field = (name) => form.elements.namedItem(name);
    const error = root.querySelector(".gl-error");
    const view = [root.querySelector(".gl-figures"), root.querySelector(".gl-view")];
    const invalid = new InvalidFields(root.querySelector(".gl-invalid"));
    const tbody = root.querySelector(".gl-stages tbody");
    const showFallback = fallbackNote(root, messages, n.limits, messages.start);

    // Each field's value from a text, or undefined where the page does not take it.
    const inRange = (value, [least, most]) =>
      (value !== null && value >= least && value <= most ? value : undefined);
    const readers = {
      model: (t) => (Object.hasOwn(n.models, t) ? t : undefined),
      tp: (t) => { const v = whole(t, [1, 16]); return n.tps.includes(v) ? v : undefined; },
      pp: (t) => { const v = whole(t, [1, 8]); return n.pps.includes(v) ? v : undefined; },
      batch: (t) => whole(t, n.limits.batch) ?? undefined,
      gpu_memory_utilization: (t) => inRange(number(t), n.limits.gpu_memory_utilization),
    };
    const link = new LinkValues(n.defaults);
    const values = {};
    for (const [name, read] of Object.entries(readers)) values[name] = link.read(name, read);
    for (const [name, value] of Object.entries(values)) field(name).value = String(value);

    function show() {
      const result = attempt(() => compute(n, values), error, view, messages);
      if (result !== null) {
        tbody.replaceChildren(...result.stages.map((stage, index) => {
          const row = element("tr", null);
          if (result.stages.some((other) => other.tokens !== result.least) &&
              stage.tokens === result.least) row.className = "gl-least";
          for (const key of ["gpus", "layers", "tables", "weights", "tokens"]) {
            const shown = key === "tokens" ? (stage.tokens === null ? NONE : grouped(stage.tokens))
              : stage[key];
            row.append(element("td", shown, { "data-key": `${key}-${index}` }));
          }
          return row;
        }));
        for (const output of root.querySelectorAll("output[data-key]")) {
          const key = output.dataset.key;
          if (Object.hasOwn(result.out, key)) output.textContent = result.out[key];
        }
        const noKv = root.querySelector(".gl-no-kv");
        noKv.hidden = result.fits;
        if (!result.fits) {
          noKv.textContent = fill(messages[result.budget.refused], {
            kv: gib(result.budget.kv), share: gib(result.budget.requested),
            free: gib(n.total - n.context_memory) });
        }
        root.querySelector(".gl-tp-one").hidden = values.tp !== 1;
        const far = root.querySelector(".gl-not-reachable");
        far.hidden = !result.fits || result.reachable;
        far.textContent = fill(text.not_reachable, { seqs: result.seqs, batch: values.batch });
        root.querySelector(".gl-pp-step").hidden = values.pp === 1;
      }
      root.dataset.ready = "";
    }

    function changed() {
      show();
      share(values);
      showFallback([]); // the link no longer holds the values the note is about
    }

    form.addEventListener("change", (event) => {
      const input = event.target;
      if (input.tagName !== "SELECT") return;
      values[input.name] = readers[input.name](input.value);
      changed();
    });
    // A value typed that the page does not take marks its field once typing pauses, and the
    // page keeps the value from before the edit (the kit's calm()), which the message names.
    calm(form, invalid, {
      handles: (input) => input.tagName === "INPUT",
      current: (input) => values[input.name],
      read: (input) => readers[input.name](input.value),
      take: (input, value) => {
        values[input.name] = value;
        changed();
      },
      message: (input, kept) => {
        const [least, most] = n.limits[input.name];
        return fill(messages.invalid, { label: fieldLabel(input), least, most, kept });
      },
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    compact(root);
    showFallback(link.fallback);
    show();
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="gpu-layout"]').forEach(once(setup)));
})();
