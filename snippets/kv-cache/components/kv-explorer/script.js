// The KV cache explorer. template.html writes its form; data.py gives each preset's numbers
// for the form, read from its config.json by hf_config.py, its weights in bytes, counted
// from its architecture by model_weights.py, and the bytes per weight of a custom model. The
// arithmetic follows snippets/kv-cache/explorer.py, and parity.py says what the page must show.
(() => {
  const GIB = 1024 ** 3;
  const MODEL_FIELDS = ["layers", "kv_heads", "head_dim", "attention_heads",
                        "kv_lora_rank", "qk_rope_head_dim"];

  // Fixed decimals as Python and printf round: an exact tie goes to the even digit.
  function fixed(x, digits) {
    const scaled = x * 10 ** digits;
    if (Math.abs(scaled - Math.trunc(scaled)) === 0.5) {
      const down = Math.floor(scaled);
      return ((down % 2 === 0 ? down : down + 1) / 10 ** digits).toFixed(digits);
    }
    return x.toFixed(digits);
  }
  const grouped = (n) => n.toLocaleString("en-US");
  const floorDiv = (a, b) => (a - (a % b)) / b; // exact for safe integers

  function setup(root) {
    const presets = JSON.parse(root.dataset.presets);
    const weightBytes = JSON.parse(root.dataset.weightBytes);
    const messages = JSON.parse(root.dataset.messages);
    const form = root.querySelector(".kv-form");
    const error = root.querySelector(".kv-error");
    const table = root.querySelector(".kv-results");
    const field = (name) => form.elements[name];
    const preset = () => presets.find((m) => m.name === field("model").value);
    const isMla = () => Boolean(preset() && preset().mla);
    const show = (name, visible) => {
      form.querySelector(`[data-field="${name}"]`).hidden = !visible;
    };

    function applyPreset() {
      if (!preset()) return;
      for (const [name, value] of Object.entries(preset().fields)) field(name).value = value;
    }

    function read(name, label) {
      const kind = field(name).dataset.kind;
      const text = field(name).value.trim();
      const value = Number(text);
      const ok = text !== "" && Number.isFinite(value) && value > 0 &&
        (kind !== "int" || Number.isInteger(value)) && (kind !== "fraction" || value <= 1);
      if (!ok) throw new Error(messages[kind].replace("{label}", label));
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
      const kvMemory = Math.trunc(gpu * GIB * v.utilization) - weights;
      if (kvMemory <= 0) throw new Error(messages.no_room);
      const blocksPerSequence = floorDiv(v.seq_len + v.block_size - 1, v.block_size);
      const capacity = (bytes) => floorDiv(kvMemory, v.block_size * bytes);
      const blocks = capacity(perToken);
      const out = {
        bytes_per_token: grouped(perToken),
        kib_per_token: fixed(perToken / 1024, 1),
        gib_per_sequence: fixed(perToken * v.seq_len / GIB, 2),
        gib_total: fixed(perToken * v.seq_len * v.batch / GIB, 2),
        weight_memory_gib: fixed(weights / GIB, 2),
        kv_memory_gib: fixed(kvMemory / GIB, 2),
        num_blocks: grouped(blocks),
        max_concurrency: fixed(blocks / blocksPerSequence, 2),
        sequences: grouped(floorDiv(blocks, blocksPerSequence)),
      };
      if (mla) {
        out.formula = `${v.layers} × (${v.kv_lora_rank} + ${v.qk_rope_head_dim}) × ${dtype}` +
          ` = ${grouped(perToken)}`;
      } else {
        const mha = 2 * v.layers * v.attention_heads * v.head_dim * dtype;
        out.formula = `2 × ${v.layers} × ${v.kv_heads} × ${v.head_dim} × ${dtype}` +
          ` = ${grouped(perToken)}`;
        out.mha_kib_per_token = fixed(mha / 1024, 1);
        out.mha_gib_per_sequence = fixed(mha * v.seq_len / GIB, 2);
        out.mha_sequences = grouped(floorDiv(capacity(mha), blocksPerSequence));
      }
      return out;
    }

    function update(share) {
      const started = performance.now();
      const mla = isMla();
      for (const name of ["kv_heads", "head_dim", "attention_heads"]) show(name, !mla);
      for (const name of ["kv_lora_rank", "qk_rope_head_dim"]) show(name, mla);
      show("gpu_gib", field("gpu").value === "custom");
      show("weights_gib", field("weight_dtype").value === "custom");
      show("params_billion", field("weight_dtype").value !== "custom" && !preset());
      try {
        const out = compute();
        for (const output of table.querySelectorAll("output")) {
          const value = out[output.dataset.key];
          output.value = value ?? "—";
        }
        table.hidden = false;
        error.hidden = true;
      } catch (problem) {
        table.hidden = true;
        error.hidden = false;
        error.textContent = problem.message;
      }
      if (share) {
        const state = new URLSearchParams();
        for (const element of form.elements) {
          if (element.name && !element.closest("[hidden]")) state.set(element.name, element.value);
        }
        history.replaceState(null, "", `${location.pathname}?${state}${location.hash}`);
      }
      root.dataset.lastUpdateMs = (performance.now() - started).toFixed(3);
      root.dataset.ready = "";
    }

    // A shared link brings its settings; the model comes first, as it fills in the others.
    const state = new URLSearchParams(location.search);
    if (state.has("model")) field("model").value = state.get("model");
    applyPreset();
    for (const [name, value] of state) {
      if (name !== "model" && form.elements[name]) form.elements[name].value = value;
    }
    form.addEventListener("input", (event) => {
      if (event.target.name === "model") applyPreset();
      // Changing a number of the model's architecture makes it a custom model.
      if (MODEL_FIELDS.includes(event.target.name) && !isMla()) field("model").value = "custom";
      update(true);
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    update(false);
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="kv-explorer"]').forEach(setup));
})();
