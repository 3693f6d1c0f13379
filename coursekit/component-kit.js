// The component kit: what the in-page components (snippets/*/components/*/script.js) share.
// render() in coursekit/components.py puts it before each component's own script, both
// deferred, so it runs first; a page showing two components loads it twice, and the second
// run keeps the first one's kit.
window.courseKit ??= (() => {
  // A number as the components take it: digits, maybe a fraction, maybe an exponent; no
  // sign. Its integer part may come in groups of three digits between commas (8,192).
  const NUMBER = /^(\d+(\.\d+)?|\.\d+)([eE][+-]?\d+)?$/;
  const GROUPED = /^\d{1,3}(,\d{3})+(?=[.eE]|$)/;
  // The spaces a number may have around it, the ideographic one (U+3000) included.
  const SPACES = /^[ \t\u00a0\u3000]+|[ \t\u00a0\u3000]+$/g;

  // A run the lesson's code refuses: the key of its message in labels.yml and the numbers
  // the message names.
  class Refused extends Error {
    constructor(key, values) {
      super(key);
      this.key = key;
      this.values = values;
    }
  }

  // A message with its {placeholders} filled in; one it has no value for stays as it is.
  const fill = (text, values) =>
    text.replace(/\{(\w+)\}/g, (whole, key) => (Object.hasOwn(values, key) ? String(values[key]) : whole));

  // A new element; its text (null: none) goes in with textContent only.
  function element(tag, text, attributes = {}) {
    const made = document.createElement(tag);
    if (text !== null) made.textContent = text;
    for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
    return made;
  }

  // The one number reader of every component, for what a reader types into a field and what
  // a link holds alike: the number a text holds, or null. A Chinese input method's
  // full-width forms (８１９２, ８，１９２, ０．９２) count as their ASCII ones, commas group
  // the integer part's digits by three (8,192), and spaces around the number are dropped.
  // coursekit/components.py: read_number is its twin, for the parity contracts.
  function number(text) {
    if (typeof text !== "string") return null;
    let plain = text
      .replace(/[\uff01-\uff5e]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0))
      .replace(SPACES, "");
    if (GROUPED.test(plain)) plain = plain.replace(/,/g, "");
    if (!NUMBER.test(plain)) return null;
    const value = Number(plain);
    return Number.isFinite(value) ? value : null;
  }

  // A number of at least 0 with fixed decimals as Python's format() and printf write it: its
  // exact binary value rounded to the nearest, an exact tie to the even digit (toFixed takes
  // the larger one: 0.125.toFixed(2) is 0.13, Python's f"{0.125:.2f}" 0.12).
  function fixed(x, digits) {
    const rounded = x.toFixed(digits);
    const exact = x.toFixed(digits + 30); // 30 more decimals, exact: a tie ends in 5000...
    if (!exact.endsWith(`5${"0".repeat(29)}`)) return rounded;
    const down = exact.slice(0, -30).replace(/\.$/, "");
    return Number(down.at(-1)) % 2 === 0 ? down : rounded;
  }

  // A whole number within limits [least, most], read by number(), or null.
  function whole(text, [least, most]) {
    const value = number(text);
    return value !== null && Number.isInteger(value) && value >= least && value <= most
      ? value : null;
  }

  // A yes or no as a link holds it: 1 or true, 0 or false (any case, spaces around dropped),
  // or null. coursekit/components.py: read_flag is its twin.
  function flag(text) {
    if (typeof text !== "string") return null;
    const plain = text.replace(SPACES, "").toLowerCase();
    return { 1: true, true: true, 0: false, false: false }[plain] ?? null;
  }

  // setup(root) once for each root element, as document$ hands the page over again, when the
  // element comes within a screen of the view: a component sits far down a long lesson, and
  // setting it up as the page loaded held a phone's main thread for 300 ms (Lighthouse, lesson
  // 5). A fresh copy of the element sets up anew.
  function once(setup) {
    const done = new WeakSet();
    return (root) => {
      if (done.has(root)) return;
      done.add(root);
      delete root.dataset.ready;
      const near = new IntersectionObserver((entries) => {
        if (!entries.some((entry) => entry.isIntersecting)) return;
        near.disconnect();
        setup(root);
      }, { rootMargin: "100% 0px" });
      near.observe(root);
    };
  }

  // The values the page's link holds (params), each read with a parse(text) that gives
  // undefined for one the page does not take; where the link has none or one it does not
  // take, the defaults' (the fence's), and fallback names it.
  class LinkValues {
    constructor(defaults) {
      this.params = new URLSearchParams(location.search);
      this.defaults = defaults;
      this.fallback = [];
    }

    read(name, parse) {
      const value = parse(this.params.has(name) ? this.params.get(name) : this.defaults[name]);
      if (value !== undefined) return value;
      this.fallback.push(name);
      return parse(this.defaults[name]);
    }
  }

  // run()'s result, or null where the lesson's code refuses the run (Refused, or a ValueError
  // of a teaching module's JavaScript twin, courseModules.*): then the error element says
  // why, in place of the view (an element, or a list of them: the compact layout's summary
  // too).
  function attempt(run, error, view, messages) {
    let result = null;
    try {
      result = run();
    } catch (problem) {
      if (!(problem instanceof Refused || problem?.name === "ValueError")) throw problem;
      error.textContent = fill(messages[problem.key], problem.values);
    }
    error.hidden = result !== null;
    for (const part of [view].flat()) part.hidden = result === null;
    return result;
  }

  // The page's link with these values in its query (null: taken out), in place of the
  // current one: the link shares what the page shows.
  function share(values, params = new URLSearchParams(location.search)) {
    for (const [name, value] of Object.entries(values)) {
      if (value === null) params.delete(name);
      else params.set(name, String(value));
    }
    history.replaceState(null, "", `${location.pathname}?${params}${location.hash}`);
  }

  // The note (.ck-fallback) naming the link's values that fell back to the fence's, and what
  // a link may hold: each limit [least, most] as messages.range, in messages.fallback_after.
  // -> show(fallback); show([]) hides it, once the link holds the page's own values.
  function fallbackNote(root, messages, limits, start) {
    const note = root.querySelector(".ck-fallback");
    return (fallback) => {
      if (fallback.length) {
        const ranges = {};
        for (const [name, [least, most]] of Object.entries(limits)) {
          ranges[name] = fill(messages.range, { least, most });
        }
        note.querySelector(".ck-fallback-before").textContent = fill(messages.fallback_before, { start });
        note.querySelector(".ck-fallback-after").textContent = fill(messages.fallback_after, ranges);
      }
      note.querySelector('[data-key="fallback"]').textContent = fallback.join(", ");
      note.hidden = fallback.length === 0;
    };
  }

  // A field's visible label (the <span> of the <label> around it, from labels.yml), for the
  // messages that name it.
  const fieldLabel = (input) => input.closest("label").querySelector("span").textContent;

  // How long typing pauses before a value the page does not take is marked (calm()).
  const PAUSE = 600;

  // The fields a reader typed a value into that the page does not take: each is marked
  // aria-invalid, and their messages show in one line while the page keeps computing with
  // the value from before the edit (see calm()).
  class InvalidFields {
    constructor(line) {
      this.line = line;
      this.messages = new Map();
      this.waiting = new Map(); // field -> the timer that marks it once typing pauses
    }

    // The field marked once typing pauses (PAUSE ms), or at once by now(input): not on every
    // keystroke on the way to a valid value (the "0" of "0/250"). message null: taken, at once.
    later(input, message) {
      if (message === null) {
        this.mark(input, null);
        return;
      }
      clearTimeout(this.waiting.get(input)?.timer);
      this.waiting.set(input, { message, timer: setTimeout(() => this.now(input), PAUSE) });
    }

    // A field's mark that waits for a pause, shown now (the field lost focus).
    now(input) {
      const waiting = this.waiting.get(input);
      if (waiting) this.mark(input, waiting.message);
    }

    // message null: the field's value is taken.
    mark(input, message) {
      clearTimeout(this.waiting.get(input)?.timer);
      this.waiting.delete(input);
      if (message === null) {
        input.removeAttribute("aria-invalid");
        this.messages.delete(input);
      } else {
        input.setAttribute("aria-invalid", "true");
        this.messages.set(input, message);
      }
      this.show();
    }

    // Fields about to be replaced by new ones.
    forget(inputs) {
      for (const input of inputs) {
        clearTimeout(this.waiting.get(input)?.timer);
        this.waiting.delete(input);
        this.messages.delete(input);
      }
      this.show();
    }

    show() {
      this.line.textContent = [...this.messages.values()].join(" ");
      this.line.hidden = this.messages.size === 0;
    }
  }

  // Calm fields (issue 40): what a reader types into form's fields, as every component takes
  // it. A value the page takes computes at once; one it does not take is marked (invalid:
  // InvalidFields) once typing pauses or the field loses focus, and meanwhile the page
  // computes with the value the field held when the reader began to edit it (when it got
  // focus), not with a value typed on the way to another (the 1 of 1e9, the 10 of 101). The
  // spec says, for a field (an input, textarea or select of form):
  //   handles(input): whether calm() takes care of it (default: every field with a name)
  //   current(input): the value the page computes with now
  //   read(input): the value its text holds, or undefined where the page does not take it
  //   take(input, value): compute with the value (and share it)
  //   message(input, kept): the field's message, kept the value the page keeps computing with
  function calm(form, invalid, spec) {
    const handles = spec.handles ?? ((input) => Boolean(input.name));
    const kept = new WeakMap();
    form.addEventListener("focusin", (event) => {
      if (handles(event.target)) kept.set(event.target, spec.current(event.target));
    });
    form.addEventListener("focusout", (event) => {
      if (!handles(event.target)) return;
      invalid.now(event.target);
      kept.delete(event.target);
    });
    form.addEventListener("input", (event) => {
      const input = event.target;
      if (!handles(input)) return;
      if (!kept.has(input)) kept.set(input, spec.current(input));
      const value = spec.read(input);
      if (value !== undefined) {
        invalid.later(input, null);
        spec.take(input, value);
        return;
      }
      const before = kept.get(input);
      if (spec.current(input) !== before) spec.take(input, before);
      invalid.later(input, spec.message(input, before));
    });
  }

  // The step buttons (data-go: first, prev, next, last) and the slider: go(step) with a step
  // from 0 to the last. position() -> { step, last }, or null while there are no steps.
  function stepControls(buttons, slider, position, go) {
    buttons.addEventListener("click", (event) => {
      const where = event.target.closest("button")?.dataset.go;
      const now = position();
      if (!where || !now) return;
      const step = { first: 0, prev: now.step - 1, next: now.step + 1, last: now.last }[where];
      go(Math.min(Math.max(step, 0), now.last));
    });
    slider.addEventListener("input", () => go(Number(slider.value)));
  }

  // The skeleton of a component that runs a workload and steps through the run (lessons 3
  // and 5): the link's values, with the note naming those that fell back to the fence's
  // preset; the preset buttons; the settings form; the step buttons and slider; the link
  // that shares it all. The template's data-presets, data-limits, data-messages, data-fields,
  // data-preset-names and data-start feed it; `p`, the class prefix, names its parts
  // (.p-settings, .p-presets, .p-steps, .p-slider, .p-error, .p-invalid). The spec says:
  //   settings, workload: the form's fields, and the link's name for the workload
  //   read(name, text): the value a link or a field holds, undefined where the page does not
  //     take it; write(name, value): what the link holds for a value
  //   invalid: field -> the key of its message in labels.yml (default "invalid")
  //   run(model): what to show, or a refusal (see attempt); view: what the error replaces
  //   first(model), last(model, result): the step a new run shows, and the last one (null
  //     where there is none)
  //   fill(model, handle): the workload's editors (handle: what stepper returns);
  //     draw(result, model): the run (result null when refused); show(result, model): the
  //     step shown (model.step)
  // -> { model, invalid, messages, limits, changed, go }: changed() after a reader's edit of
  // the workload, go(step) to show a step.
  function stepper(root, p, spec) {
    const data = (name) => JSON.parse(root.dataset[name]);
    const [presets, limits, messages, fieldNames] = ["presets", "limits", "messages", "fields"].map(data);
    const start = root.dataset.start;
    const form = root.querySelector(`.${p}-settings`);
    const error = root.querySelector(`.${p}-error`);
    const slider = root.querySelector(`.${p}-slider`);
    const invalid = new InvalidFields(root.querySelector(`.${p}-invalid`));
    const showFallback = fallbackNote(root, messages, limits, data("presetNames")[start]);
    const link = new LinkValues(presets[start]);
    const model = { settings: {}, workload: null, step: 0, result: null };
    const load = (read) => {
      for (const name of spec.settings) model.settings[name] = read(name);
      model.workload = read(spec.workload);
    };
    load((name) => link.read(name, (text) => spec.read(name, text)));

    function compute() {
      model.result = attempt(() => spec.run(model), error, spec.view, messages);
      spec.draw(model.result, model);
      const last = spec.last(model, model.result);
      if (last !== null) slider.max = String(last);
    }

    function show() {
      if (model.result) slider.value = String(model.step);
      spec.show(model.result, model);
    }

    function shareState() {
      const values = {};
      for (const name of spec.settings) values[name] = spec.write(name, model.settings[name]);
      values[spec.workload] = spec.write(spec.workload, model.workload);
      share({ ...values, step: model.step });
      showFallback([]); // the link no longer holds the values the note is about
    }

    // Recompute after a reader's change; the step stays where it was if the run still has it.
    function changed() {
      compute();
      const last = spec.last(model, model.result);
      if (last !== null) model.step = Math.min(model.step, last);
      show();
      shareState();
    }

    function go(step) {
      if (!model.result) return;
      model.step = step;
      show();
      shareState();
    }

    function fillForm() {
      for (const name of spec.settings) {
        const input = form.elements.namedItem(name);
        const value = model.settings[name];
        if (input.type === "checkbox") input.checked = value;
        else input.value = value === null ? "" : String(value);
        invalid.mark(input, null);
      }
    }

    const handle = { model, invalid, messages, limits, changed, go };
    fillForm();
    spec.fill(model, handle);
    compute();
    model.step = spec.first(model);
    const last = spec.last(model, model.result);
    if (last !== null && link.params.has("step")) {
      const step = whole(link.params.get("step"), [0, last]);
      if (step === null) link.fallback.push("step");
      else model.step = step;
    }
    showFallback(link.fallback);
    show();

    root.querySelector(`.${p}-presets`).addEventListener("click", (event) => {
      const name = event.target.closest("button")?.dataset.preset;
      if (!name) return;
      load((setting) => spec.read(setting, presets[name][setting]));
      model.step = spec.first(model);
      fillForm();
      spec.fill(model, handle);
      changed();
    });
    // A value the reader typed that the page does not take marks its field once typing
    // pauses, and the page keeps computing with the value from before the edit (calm()).
    calm(form, invalid, {
      current: (input) => model.settings[input.name],
      read: (input) => (input.type === "checkbox" ? input.checked : spec.read(input.name, input.value.trim())),
      take: (input, value) => {
        model.settings[input.name] = value;
        changed();
      },
      message: (input, kept) => {
        const [least, most] = limits[input.name] ?? [];
        const written = String(spec.write(input.name, kept) ?? ""); // empty: the placeholder's
        return fill(messages[spec.invalid?.[input.name] ?? "invalid"],
                    { label: fieldNames[input.name], least, most, kept: written || input.placeholder });
      },
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    stepControls(root.querySelector(`.${p}-steps`), slider,
                 () => model.result && { step: model.step, last: spec.last(model, model.result) }, go);
    return handle;
  }

  // The compact layout (component-kit.css), for a component to opt into from its setup:
  // root's .ck-summary, its key results placed before its inputs, stays on screen while the
  // reader scrolls through the component, and its height, in --ck-summary-height, is what a
  // field the keyboard focuses scrolls clear of; root's details.ck-more, its secondary
  // detail, open where the screen is wide (Material's 45em) and stay folded on a phone.
  const WIDE = "(min-width: 45em)";
  function compact(root) {
    const summary = root.querySelector(".ck-summary");
    if (summary) {
      new ResizeObserver(() => root.style.setProperty("--ck-summary-height",
                                                      `${summary.offsetHeight}px`)).observe(summary);
    }
    for (const more of root.querySelectorAll("details.ck-more")) more.open = matchMedia(WIDE).matches;
  }

  // A new details.ck-more, for a script that writes secondary detail itself, folded as
  // compact() folds those of the template: its line (a text, or a list of texts and
  // elements) says what unfolds, and its content goes after that line.
  function more(line) {
    const made = element("details", null, { class: "ck-more" });
    made.open = matchMedia(WIDE).matches;
    const summary = element("summary", null);
    summary.append(...[line].flat());
    made.append(summary);
    return made;
  }

  // The line every component ends with (component-kit.html: share_link) copies the page's
  // link, which holds the component's setup (share()), and says so; where the browser refuses
  // the clipboard (no permission, a page not served over HTTPS), the link shows in a field,
  // selected, for the reader to copy.
  document.addEventListener("click", async (event) => {
    const button = event.target.closest?.(".ck-share-copy");
    if (!button) return;
    const line = button.closest(".ck-share");
    const [field, done] = [".ck-share-link", ".ck-share-done"].map((part) => line.querySelector(part));
    const link = location.href;
    try {
      await navigator.clipboard.writeText(link);
      field.hidden = true;
      done.textContent = ` ${button.dataset.copied}`;
    } catch {
      field.value = link;
      field.hidden = false;
      field.focus();
      field.select();
      done.textContent = ` ${button.dataset.refused}`;
    }
  });

  return { Refused, fill, element, number, whole, flag, fixed, once, LinkValues, attempt, share,
           fallbackNote, fieldLabel, InvalidFields, calm, stepControls, stepper, compact, more };
})();
