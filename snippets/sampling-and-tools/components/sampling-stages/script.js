// The sampler, stage by stage: sampling.py's example request, its knobs from the link
// (temperature, top_k, top_p, min_p, the three penalties, seed), run by sampling.js, its
// twin; the page shows each stage's probabilities, the noise and the logprobs, and the
// token sampled. parity.py says what the page must show for each link. Texts go in with
// textContent only.
(() => {
  const { number, whole, fixed, fill, once, LinkValues, attempt, share, InvalidFields, calm,
          compact } = courseKit;
  const { NEG_INF, Params, sample, softmax, exponential_noise, top_logprobs } =
    courseModules.sampling;
  const GONE = "—"; // a token this stage has set to -inf
  const LEADING_SPACES = /^[ \t\u00a0\u3000]+/;

  // A number with maybe a minus sign (ASCII or full-width) before it: the kit's number()
  // takes none (parity.py: signed is its twin).
  function signed(text) {
    if (typeof text !== "string") return null;
    const plain = text.replace(LEADING_SPACES, "");
    const negative = plain.startsWith("-") || plain.startsWith("－");
    const value = number(negative ? plain.slice(1) : plain);
    return value === null ? null : negative ? -value : value;
  }

  // Each knob's reader (null: not a value the page takes) and the message for one typed
  // that it does not take (labels.yml: invalid).
  const readers = (seedMost) => ({
    temperature: [number, "number"],
    top_k: [(text) => { const v = signed(text); return Number.isInteger(v) ? v : null; }, "whole"],
    top_p: [number, "number"],
    min_p: [number, "number"],
    repetition_penalty: [number, "number"],
    presence_penalty: [signed, "signed"],
    frequency_penalty: [signed, "signed"],
    seed: [(text) => whole(text, [0, seedMost]), "seed"],
  });

  // Python's f"{x:.3f}", a minus sign too; -inf as GONE.
  const three = (x) => (x === NEG_INF ? GONE
    : (x < 0 || Object.is(x, -0) ? "-" : "") + fixed(Math.abs(x), 3));

  function setup(root) {
    const data = JSON.parse(root.dataset.sampling);
    const messages = JSON.parse(root.dataset.messages);
    const invalidTexts = JSON.parse(root.dataset.invalid);
    const READ = readers(data.seed_most);
    const form = root.querySelector(".ss-form");
    const error = root.querySelector(".ss-error");
    const view = [root.querySelector(".ss-figures"), root.querySelector(".ss-stages"),
                  root.querySelector(".ck-more")];
    const invalid = new InvalidFields(root.querySelector(".ss-invalid"));
    const key = (name) => root.querySelector(`[data-key="${name}"]`);
    compact(root);

    const link = new LinkValues(data.defaults);
    const values = {};
    for (const name of data.knobs) {
      values[name] = link.read(name, (text) => READ[name][0](text) ?? undefined);
      form.elements.namedItem(name).value = String(values[name]);
    }
    const note = root.querySelector(".ss-fallback");
    key("fallback").textContent = link.fallback.join(", ");
    note.hidden = link.fallback.length === 0;

    // sampling.py: sample on the example, with min_tokens and its stop token.
    function run() {
      const params = new Params({ ...values, min_tokens: data.min_tokens,
                                  stop_token_ids: data.stop_token_ids });
      return { params, result: sample(data.logits, params, data.prompt, data.output) };
    }

    function draw({ params, result }) {
      const { stages } = result;
      const last = stages[params.greedy ? "penalties" : "top_p"];
      key("token").textContent = data.vocab[result.token];
      key("greedy").textContent = data.vocab[result.greedy];
      key("kept").textContent = String(last.filter((x) => x !== NEG_INF).length);
      // Each stage's probabilities, as Python's f"{100 * p:.1f}", a bar behind each.
      for (const stage of data.stages) {
        const logits = stages[stage];
        const probs = logits ? softmax(logits) : null;
        for (const cell of root.querySelectorAll(`.ss-stages td[data-stage="${stage}"]`)) {
          const i = Number(cell.closest("tr").dataset.token);
          const gone = logits?.[i] === NEG_INF;
          const text = !logits ? "" : gone ? GONE : fixed(100 * probs[i], 1);
          key(`p-${stage}-${i}`).textContent = text;
          cell.style.setProperty("--ss-p", `${probs ? 100 * probs[i] : 0}%`);
          cell.classList.toggle("ss-gone", gone);
        }
        for (const head of root.querySelectorAll(`[data-stage="${stage}"]`)) {
          head.classList.toggle("ss-skipped", !logits);
        }
      }
      const noise = params.greedy ? null : exponential_noise(params.seed || 0, data.vocab.length);
      data.vocab.forEach((_, i) => {
        key(`q-${i}`).textContent = noise ? three(noise[i]) : "";
        key(`ratio-${i}`).textContent = noise ? three(result.probs[i] / noise[i]) : "";
        key(`raw-${i}`).textContent = three(result.raw_logprobs[i]);
        key(`processed-${i}`).textContent = three(result.processed_logprobs[i]);
      });
      for (const mode of ["raw", "processed"]) {
        const { rank } = top_logprobs(result[`${mode}_logprobs`], result.token, 1);
        key(`${mode}_rank`).textContent = String(rank);
      }
      for (const row of root.querySelectorAll("tr[data-token]")) {
        const i = Number(row.dataset.token);
        row.classList.toggle("ss-sampled", i === result.token);
        row.querySelector(".ss-mark").textContent =
          (i === result.token ? "▶" : "") + (i === result.greedy ? "◆" : "");
      }
      root.querySelector(".ss-greedy-note").hidden = !params.greedy;
    }

    function show() {
      const shown = attempt(run, error, view, messages);
      if (shown) draw(shown);
      root.dataset.ready = "true";
    }

    // A value typed that the page does not take marks its field once typing pauses, and the
    // page keeps the value from before the edit (the kit's calm()), which the message names.
    calm(form, invalid, {
      current: (input) => values[input.name],
      read: (input) => READ[input.name][0](input.value) ?? undefined,
      take: (input, value) => {
        values[input.name] = value;
        show();
        share(Object.fromEntries(data.knobs.map((name) => [name, values[name]])));
        note.hidden = true; // the link now holds the page's own values
      },
      message: (input, kept) => fill(invalidTexts[READ[input.name][1]], {
        label: input.name, kept, most: data.seed_most }),
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    show();
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="sampling-stages"]').forEach(once(setup)));
})();
