// The 24 GiB bar. data.py gives the baseline's numbers (the weights of lesson 4, the
// model's MLP and vocabulary sizes, the lesson's estimates) and each field's limits; the
// arithmetic follows snippets/startup-memory/startup_budget.py, and parity.py says what
// the page must show for each link. Texts go in with textContent only.
(() => {
  const { fill, number, whole, fixed, share, attempt, Refused, InvalidFields, compact, once } =
    courseKit;
  const GIB = 1024 ** 3;
  const FIELDS = ["gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens"];
  const PARTS = ["weights", "activation", "non_torch", "kv", "context", "graphs", "left"];
  // GiB with 2 decimals, as Python's f"{x:.2f}" writes a negative number too.
  const gib = (bytes) => (bytes < 0 ? "-" : "") + fixed(Math.abs(bytes) / GIB, 2);

  // startup_budget.capture_sizes (vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes),
  // no speculative tokens, the balanced performance mode.
  function captureSizes(seqs, tokens, eager, maxCapture) {
    if (tokens < seqs) throw new Refused("tokens_below_seqs", { tokens, seqs });
    if (eager) return [];
    const largest = Math.min(seqs * 2, maxCapture, tokens);
    const sizes = [1, 2, 4].filter((size) => size <= largest);
    for (let size = 8; size < Math.min(largest + 1, 256); size += 8) sizes.push(size);
    for (let size = 256; size <= largest; size += 16) sizes.push(size);
    if (tokens <= largest && !sizes.includes(tokens)) sizes.push(tokens);
    return sizes.sort((a, b) => a - b);
  }

  // startup_budget.qwen_budget: kv_budget with the lesson's estimates.
  function budget(n, v) {
    const sizes = captureSizes(v.max_num_seqs, v.max_num_batched_tokens, v.enforce_eager,
                               n.max_capture);
    const most = Math.max(0, ...sizes);
    const full = sizes.filter((size) => size <= Math.min(v.max_num_seqs, most)).length;
    const rows = Math.min(v.max_num_batched_tokens, v.max_num_seqs);
    const activation = v.max_num_batched_tokens * 3 * n.intermediate_size * 2 +
      rows * n.vocab_size * 4;
    const requested = Math.ceil(n.total * v.gpu_memory_utilization);
    if (n.total - n.context < requested) {
      throw new Refused("no_free", { free: gib(n.total - n.context), requested: gib(requested) });
    }
    const kv = requested - n.weights - activation - n.non_torch;
    if (kv <= 0) throw new Refused("no_kv", { kv: gib(kv) });
    const graphs = (full + sizes.length) * n.graph_bytes;
    return {
      bytes: { requested, weights: n.weights, activation, non_torch: n.non_torch, kv,
               context: n.context, graphs, left: n.total - requested - n.context - graphs },
      sizes: sizes.length, largest: most, piecewise: sizes.length, full,
      captured: sizes.length + full,
    };
  }

  function setup(root) {
    const n = JSON.parse(root.dataset.numbers);
    const messages = JSON.parse(root.dataset.messages);
    const defaults = JSON.parse(root.dataset.defaults);
    const form = root.querySelector(".smb-form");
    const field = (name) => form.elements.namedItem(name);
    const error = root.querySelector(".smb-error");
    const view = [root.querySelector(".smb-figures"), root.querySelector(".smb-bar"),
                  root.querySelector(".smb-legend"), root.querySelector(".smb-results")];
    const invalid = new InvalidFields(root.querySelector(".smb-invalid"));
    compact(root);

    // A field's value from a text, or null: a number within its limits (data.py), whole
    // but for the utilization.
    const read = (name, text) => (name === "gpu_memory_utilization"
      ? (() => {
          const value = number(text);
          const [least, most] = n.limits[name];
          return value !== null && value >= least && value <= most ? value : null;
        })()
      : whole(text, n.limits[name]));

    // The link's values, else the fence's. A value the page does not take shows the error,
    // naming it, until the reader edits; the fields then hold, and the page computes with,
    // the fence's value in its place.
    const params = new URLSearchParams(location.search);
    const linked = (name, fallback) => (params.has(name) ? params.get(name) : fallback);
    const values = {};
    let refused = null;
    for (const name of FIELDS) {
      values[name] = read(name, linked(name, String(defaults[name])));
      if (values[name] === null) {
        const [least, most] = n.limits[name];
        refused ??= new Refused("bad_link", { name, least, most });
        values[name] = read(name, String(defaults[name]));
      }
      field(name).value = String(values[name]);
    }
    const eager = linked("enforce_eager", String(defaults.enforce_eager ?? "0"));
    if (!["0", "1"].includes(eager)) {
      refused ??= new Refused("bad_link", { name: "enforce_eager", least: 0, most: 1 });
    }
    values.enforce_eager = eager === "1";
    field("enforce_eager").checked = values.enforce_eager;

    function show() {
      const result = attempt(() => {
        if (refused) throw refused;
        return budget(n, values);
      }, error, view, messages);
      if (result !== null) {
        // A part of the budget shows in the summary (kv, left) and in its row (kv_row).
        for (const output of root.querySelectorAll("[data-key]")) {
          const key = output.dataset.key.replace(/_row$/, "");
          output.textContent = key in result.bytes ? gib(result.bytes[key]) : String(result[key]);
        }
        for (const part of root.querySelectorAll(".smb-part")) {
          const bytes = Math.max(result.bytes[part.dataset.part], 0);
          part.style.flex = `0 0 ${(100 * bytes) / n.total}%`;
        }
        root.querySelector(".smb-oom").hidden = result.bytes.left >= 0;
      }
      root.dataset.ready = "";
    }

    form.addEventListener("input", (event) => {
      const input = event.target;
      if (input.name === "enforce_eager") {
        values.enforce_eager = input.checked;
      } else {
        const value = read(input.name, input.value);
        const [least, most] = n.limits[input.name];
        invalid.mark(input, value === null ? fill(root.dataset.invalid, {
          label: input.name, least, most, kept: values[input.name] }) : null);
        if (value === null) return;
        values[input.name] = value;
      }
      refused = null;
      show();
      share({ ...Object.fromEntries(FIELDS.map((name) => [name, values[name]])),
              enforce_eager: values.enforce_eager ? 1 : 0 });
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    show();
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="startup-memory-bar"]').forEach(once(setup)));
})();
