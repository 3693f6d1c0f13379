// The 24 GiB bar. data.py gives the baseline's numbers (the weights of lesson 4, the
// model's MLP and vocabulary sizes, the lesson's estimates) and each field's limits; the
// arithmetic follows snippets/startup-memory/startup_budget.py, and parity.py says what
// the page must show for each link. Texts go in with textContent only.
(() => {
  const { fill, number, whole, flag, fixed, share, attempt, Refused, InvalidFields, LinkValues,
          fallbackNote, calm, compact, once } = courseKit;
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

    // A field's value from a text, or undefined where the page does not take it: a number
    // within its limits (data.py), whole but for the utilization; enforce_eager 1 or true,
    // 0 or false.
    const read = (name, text) => {
      if (name === "enforce_eager") return flag(text) ?? undefined;
      if (name !== "gpu_memory_utilization") return whole(text, n.limits[name]) ?? undefined;
      const value = number(text);
      const [least, most] = n.limits[name];
      return value !== null && value >= least && value <= most ? value : undefined;
    };

    // The link's values; where it has none or one the page does not take, the fence's, and
    // the kit's note names those.
    const link = new LinkValues({ enforce_eager: "0", ...defaults });
    const values = {};
    for (const name of [...FIELDS, "enforce_eager"]) {
      values[name] = link.read(name, (text) => read(name, String(text)));
    }
    for (const name of FIELDS) field(name).value = String(values[name]);
    field("enforce_eager").checked = values.enforce_eager;
    const showFallback = fallbackNote(root, messages, { ...n.limits, enforce_eager: [0, 1] }, "");
    showFallback(link.fallback);

    function show() {
      const result = attempt(() => budget(n, values), error, view, messages);
      if (result !== null) {
        // A part of the budget shows in the summary (kv, left) and in its row (kv_row).
        for (const output of root.querySelectorAll("output[data-key]")) {
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

    // A value typed that the page does not take marks its field once typing pauses, and the
    // page keeps the value from before the edit (the kit's calm()), which the message names.
    calm(form, invalid, {
      current: (input) => values[input.name],
      read: (input) => (input.type === "checkbox" ? input.checked : read(input.name, input.value)),
      take: (input, value) => {
        values[input.name] = value;
        show();
        share({ ...Object.fromEntries(FIELDS.map((name) => [name, values[name]])),
                enforce_eager: values.enforce_eager ? 1 : 0 });
        showFallback([]); // the link no longer holds the values the note is about
      },
      message: (input, kept) => {
        const [least, most] = n.limits[input.name];
        return fill(root.dataset.invalid, { label: input.name, least, most, kept });
      },
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    show();
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="startup-memory-bar"]').forEach(once(setup)));
})();
