// The KV cache explorer. template.html writes its form; data.py gives each preset's numbers
// for the form, read from its config.json by hf_config.py, its weights in bytes, counted
// from its architecture by model_weights.py, the bytes per weight of a custom model, and each
// field's largest value. The arithmetic follows snippets/kv-cache/explorer.py, and parity.py
// says what the page must show, for hostile links too. Texts go in with textContent only.
(() => {
  const { fill, element, number, fixed, share, InvalidFields, calm, compact } = courseKit;
  const GIB = 1024 ** 3;
  const MODEL_FIELDS = ["layers", "kv_heads", "head_dim", "attention_heads",
                        "kv_lora_rank", "qk_rope_head_dim"];
  const NONE = "—"; // a result that does not apply or cannot be computed

  const grouped = (n) => n.toLocaleString("en-US");
  const floorDiv = (a, b) => (a - (a % b)) / b; // exact for safe integers

  class FieldError extends Error {
    constructor(message, name) {
      super(message);
      this.field = name;
    }
  }

  function setup(root) {
    const presets = JSON.parse(root.dataset.presets);
    const weightBytes = JSON.parse(root.dataset.weightBytes);
    const messages = JSON.parse(root.dataset.messages);
    const form = root.querySelector(".kv-form");
    const error = root.querySelector(".kv-error");
    const warning = root.querySelector(".kv-warning");
    const summary = root.querySelector(".kv-summary");
    const linkNotes = root.querySelector(".kv-ignored");
    const table = root.querySelector(".kv-results");
    const invalid = new InvalidFields(root.querySelector(".kv-invalid"));
    // The text a field's value came from where the page does not take what the reader typed
    // into it: the one from before the edit (calm(), below).
    const inUse = {};
    compact(root);
    const field = (name) => form.elements.namedItem(name);
    const preset = () => presets.find((m) => m.name === field("model").value);
    const isMla = () => Boolean(preset() && preset().mla);
    const show = (name, visible) => {
      form.querySelector(`[data-field="${name}"]`).hidden = !visible;
    };
    const offered = (select, value) => [...select.options].some((o) => o.value === value);

    function applyPreset() {
      if (!preset()) return;
      for (const [name, value] of Object.entries(preset().fields)) field(name).value = value;
    }

    // The number a field takes from a text, or null: a number as the kit reads it
    // (full-width digits, 8,192), above 0, at most the field's max (data.py), and a whole
    // number where the field wants one.
    function accepted(input, text) {
      const value = number(text);
      const ok = value !== null && value > 0 && value <= Number(input.dataset.max) &&
        (input.dataset.kind !== "int" || Number.isInteger(value));
      return ok ? value : null;
    }

    // A field's value (that of the text from before the edit, where the page does not take
    // what was typed), or an error naming it, with what the field takes.
    const text = (input) => (accepted(input, input.value) === null && input.name in inUse
      ? inUse[input.name] : input.value);
    function read(name, label) {
      const input = field(name);
      const value = accepted(input, text(input));
      if (value === null) {
        const max = grouped(Number(input.dataset.max));
        throw new FieldError(fill(messages[input.dataset.kind], {label, max}), name);
      }
      return value;
    }

    function compute() {
      const mla = isMla();
      const label = (name) => form.querySelector(`[data-field="${name}"] span`).textContent;
      const v = {};
      const needed = ["layers", "seq_len", "batch", "utilization", "block_size"]
        .concat(mla ? ["kv_lora_rank", "qk_rope_head_dim"]
                    : ["kv_heads", "head_dim", "attention_heads"])
        .concat(field("gpu").value === "custom" ? ["gpu_gib"] : [])
        .concat(field("weight_dtype").value === "custom" ? ["weights_gib"]
                : preset() ? [] : ["params_billion"]);
      for (const name of needed) v[name] = read(name, label(name));
      const dtype = Number(field("kv_dtype").value.split(":")[0]);
      const gpu = field("gpu").value === "custom" ? v.gpu_gib : Number(field("gpu").value);
      const precision = field("weight_dtype").value;
      const weights = precision === "custom" ? Math.trunc(v.weights_gib * GIB)
        : preset() ? preset().weights[precision] // counted from the architecture
        : Math.trunc(v.params_billion * 1e9 * weightBytes[precision]);

      const perToken = mla ? v.layers * (v.kv_lora_rank + v.qk_rope_head_dim) * dtype
                           : 2 * v.layers * v.kv_heads * v.head_dim * dtype;
      const mha = mla ? null : 2 * v.layers * v.attention_heads * v.head_dim * dtype;
      // Integers stay exact up to 2^53 - 1; the fields' maxima keep all others below it.
      if (!Number.isSafeInteger(perToken * v.seq_len * v.batch) ||
          (mha !== null && !Number.isSafeInteger(mha * v.seq_len))) {
        throw new Error(messages.too_large);
      }
      const usable = Math.trunc(gpu * GIB * v.utilization);
      const kvMemory = usable - weights;
      const out = {
        bytes_per_token: grouped(perToken),
        kib_per_token: fixed(perToken / 1024, 1),
        gib_per_sequence: fixed(perToken * v.seq_len / GIB, 2),
        gib_total: fixed(perToken * v.seq_len * v.batch / GIB, 2),
        weight_memory_gib: fixed(weights / GIB, 2),
      };
      if (mla) {
        out.formula = `${v.layers} × (${v.kv_lora_rank} + ${v.qk_rope_head_dim}) × ${dtype}` +
          ` = ${grouped(perToken)}`;
      } else {
        out.formula = `2 × ${v.layers} × ${v.kv_heads} × ${v.head_dim} × ${dtype}` +
          ` = ${grouped(perToken)}`;
        out.mha_kib_per_token = fixed(mha / 1024, 1);
        out.mha_gib_per_sequence = fixed(mha * v.seq_len / GIB, 2);
      }
      // What needs the card: nothing of it when the weights do not fit.
      const fits = kvMemory > 0;
      if (fits) {
        const blocksPerSequence = floorDiv(v.seq_len + v.block_size - 1, v.block_size);
        const capacity = (bytes) => floorDiv(kvMemory, v.block_size * bytes);
        const blocks = capacity(perToken);
        out.kv_memory_gib = fixed(kvMemory / GIB, 2);
        out.num_blocks = grouped(blocks);
        out.max_concurrency = fixed(blocks / blocksPerSequence, 2);
        out.sequences = grouped(floorDiv(blocks, blocksPerSequence));
        if (!mla) out.mha_sequences = grouped(floorDiv(capacity(mha), blocksPerSequence));
      }
      return {out, fits, weights, usable};
    }

    function update(keepInLink) {
      const started = performance.now();
      const mla = isMla();
      for (const name of ["kv_heads", "head_dim", "attention_heads"]) show(name, !mla);
      for (const name of ["kv_lora_rank", "qk_rope_head_dim"]) show(name, mla);
      show("gpu_gib", field("gpu").value === "custom");
      show("weights_gib", field("weight_dtype").value === "custom");
      show("params_billion", field("weight_dtype").value !== "custom" && !preset());
      for (const control of form.elements) {
        if (!invalid.messages.has(control)) control.removeAttribute("aria-invalid");
      }
      try {
        const {out, fits, weights, usable} = compute();
        for (const output of table.querySelectorAll("output")) {
          output.value = out[output.dataset.key] ?? NONE;
        }
        summary.textContent = fill(fits ? messages.summary : messages.summary_no_room, out);
        warning.textContent = fits ? "" : fill(messages.no_room, {
          weights: fixed(weights / GIB, 2), usable: fixed(usable / GIB, 2)});
        warning.hidden = fits;
        table.hidden = false;
        error.hidden = true;
      } catch (problem) {
        table.hidden = true;
        warning.hidden = true;
        error.hidden = false;
        error.textContent = problem.message;
        if (problem.field) field(problem.field).setAttribute("aria-invalid", "true");
        // The summary shows the problem too, by the model picker; the alert announces it.
        summary.replaceChildren(element("span", problem.message, { "aria-hidden": "true" }));
      }
      // The link holds the fields shown, and nothing else; a number as the kit read it. The
      // notes on the link the page was opened with no longer apply.
      if (keepInLink) {
        linkNotes.hidden = true;
        const shown = {};
        for (const control of form.elements) {
          if (!control.name || control.closest("[hidden]")) continue;
          const value = control.tagName === "INPUT" ? number(text(control)) : null;
          shown[control.name] = value === null ? control.value : String(value);
        }
        share(shown, new URLSearchParams());
      }
      root.dataset.lastUpdateMs = (performance.now() - started).toFixed(3);
      root.dataset.ready = "";
    }

    // A shared link brings its settings; the model comes first, as it fills in the others.
    // A value the form does not take (a choice it does not offer, a number its field does
    // not take) falls back to the form's own, the fence's preset's or the field's default,
    // and gets a note of its own: which value, what the field takes, what is used instead.
    // (It does not quote the link's text: a link may hold anything.)
    const state = new URLSearchParams(location.search);
    const notes = [];
    const note = (key, name, values) => {
      const label = form.querySelector(`[data-field="${name}"] span`).textContent;
      notes.push(fill(messages[key], { label, name, ...values }));
    };
    const chosen = (select) => select.selectedOptions[0].textContent;
    if (state.has("model")) {
      const model = state.get("model");
      if (offered(field("model"), model)) field("model").value = model;
      else note("link_choice", "model", { fallback: chosen(field("model")) });
    }
    applyPreset();
    for (const [name, value] of state) {
      const control = name === "model" ? null : field(name);
      if (!control) continue;
      if (control.tagName === "SELECT") {
        if (offered(control, value)) control.value = value;
        else note("link_choice", name, { fallback: chosen(control) });
      } else if (accepted(control, value) !== null) {
        control.value = String(accepted(control, value));
      } else {
        note(`link_${control.dataset.kind}`, name,
             { max: grouped(Number(control.dataset.max)), fallback: control.value });
      }
    }
    // A link that changes a preset's architecture makes it a custom model, as typing does.
    const changed = (name) => name in preset().fields &&
      number(field(name).value) !== preset().fields[name];
    if (preset() && !isMla() && MODEL_FIELDS.some(changed)) field("model").value = "custom";
    linkNotes.replaceChildren(...notes.map((text) => element("p", text)));
    linkNotes.hidden = notes.length === 0;
    form.addEventListener("input", (event) => {
      if (event.target.tagName !== "SELECT") return; // a typed number: calm(), below
      if (event.target.name === "model") {
        applyPreset();
        for (const name of MODEL_FIELDS) invalid.mark(field(name), null);
      }
      update(true);
    });
    // A number the reader typed is taken at once; one the page does not take marks its field
    // once typing pauses, and the page keeps computing with the value from before the edit
    // (the kit's calm()), which the field's message names.
    let modelAtFocus = null; // the model when a field got focus, for take() below
    form.addEventListener("focusin", () => { modelAtFocus = field("model").value; });
    calm(form, invalid, {
      handles: (input) => input.tagName === "INPUT",
      current: (input) => text(input),
      read: (input) => (accepted(input, input.value) === null ? undefined : input.value),
      take: (input, taken) => {
        inUse[input.name] = taken;
        // A number of a preset's architecture other than the preset's makes the model a
        // custom one; back at the preset's (as when a value typed is not taken), the preset.
        const before = presets.find((m) => m.name === modelAtFocus);
        if (MODEL_FIELDS.includes(input.name) && before && !before.mla) {
          field("model").value = number(taken) === before.fields[input.name] ? before.name : "custom";
        }
        update(true);
      },
      message: (input, kept) => {
        const label = form.querySelector(`[data-field="${input.name}"] span`).textContent;
        return `${fill(messages[input.dataset.kind], { label, max: grouped(Number(input.dataset.max)) })} ${
          fill(messages.kept, { kept })}`;
      },
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    update(false);
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="kv-explorer"]').forEach(setup));
})();
