// The prompt sharing component. It runs the link's prompts, one request after another,
// through a prefix cache that follows snippets/prefix-caching/prefix_cache.py rule for rule
// (and so vLLM 0.26.0's automatic prefix caching), on a block pool that follows
// snippets/paged-attention/block_pool.py. Each rule names the prefix_cache.py function it
// mirrors, and the vLLM function that one mirrors. parity.py says what the page must show
// for each link, and the tests check it in Chromium. Texts go in with textContent only.
(() => {
  const { Refused, fill, element, whole, once, LinkValues, attempt, share, fallbackNote,
          InvalidFields, stepControls, compact, more } = courseKit;
  const SETTINGS = ["num_gpu_blocks", "block_size", "max_tokens"];
  const NAMES = "ABCDEFGH";
  const NONE = "—";
  const PARTIAL = "·"; // a partly filled last block: it gets no hash

  // block_pool.py: blocks_for (vLLM's cdiv in SingleTypeKVCacheManager.allocate_new_blocks).
  const blocksFor = (numTokens, blockSize) => Math.ceil(numTokens / blockSize);

  // prefix_cache.py: block_hashes (vllm/v1/core/kv_cache_utils.py: hash_block_tokens, for
  // each full block in get_request_block_hasher): one hash per full block, none for a partly
  // filled last block. A hash is chained on its parent's, so two blocks hash alike exactly
  // when their tokens and all the tokens before them are alike: the key here is that whole
  // prefix of token ids, which stands for the SHA-256 chain without computing it.
  function blockKeys(tokens, blockSize) {
    const keys = [];
    for (let start = 0; start + blockSize <= tokens.length; start += blockSize) {
      keys.push(tokens.slice(0, start + blockSize).join(","));
    }
    return keys;
  }

  // prefix_cache.py: PrefixCache, a BlockPool (block_pool.py) with prefix caching on.
  class PrefixCache {
    constructor(numGpuBlocks, blockSize) {
      this.numGpuBlocks = numGpuBlocks;
      this.blockSize = blockSize;
      // The free queue starts ordered by block id (block_pool.py: BlockPool.__init__; vLLM's
      // FreeKVCacheBlockQueue.__init__); block 0 is the null block, never handed out.
      this.free = [];
      for (let block = 1; block < numGpuBlocks; block += 1) this.free.push(block);
      // hash -> the blocks cached under it, first inserted first: no de-duplication
      // (vllm/v1/core/block_pool.py: BlockHashToBlockMap).
      this.cached = new Map();
      this.hashOf = new Map(); // block -> its hash (KVCacheBlock.block_hash)
      this.standIn = 0;
      this.hits = 0; // PrefixCacheStats, in tokens
      this.queries = 0;
    }

    // PrefixCache.lookup: the cached blocks a new request with this prompt reuses.
    lookup(prompt) {
      // The last prompt token is always recomputed, to get its logits
      // (vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks).
      const maxHitLength = prompt.length - 1; // last-token rule
      const keys = blockKeys(prompt, this.blockSize).slice(0, Math.floor(maxHitLength / this.blockSize));
      // The longest run of cached blocks from the first one: a miss ends it
      // (vllm/v1/core/single_type_kv_cache_manager.py: FullAttentionManager.find_longest_cache_hit,
      // with vllm/v1/core/block_pool.py: BlockPool.get_cached_block).
      const hit = [];
      for (const key of keys) {
        if (!this.cached.has(key)) break;
        hit.push(this.cached.get(key)[0]);
      }
      return hit;
    }

    // PrefixCache.run: admit a request, compute it, finish it. What it did: the hit, the
    // block table, the cached blocks it evicted (with the hash each lost).
    run(name, prompt, maxTokens) {
      const bs = this.blockSize;
      // Output tokens no prompt holds: negative ids, as PrefixCache.run's stand-ins.
      this.standIn -= maxTokens;
      const output = [];
      for (let t = this.standIn; t < this.standIn + maxTokens; t += 1) output.push(t);
      const hit = this.lookup(prompt);
      const cachedTokens = hit.length * bs;
      // Queries and hits are counted in tokens, per new request
      // (vllm/v1/metrics/stats.py: PrefixCacheStats.record).
      this.queries += prompt.length;
      this.hits += cachedTokens;
      // The last sampled token is never fed back, so its K and V are never computed.
      const computed = prompt.length + maxTokens - 1;
      // The hit blocks count too: touching one takes it out of the free queue
      // (SingleTypeKVCacheManager.get_num_blocks_to_allocate).
      const needed = blocksFor(computed, bs);
      if (needed > this.free.length) {
        throw new Refused("never_fits", { r: name, tokens: computed, needed, usable: this.free.length });
      }
      for (const block of hit) this.free.splice(this.free.indexOf(block), 1); // BlockPool.touch
      // New blocks from the head of the free queue (block_pool.py: BlockPool.allocate); a
      // block handed out loses its hash (vllm/v1/core/block_pool.py: BlockPool.get_new_blocks,
      // with BlockPool._maybe_evict_cached_block).
      const added = this.free.splice(0, needed - hit.length);
      const evicted = [];
      for (const block of added) {
        if (!this.hashOf.has(block)) continue;
        const key = this.hashOf.get(block);
        evicted.push([block, key]);
        this.hashOf.delete(block);
        const blocks = this.cached.get(key);
        blocks.splice(blocks.indexOf(block), 1);
        if (blocks.length === 0) this.cached.delete(key);
      }
      // Every full block of computed tokens gets its hash, prompt and output alike
      // (vllm/v1/core/kv_cache_manager.py: KVCacheManager.allocate_slots;
      // vllm/v1/core/block_pool.py: BlockPool.cache_full_blocks).
      const table = hit.concat(added); // append-only (vllm/v1/worker/gpu/block_table.py: BlockTables.append_block_ids)
      const keys = blockKeys(prompt.concat(output).slice(0, computed), bs);
      for (let i = hit.length; i < keys.length; i += 1) {
        this.hashOf.set(table[i], keys[i]);
        if (!this.cached.has(keys[i])) this.cached.set(keys[i], []);
        this.cached.get(keys[i]).push(table[i]);
      }
      // Finished: its blocks go back, last first; unhashed ones to the head of the free
      // queue, hashed ones to its tail, to stay cached longest (block_pool.py:
      // BlockPool.free; vllm/v1/core/block_pool.py: BlockPool.free_blocks).
      const ordered = [...table].reverse();
      this.free.unshift(...ordered.filter((block) => !this.hashOf.has(block)));
      this.free.push(...ordered.filter((block) => this.hashOf.has(block)));
      return { cachedTokens, table, evicted, keys };
    }
  }

  // Token ids by order of first appearance over the whole workload: equal words, equal ids.
  function tokenIds(workload) {
    const vocabulary = new Map();
    return workload.map((words) => words.map((word) => {
      if (!vocabulary.has(word)) vocabulary.set(word, vocabulary.size);
      return vocabulary.get(word);
    }));
  }

  // Every request in turn: what the page shows of each, and of the pool after each.
  function run(workload, settings) {
    const bs = settings.block_size;
    const m = settings.max_tokens;
    const cache = new PrefixCache(settings.num_gpu_blocks, bs);
    const labels = new Map(); // hash -> its number, by order of first appearance
    const label = (key) => `#${labels.get(key)}`;
    const requests = [];
    const after = [];
    tokenIds(workload).forEach((prompt, i) => {
      const name = NAMES[i];
      const n = prompt.length;
      const promptKeys = blockKeys(prompt, bs);
      const limit = Math.floor((n - 1) / bs);
      const limitCached = promptKeys.length > limit && cache.cached.has(promptKeys[limit]);
      const result = cache.run(name, prompt, m);
      for (const key of result.keys) if (!labels.has(key)) labels.set(key, labels.size + 1);
      const stop = result.cachedTokens / bs; // the first block that is not a hit
      // Why the hit ends there: a block not cached (every later hash chains on it), the
      // last-token rule (its block is cached but the last prompt token is recomputed), or
      // the tokens left do not fill a block.
      let reason = "partial";
      if (stop < limit) reason = "miss";
      else if (promptKeys.length > limit) reason = limitCached ? "last-token" : "miss";
      const blocks = promptKeys.map(label);
      if (n % bs) blocks.push(PARTIAL);
      requests.push({
        name, words: workload[i], n, stop, reason, blocks, promptKeys,
        cachedTokens: result.cachedTokens,
        table: result.table,
        evicted: result.evicted.map(([block, key]) => [block, label(key)]),
        stopLabel: stop < promptKeys.length ? label(promptKeys[stop]) : null,
      });
      after.push({
        free: cache.free.map((block) => [block, cache.hashOf.has(block) ? label(cache.hashOf.get(block)) : null]),
        cached: cache.hashOf.size,
        hits: cache.hits,
        queries: cache.queries,
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
    const presets = JSON.parse(root.dataset.presets);
    const limits = JSON.parse(root.dataset.limits);
    const word = new RegExp(`^${root.dataset.word}$`);
    const messages = JSON.parse(root.dataset.messages);
    const fieldNames = JSON.parse(root.dataset.fields);
    const presetNames = JSON.parse(root.dataset.presetNames);
    const reasons = JSON.parse(root.dataset.reasons);
    const texts = JSON.parse(root.dataset.texts);
    const start = root.dataset.start;
    const form = root.querySelector(".ps-settings");
    const error = root.querySelector(".ps-error");
    const view = root.querySelector(".ps-view");
    const summary = root.querySelector(".ps-summary");
    const list = root.querySelector(".ps-requests");
    const addButton = root.querySelector(".ps-add");
    const slider = root.querySelector(".ps-slider");
    const queue = root.querySelector(".ps-queue");
    const key = (name) => root.querySelector(`[data-key="${name}"]`);
    const invalid = new InvalidFields(root.querySelector(".ps-invalid"));
    const showFallback = fallbackNote(root, messages, limits, presetNames[start]);

    // What the page runs: the link's values, or the fence's workload's where the link has
    // none or one the page does not take (named in the note).
    const link = new LinkValues(presets[start]);
    const model = { settings: {}, workload: null, step: 0 };
    for (const name of SETTINGS) {
      model.settings[name] = link.read(name, (text) => whole(text, limits[name]) ?? undefined);
    }
    model.workload = link.read("prompts", (text) => readPrompts(text, limits, word) ?? undefined);
    let result = null; // the run shown, or null when refused

    function compute() {
      result = attempt(() => run(model.workload, model.settings), error, [view, summary], messages);
      for (const item of list.children) item.querySelector(".ps-result").hidden = result === null;
      if (!result) return;
      const bs = model.settings.block_size;
      result.requests.forEach((r, index) => {
        const item = list.children[index];
        // The prompt's words, block by block, each block coloured by its hash.
        const chips = [];
        for (let b = 0; b * bs < r.n; b += 1) {
          const full = b < r.promptKeys.length;
          const kind = b < r.stop ? "ps-hit" : full ? "ps-miss" : "ps-partial";
          const chip = element("span", null, { class: `ps-block ${kind}` });
          if (full) chip.style.setProperty("--ps-hue", hue(result.labels.get(r.promptKeys[b])));
          chip.append(element("span", r.words.slice(b * bs, (b + 1) * bs).join(" "), { class: "ps-words" }),
                      element("span", `${full ? r.blocks[b] : PARTIAL}${b < r.stop ? " ✓" : ""}`,
                              { class: "ps-tag" }));
          chips.push(chip);
        }
        item.querySelector(".ps-chips").replaceChildren(...chips);
        key(`blocks-${r.name}`).textContent = r.blocks.join(" ");
        key(`hit-${r.name}`).textContent = `${r.cachedTokens}/${r.n}`;
        key(`stop-${r.name}`).textContent = r.reason;
        item.querySelector(".ps-why").textContent = fill(reasons[r.reason], {
          k: r.stop, label: r.stopLabel ?? PARTIAL, left: r.n - r.stop * bs,
        });
        key(`table-${r.name}`).textContent = r.table.join(" ");
        key(`evicted-${r.name}`).textContent =
          r.evicted.map(([block, label]) => `${block}:${label}`).join(", ") || NONE;
      });
      slider.max = String(model.workload.length - 1);
    }

    // The pool after the chosen request: the free queue, the cached blocks, the hit rate.
    function showStep() {
      for (const item of list.children) item.removeAttribute("aria-current");
      if (!result) return;
      const after = result.after[model.step];
      list.children[model.step].setAttribute("aria-current", "step");
      key("step").textContent = NAMES[model.step];
      summary.querySelector(".ps-shown").textContent = NAMES[model.step];
      slider.value = String(model.step);
      const chips = [];
      after.free.forEach(([block, label], index) => {
        if (index) chips.push(document.createTextNode(" "));
        const chip = element("span", label ? `${block}:${label}` : String(block),
                             { class: label ? "ps-q ps-q-cached" : "ps-q" });
        if (label) chip.style.setProperty("--ps-hue", hue(Number(label.slice(1))));
        chips.push(chip);
      });
      queue.replaceChildren(...chips);
      key("cached").textContent = `${after.cached}/${model.settings.num_gpu_blocks - 1}`;
      key("hits").textContent = `${after.hits}/${after.queries}`;
      key("rate").textContent = percent(after.hits, after.queries);
    }

    function shareState() {
      share({ ...model.settings, prompts: encode(model.workload), step: model.step });
      showFallback([]); // the link no longer holds the values the note is about
    }

    // Recompute after a reader's change; the step stays where it was if the run still has it.
    function changed() {
      model.step = Math.min(model.step, model.workload.length - 1);
      compute();
      showStep();
      shareState();
    }

    function fillForm() {
      for (const name of SETTINGS) {
        const input = form.elements.namedItem(name);
        input.value = String(model.settings[name]);
        invalid.mark(input, null);
      }
    }

    function fillRequests() {
      invalid.forget(list.querySelectorAll("textarea"));
      const items = model.workload.map((words, index) => {
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
        // Its hit on the line that unfolds, on a phone, why the hit stops there, its hashes,
        // block table and evictions.
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
      });
      list.replaceChildren(...items);
      addButton.disabled = model.workload.length >= limits.requests[1];
    }

    fillForm();
    fillRequests();
    model.step = model.workload.length - 1;
    if (link.params.has("step")) {
      const step = whole(link.params.get("step"), [0, model.workload.length - 1]);
      if (step === null) link.fallback.push("step");
      else model.step = step;
    }
    compute();
    showFallback(link.fallback);
    showStep();

    root.querySelector(".ps-presets").addEventListener("click", (event) => {
      const name = event.target.closest("button")?.dataset.preset;
      if (!name) return;
      for (const setting of SETTINGS) model.settings[setting] = whole(presets[name][setting], limits[setting]);
      model.workload = readPrompts(presets[name].prompts, limits, word);
      model.step = model.workload.length - 1;
      fillForm();
      fillRequests();
      changed();
    });
    form.addEventListener("input", (event) => {
      const input = event.target;
      const name = input.name;
      const value = whole(input.value.trim(), limits[name]);
      const [least, most] = limits[name];
      invalid.mark(input, value === null ? fill(messages.invalid, { label: fieldNames[name], least, most }) : null);
      if (value === null) return;
      model.settings[name] = value;
      changed();
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    // A prompt the reader typed: words separated by spaces, each one the page takes, or the
    // field is marked and the page keeps computing with the last valid prompt.
    list.addEventListener("input", (event) => {
      const input = event.target;
      const index = Number(input.closest("li").dataset.index);
      const text = input.value.trim();
      const words = readWords(text === "" ? [] : text.split(/\s+/), limits, word);
      const [least, most] = limits.words;
      invalid.mark(input, words === null ? fill(messages.invalid_prompt, {
        label: input.getAttribute("aria-label"), least, most, chars: limits.word_chars[1] }) : null);
      if (words === null) return;
      model.workload[index] = words;
      changed();
    });
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button) return;
      const index = Number(button.closest("li").dataset.index);
      if (button.classList.contains("ps-id")) {
        go(index);
      } else if (button.classList.contains("ps-remove") && model.workload.length > limits.requests[0]) {
        model.workload.splice(index, 1);
        fillRequests();
        changed();
        addButton.focus();
      }
    });
    // A new request repeats the last prompt: it hits what that one cached.
    addButton.addEventListener("click", () => {
      if (model.workload.length >= limits.requests[1]) return;
      model.workload.push([...model.workload[model.workload.length - 1]]);
      model.step = model.workload.length - 1;
      fillRequests();
      changed();
      list.lastElementChild.querySelector("textarea").focus();
    });

    function go(step) {
      if (!result) return;
      model.step = step;
      showStep();
      shareState();
    }
    stepControls(root.querySelector(".ps-steps"), slider,
                 () => result && { step: model.step, last: model.workload.length - 1 }, go);
    root.dataset.ready = "true";
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="prompt-sharing"]').forEach(once(setup)));
})();
