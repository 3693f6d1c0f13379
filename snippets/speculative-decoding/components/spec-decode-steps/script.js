// The speculation stepper: one request generates with n-gram drafts and greedy
// verification, as spec_scheduler.py runs it (and vLLM 0.26.0 does); the page shows one
// step at a time. State in the link: task, k, min, max, step.
(() => {
  const { Refused, whole, fixed, once, LinkValues, attempt, share, stepControls, compact } =
    courseKit;

  // ngram.py: propose_ngram (vllm/v1/spec_decode/ngram_proposer.py:
  // _find_longest_matched_ngram_and_propose_tokens): the longest n <= maxN matching the
  // last n tokens, the earliest at equal n; none below minN; up to k tokens after it.
  function matchLength(tokens, start, maxN) {
    const total = tokens.length;
    let longest = 0;
    for (let n = 1; n <= Math.min(maxN, total - 1 - start); n++) {
      let same = true;
      for (let i = 0; i < n; i++) {
        if (tokens[start + i] !== tokens[total - n + i]) { same = false; break; }
      }
      if (same) longest = n;
    }
    return longest;
  }

  function proposeNgram(tokens, minN, maxN, k) {
    if (tokens.length < minN) return [];
    let bestN = 0, bestStart = 0;
    for (let start = 0; start < tokens.length - 1; start++) {
      const n = matchLength(tokens, start, maxN);
      if (n > bestN) { bestN = n; bestStart = start; }
    }
    if (bestN < minN) return [];
    return tokens.slice(bestStart + bestN, bestStart + bestN + k);
  }

  // spec_decode.py: verify (rejection_greedy_sample_kernel): drafts while they equal the
  // target's choice, then the target's choice at the first mismatch, or the bonus.
  function verify(target, drafts) {
    const accepted = [];
    for (let i = 0; i < drafts.length; i++) {
      if (drafts[i] !== target[i]) break;
      accepted.push(drafts[i]);
    }
    return { accepted, added: target[accepted.length] };
  }

  // spec_scheduler.py: run, for one request with budget to spare: the prefill samples the
  // first token; each later step verifies the drafts proposed after the previous one.
  function generate(task, words, end, k, minN, maxN) {
    if (minN > maxN) throw new Refused("min_above_max", { min: minN, max: maxN });
    const id = (word) => words.indexOf(word);
    const prompt = task.prompt.map(id);
    const answer = [...task.answer, ...Array(k).fill(end)].map(id);
    const maxTokens = task.answer.length;
    const output = [answer[0]];
    const steps = [{ drafts: null, accepted: 0, added: [answer[0]] }];
    while (output.length < maxTokens) {
      const drafts = proposeNgram([...prompt, ...output], minN, maxN, k);
      const start = output.length;
      const { accepted, added } = verify(answer.slice(start, start + drafts.length + 1), drafts);
      const kept = [...accepted, added].slice(0, maxTokens - output.length);
      output.push(...kept);
      steps.push({ drafts, accepted: accepted.length, added: kept });
    }
    return steps;
  }

  function setup(root) {
    const tasks = JSON.parse(root.dataset.tasks);
    const limits = JSON.parse(root.dataset.limits);
    const defaults = JSON.parse(root.dataset.defaults);
    const text = JSON.parse(root.dataset.text);
    const end = root.dataset.end;
    const form = root.querySelector(".sd-settings");
    const error = root.querySelector(".sd-error");
    const view = [root.querySelector(".sd-now"), root.querySelector(".sd-steps"),
                  root.querySelector(".ck-more")];
    const slider = root.querySelector(".sd-slider");
    const key = (name) => root.querySelector(`[data-key="${name}"]`);

    const link = new LinkValues({ ...defaults, step: "0" });
    const state = {
      task: link.read("task", (t) => (Object.hasOwn(tasks, t) ? t : undefined)),
      k: link.read("k", (t) => whole(t, limits.k) ?? undefined),
      min: link.read("min", (t) => whole(t, limits.min) ?? undefined),
      max: link.read("max", (t) => whole(t, limits.max) ?? undefined),
      step: 0,
    };
    let steps = null;
    const wantedStep = whole(link.params.get("step") ?? "0", [0, 1000]);

    function words(task) {
      const all = [...tasks[task].prompt, ...tasks[task].answer, end];
      return [...new Set(all)];
    }

    function show() {
      const vocab = words(state.task);
      const step = steps[state.step];
      const named = (ids) => ids.map((t) => vocab[t]).join(" ");
      const before = steps.slice(1, state.step + 1);
      const drafted = before.reduce((sum, s) => sum + s.drafts.length, 0);
      const accepted = before.reduce((sum, s) => sum + (s.drafts.length ? s.accepted : 0), 0);
      const drafts = before.filter((s) => s.drafts.length).length;
      key("step").textContent = String(state.step);
      key("drafts").textContent = step.drafts && step.drafts.length ? named(step.drafts) : "—";
      key("marks").textContent = step.drafts && step.drafts.length
        ? step.drafts.map((_, i) => (i < step.accepted ? "✓" : i === step.accepted ? "✗" : "·")).join(" ")
        : "—";
      key("new").textContent = named(step.added);
      root.querySelector(".sd-why").textContent =
        step.drafts === null ? text.prefill : step.drafts.length ? "" : text.none;
      const produced = steps.slice(0, state.step + 1).reduce((sum, s) => sum + s.added.length, 0);
      key("produced").textContent = String(produced);
      key("steps").textContent = String(state.step + 1);
      key("rate").textContent = drafted ? `${fixed(accepted / drafted * 100, 1)}%` : "—";
      key("length").textContent = drafts ? fixed(1 + accepted / drafts, 2) : "—";
      key("output").textContent = steps.slice(0, state.step + 1).map((s) => named(s.added)).join(" ");
      slider.value = String(state.step);
    }

    function compute() {
      const vocab = words(state.task);
      steps = attempt(() => generate(tasks[state.task], vocab, end, state.k, state.min, state.max),
                      error, view, { min_above_max: text.min_above_max });
      if (!steps) return;
      slider.max = String(steps.length - 1);
      state.step = Math.min(state.step, steps.length - 1);
      show();
    }

    function shareState() {
      share({ task: state.task, k: state.k, min: state.min, max: state.max, step: state.step });
    }

    for (const name of ["task", "k", "min", "max"]) form.elements[name].value = String(state[name]);
    form.addEventListener("change", (event) => {
      const name = event.target.name;
      state[name] = name === "task" ? event.target.value : Number(event.target.value);
      state.step = 0;
      compute();
      shareState();
    });
    stepControls(root.querySelector(".sd-steps"), slider,
                 () => steps && { step: state.step, last: steps.length - 1 },
                 (step) => { state.step = step; show(); shareState(); });

    compute();
    if (steps) {
      if (wantedStep === null || wantedStep > steps.length - 1) link.fallback.push("step");
      else state.step = wantedStep;
      show();
    }
    const note = root.querySelector(".sd-fallback");
    key("fallback").textContent = link.fallback.join(text.list_sep);
    note.hidden = link.fallback.length === 0;
    compact(root);
    root.dataset.ready = "true";
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="spec-decode-steps"]').forEach(once(setup)));
})();
