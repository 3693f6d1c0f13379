// The prompt sharing component: a view over prefix_cache.js, prefix_cache.py's JavaScript
// twin (courseModules.prefix_cache, on block_pool.js), which runs the link's prompts one
// request after another as prefix_cache.py does (and so vLLM 0.26.0's automatic prefix
// caching); tests/test_js_mirrors.py holds the twin to the Python. parity.py says what the
// page must show for each link, and the tests check it in Chromium. The kit's stepper runs
// the link, the presets, the form and the steps. Texts go in with textContent only.
(() => {
  const { Refused, fill, element, whole, once, calm, stepper, compact, more } = courseKit;
  const { blocks_for } = courseModules.block_pool;
  const { PrefixCache, block_hashes } = courseModules.prefix_cache;
  const SETTINGS = ["num_gpu_blocks", "block_size", "max_tokens"];
  const NAMES = "ABCDEFGH";
  const NONE = "—";
  const PARTIAL = "·"; // a partly filled last block: it gets no hash

  // Token ids by order of first appearance over the whole workload: equal words, equal ids.
  function tokenIds(workload) {
    const vocabulary = new Map();
    return workload.map((words) => words.map((word) => {
      if (!vocabulary.has(word)) vocabulary.set(word, vocabulary.size);
      return vocabulary.get(word);
    }));
  }

  // Every request in turn through the twin's PrefixCache.run: what the page shows of each,
  // and of the pool after each. A hash is shown as its number by order of first appearance.
  function simulate({ workload, settings }) {
    const bs = settings.block_size;
    const cache = new PrefixCache(settings.num_gpu_blocks, bs);
    const labels = new Map();
    const label = (hash) => `#${labels.get(hash)}`;
    const requests = [];
    const after = [];
    tokenIds(workload).forEach((prompt, i) => {
      const name = NAMES[i];
      const n = prompt.length;
      const promptKeys = block_hashes(prompt, bs);
      const limit = Math.floor((n - 1) / bs);
      const before = cache.cached_blocks; // block -> its hash
      const limitCached = promptKeys.length > limit && [...before.values()].includes(promptKeys[limit]);
      const cachedTokens = cache.run(name, prompt, settings.max_tokens);
      if (cachedTokens === null) {
        const tokens = n + settings.max_tokens - 1; // the last sampled token is never computed
        throw new Refused("never_fits", { r: name, tokens, needed: blocks_for(tokens, bs), usable: cache.num_free_blocks });
      }
      const done = cache.history.at(-1);
      const hashes = cache.cached_blocks;
      for (const block of done.block_table) {
        if (hashes.has(block) && !labels.has(hashes.get(block))) labels.set(hashes.get(block), labels.size + 1);
      }
      const stop = cachedTokens / bs; // the first block that is not a hit
      // Why the hit ends there: a block not cached (every later hash chains on it), the
      // last-token rule (its block is cached but the last prompt token is recomputed), or
      // the tokens left do not fill a block.
      let reason = "partial";
      if (stop < limit) reason = "miss";
      else if (promptKeys.length > limit) reason = limitCached ? "last-token" : "miss";
      const blocks = promptKeys.map(label);
      if (n % bs) blocks.push(PARTIAL);
      requests.push({
        name, words: workload[i], n, stop, reason, blocks, promptKeys, cachedTokens, table: done.block_table,
        evicted: done.evicted.map((block) => [block, label(before.get(block))]),
        stopLabel: stop < promptKeys.length ? label(promptKeys[stop]) : null,
      });
      after.push({
        free: cache.free_queue.map((block) => [block, hashes.has(block) ? label(hashes.get(block)) : null]),
        cached: hashes.size, hits: cache.hits, queries: cache.queries,
      });
    });
    return { requests, after, labels };
  }

  // hits/queries as a percentage with one decimal, halves rounded up (parity.py: percent).
  function percent(hits, queries) {
    const tenths = Math.floor((2000 * hits + queries) / (2 * queries));
    return `${Math.floor(tenths / 10)}.${tenths % 10}%`;
  }

  // A prompt's words, or null where it is not one the page takes.
  function readWords(words, limits, word) {
    const [least, most] = limits.words;
    if (words.length < least || words.length > most) return null;
    return words.every((w) => word.test(w)) ? words : null;
  }

  // A link's prompts ("|" between prompts, one space between words), or null.
  function readPrompts(text, limits, word) {
    const prompts = text.split("|").map((prompt) => readWords(prompt.split(" "), limits, word));
    const [least, most] = limits.requests;
    if (prompts.length < least || prompts.length > most || prompts.some((p) => p === null)) return null;
    return prompts;
  }

  const encode = (workload) => workload.map((words) => words.join(" ")).join("|");
  const hue = (number) => Math.round((number * 137.508) % 360);

  function setup(root) {
    compact(root);
    const limits = JSON.parse(root.dataset.limits);
    const word = new RegExp(`^${root.dataset.word}$`);
    const reasons = JSON.parse(root.dataset.reasons);
    const texts = JSON.parse(root.dataset.texts);
    const summary = root.querySelector(".ps-summary");
    const list = root.querySelector(".ps-requests");
    const addButton = root.querySelector(".ps-add");
    const queue = root.querySelector(".ps-queue");
    const key = (name) => root.querySelector(`[data-key="${name}"]`);

    // Each request: its prompt's words block by block, each block coloured by its hash, its
    // hit, why the hit stops there, its hashes, block table and evictions.
    function draw(result, model) {
      for (const item of list.children) item.querySelector(".ps-result").hidden = result === null;
      if (!result) return;
      const bs = model.settings.block_size;
      result.requests.forEach((r, index) => {
        const chips = [];
        for (let b = 0; b * bs < r.n; b += 1) {
          const full = b < r.promptKeys.length;
          const chip = element("span", null, { class: `ps-block ${b < r.stop ? "ps-hit" : full ? "ps-miss" : "ps-partial"}` });
          if (full) chip.style.setProperty("--ps-hue", hue(result.labels.get(r.promptKeys[b])));
          chip.append(element("span", r.words.slice(b * bs, (b + 1) * bs).join(" "), { class: "ps-words" }),
                      element("span", `${full ? r.blocks[b] : PARTIAL}${b < r.stop ? " ✓" : ""}`, { class: "ps-tag" }));
          chips.push(chip);
        }
        list.children[index].querySelector(".ps-chips").replaceChildren(...chips);
        key(`blocks-${r.name}`).textContent = r.blocks.join(" ");
        key(`hit-${r.name}`).textContent = `${r.cachedTokens}/${r.n}`;
        key(`stop-${r.name}`).textContent = r.reason;
        list.children[index].querySelector(".ps-why").textContent = fill(reasons[r.reason], {
          k: r.stop, label: r.stopLabel ?? PARTIAL, left: r.n - r.stop * bs });
        key(`table-${r.name}`).textContent = r.table.join(" ");
        key(`evicted-${r.name}`).textContent = r.evicted.map(([block, label]) => `${block}:${label}`).join(", ") || NONE;
      });
    }

    // The pool after the chosen request: the free queue, the cached blocks, the hit rate.
    function show(result, model) {
      for (const item of list.children) item.removeAttribute("aria-current");
      if (!result) return;
      const after = result.after[model.step];
      list.children[model.step].setAttribute("aria-current", "step");
      key("step").textContent = NAMES[model.step];
      summary.querySelector(".ps-shown").textContent = NAMES[model.step];
      queue.replaceChildren(...after.free.flatMap(([block, label], index) => {
        const chip = element("span", label ? `${block}:${label}` : String(block), { class: label ? "ps-q ps-q-cached" : "ps-q" });
        if (label) chip.style.setProperty("--ps-hue", hue(Number(label.slice(1))));
        return index ? [document.createTextNode(" "), chip] : [chip];
      }));
      key("cached").textContent = `${after.cached}/${model.settings.num_gpu_blocks - 1}`;
      key("hits").textContent = `${after.hits}/${after.queries}`;
      key("rate").textContent = percent(after.hits, after.queries);
    }

    function fillRequests(model, { invalid }) {
      invalid.forget(list.querySelectorAll("textarea"));
      list.replaceChildren(...model.workload.map((words, index) => {
        const name = NAMES[index];
        const item = element("li", null, { class: "ps-request", "data-index": String(index) });
        const head = element("div", null, { class: "ps-head" });
        const id = element("button", name, { type: "button", class: "ps-id", "aria-label": fill(texts.show, { r: name }),
                                             title: fill(texts.show, { r: name }) });
        const input = element("textarea", null, { rows: "2", autocomplete: "off", spellcheck: "false",
                                               autocapitalize: "off", "aria-label": `${name} · ${texts.prompt}` });
        input.value = words.join(" ");
        const remove = element("button", "×", { type: "button", class: "ps-remove",
                                                "aria-label": `${texts.remove} ${name}`, title: `${texts.remove} ${name}` });
        remove.disabled = model.workload.length <= limits.requests[0];
        head.append(id, input, remove);
        const outcome = element("div", null, { class: "ps-result" });
        outcome.append(element("div", null, { class: "ps-chips", "aria-hidden": "true" }));
        // Its hit on the line that unfolds, on a phone, the rest.
        const detail = more([`${texts.hit} `, element("output", null, { "data-key": `hit-${name}` }), " ",
                             element("code", null, { "data-key": `stop-${name}`, class: "ps-reason" })]);
        const facts = element("dl", null, { class: "ps-facts" });
        for (const field of ["blocks", "table", "evicted"]) {
          const value = element("dd", null);
          value.append(element("output", null, { "data-key": `${field}-${name}` }));
          const row = element("div", null);
          row.append(element("dt", texts[field]), value);
          facts.append(row);
        }
        detail.append(element("p", null, { class: "ps-why" }), facts);
        outcome.append(detail);
        item.append(head, outcome);
        return item;
      }));
      addButton.disabled = model.workload.length >= limits.requests[1];
    }

    const lastRequest = (model) => model.workload.length - 1;
    const kit = stepper(root, "ps", {
      settings: SETTINGS, workload: "prompts",
      read: (name, text) => (name === "prompts" ? readPrompts(text, limits, word) : whole(text, limits[name])) ?? undefined,
      write: (name, value) => (name === "prompts" ? encode(value) : value),
      run: simulate, view: [root.querySelector(".ps-view"), summary],
      first: lastRequest, last: lastRequest, fill: fillRequests, draw, show,
    });
    const { model } = kit;

    // A prompt the reader typed: words separated by spaces, each one the page takes, or the
    // field is marked once typing pauses and the page keeps computing with the prompt from
    // before the edit (the kit's calm()).
    const index = (input) => Number(input.closest("li").dataset.index);
    calm(list, kit.invalid, {
      handles: (input) => input.tagName === "TEXTAREA",
      current: (input) => model.workload[index(input)],
      read: (input) => {
        const text = input.value.trim();
        return readWords(text === "" ? [] : text.split(/\s+/), limits, word) ?? undefined;
      },
      take: (input, words) => {
        model.workload[index(input)] = words;
        kit.changed();
      },
      message: (input, kept) => {
        const [least, most] = limits.words;
        return fill(kit.messages.invalid_prompt, { label: input.getAttribute("aria-label"), least, most,
                                                   chars: limits.word_chars[1], kept: kept.join(" ") });
      },
    });
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button) return;
      const index = Number(button.closest("li").dataset.index);
      if (button.classList.contains("ps-id")) {
        kit.go(index);
      } else if (button.classList.contains("ps-remove") && model.workload.length > limits.requests[0]) {
        model.workload.splice(index, 1);
        fillRequests(model, kit);
        kit.changed();
        addButton.focus();
      }
    });
    // A new request repeats the last prompt: it hits what that one cached.
    addButton.addEventListener("click", () => {
      if (model.workload.length >= limits.requests[1]) return;
      model.workload.push([...model.workload[model.workload.length - 1]]);
      model.step = model.workload.length - 1;
      fillRequests(model, kit);
      kit.changed();
      list.lastElementChild.querySelector("textarea").focus();
    });
    root.dataset.ready = "true";
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="prompt-sharing"]').forEach(once(setup)));
})();
