// The block table component. It replays the link's operations on a block pool that follows
// snippets/paged-attention/block_pool.py rule for rule (and so vLLM 0.26.0's BlockPool);
// parity.py says what the page must show for each link, and the tests check it in Chromium.
(() => {
  const { fill, element, number, whole, share } = courseKit;
  // A request's name and its tokens (read by the kit's whole()) or free.
  const OP = /^([A-Z]):([^:]+)$/;
  const TOKENS = [0, 999999];

  class BadLink extends Error {}

  class BlockPool {
    constructor(numGpuBlocks, blockSize, caching) {
      this.numGpuBlocks = numGpuBlocks;
      this.blockSize = blockSize;
      this.caching = caching;
      // The free queue starts ordered by block id; block 0 is taken as the null block.
      this.free = [];
      for (let block = 1; block < numGpuBlocks; block += 1) this.free.push(block);
      this.nullBlock = 0;
      this.tables = new Map();
      this.tokens = new Map();
      this.hashed = new Set();
    }

    // Grow a request to `tokens` tokens; the blocks it added, or null when too few are free.
    allocate(request, tokens) {
      const held = this.tokens.get(request) ?? 0;
      if (tokens < held) throw new BadLink(`${request} cannot shrink`);
      const table = this.tables.get(request) ?? [];
      const needed = Math.ceil(tokens / this.blockSize) - table.length;
      if (needed > this.free.length) return { refused: true, needed };
      const added = this.free.splice(0, needed); // from the head of the free queue
      for (const block of added) this.hashed.delete(block);
      const grown = table.concat(added); // append-only
      this.tables.set(request, grown);
      this.tokens.set(request, tokens);
      if (this.caching) {
        for (const block of grown.slice(0, Math.floor(tokens / this.blockSize))) {
          this.hashed.add(block);
        }
      }
      return { refused: false, added };
    }

    // Last block first: blocks without a hash to the head, blocks with one to the tail.
    release(request) {
      if (!this.tables.has(request)) throw new BadLink(`unknown request ${request}`);
      const ordered = [...this.tables.get(request)].reverse();
      this.tables.delete(request);
      this.tokens.delete(request);
      const unhashed = ordered.filter((block) => !this.hashed.has(block));
      const free = this.free;
      free.unshift(...unhashed);
      free.push(...ordered.filter((block) => this.hashed.has(block)));
      return ordered;
    }

    slot(request, position) {
      const table = this.tables.get(request);
      return table[Math.floor(position / this.blockSize)] * this.blockSize +
        (position % this.blockSize);
    }

    usage() {
      const total = this.numGpuBlocks - 1;
      if (!total) return 0;
      return 1.0 - this.free.length / total;
    }
  }

  // A float as Python's repr writes it (the gauge's value on /metrics): 0.0, 0.25, 1.0.
  const pyFloat = (x) => (Number.isInteger(x) ? x.toFixed(1) : String(x));

  // A whole number from least to most, as the kit reads numbers.
  function bounded(text, least, most) {
    const value = whole(text, [least, most]);
    if (value === null) throw new BadLink(`${text} is not from ${least} to ${most}`);
    return value;
  }

  function replay(state) {
    const blocks = bounded(state.blocks, 2, 64);
    const blockSize = bounded(state.block_size, 1, 64);
    if (state.caching !== "0" && state.caching !== "1") throw new BadLink("caching");
    const ops = (state.ops ? state.ops.split(",") : []).map((op) => {
      const [, request, tokens] = op.match(OP) ?? [];
      if (tokens === "free") return { request, tokens };
      if (!request || whole(tokens, TOKENS) === null) throw new BadLink("ops");
      return { request, tokens: whole(tokens, TOKENS) };
    });
    const step = state.step === null ? ops.length : bounded(state.step, 0, ops.length);
    const pool = new BlockPool(blocks, blockSize, state.caching === "1");
    const refused = [];
    let happened = { kind: "start" };
    for (const { request, tokens } of ops.slice(0, step)) {
      if (tokens === "free") {
        happened = { kind: "finished", r: request, blocks: pool.release(request) };
        continue;
      }
      const free = pool.free.length;
      const result = pool.allocate(request, tokens);
      if (result.refused) refused.push(`${request}:${tokens}`);
      happened = result.refused
        ? { kind: "refused", r: request, n: tokens, needed: result.needed, free }
        : { kind: "grew", r: request, n: tokens, blocks: result.added };
    }
    return { pool, refused, happened, step, total: ops.length };
  }

  function setup(root) {
    const text = JSON.parse(root.dataset.text);
    const labels = JSON.parse(root.dataset.labels);
    const settings = root.querySelector(".bt-settings");
    const error = root.querySelector(".bt-error");
    const view = root.querySelector(".bt-state");
    const happenedLine = root.querySelector(".bt-happened");
    const link = new URLSearchParams(location.search);
    const state = {
      blocks: link.get("blocks") ?? root.dataset.blocks,
      block_size: link.get("block_size") ?? root.dataset.blockSize,
      caching: link.get("caching") ?? "0",
      ops: link.get("ops") ?? root.dataset.ops,
      step: link.get("step"),
    };
    let current = null;

    function button(label, onClick) {
      const made = element("button", label, { type: "button" });
      made.addEventListener("click", onClick);
      return made;
    }

    function show(result) {
      const { pool, refused, happened, step, total } = result;
      root.querySelector('[data-key="step"]').value = `${step}/${total}`;
      const values = { ...happened, blocks: (happened.blocks ?? []).join(", ") };
      happenedLine.textContent = fill(text[happened.kind], values);

      const body = root.querySelector(".bt-requests tbody");
      body.replaceChildren();
      const owner = new Map([[pool.nullBlock, "null"]]);
      for (const request of [...pool.tables.keys()].sort()) {
        const table = pool.tables.get(request);
        const held = pool.tokens.get(request);
        table.forEach((block, index) => owner.set(block, `${request}${index}`));
        const row = element("tr", null);
        row.append(
          element("th", request),
          element("td", String(held), { "data-key": `tokens-${request}` }),
          element("td", table.join(" ") || "—", { "data-key": `table-${request}` }),
          element("td", held ? String(pool.slot(request, held - 1)) : "—",
                  { "data-key": `slot-${request}` }),
        );
        const actions = element("td", null);
        actions.append(
          button(labels.grow_one, () => act(`${request}:${held + 1}`)),
          button(labels.grow_block, () => act(`${request}:${held + pool.blockSize}`)),
          button(labels.finish, () => act(`${request}:free`)),
        );
        row.append(actions);
        body.append(row);
      }

      const grid = root.querySelector(".bt-pool");
      grid.replaceChildren();
      for (let block = 0; block < pool.numGpuBlocks; block += 1) {
        const label = owner.get(block) ?? (pool.hashed.has(block) ? "free#" : "free");
        const kind = block === pool.nullBlock ? "null" : owner.has(block) ? "used" : label;
        const box = element("div", null, { class: `bt-block bt-${kind.replace("#", "-hashed")}` });
        if (kind === "used") box.style.setProperty("--bt-hue", (label.charCodeAt(0) * 47) % 360);
        box.append(element("span", String(block), { class: "bt-id" }),
                   element("span", label, { "data-key": `block-${block}` }));
        grid.append(box);
      }
      root.querySelector('[data-key="free"]').value = pool.free
        .map((block) => (pool.hashed.has(block) ? `${block}#` : String(block)))
        .join(" ") || "—";
      root.querySelector('[data-key="used"]').value =
        `${pool.numGpuBlocks - 1 - pool.free.length}/${pool.numGpuBlocks - 1}`;
      root.querySelector('[data-key="gauge"]').value = pyFloat(pool.usage());
      root.querySelector('[data-key="refused"]').value = refused.join(", ") || "—";
    }

    function update(keepInLink) {
      settings.elements.blocks.value = state.blocks;
      settings.elements.block_size.value = state.block_size;
      settings.elements.caching.checked = state.caching === "1";
      try {
        current = replay(state);
        show(current);
        error.hidden = true;
        view.hidden = false;
      } catch (problem) {
        if (!(problem instanceof BadLink)) throw problem;
        current = null;
        error.hidden = false;
        view.hidden = true;
        happenedLine.textContent = "";
      }
      if (keepInLink) share(state); // a step of null: the last one
      root.dataset.ready = "true";
    }

    // A reader's operation replaces whatever came after the step shown.
    function act(op) {
      if (!current) return;
      const ops = state.ops ? state.ops.split(",").slice(0, current.step) : [];
      state.ops = ops.concat(op).join(",");
      state.step = null;
      update(true);
    }

    root.querySelector(".bt-steps").addEventListener("click", (event) => {
      const go = event.target.closest("button")?.dataset.go;
      if (!go) return;
      if (go === "reset" || go === "clear") {
        Object.assign(state, { blocks: root.dataset.blocks, block_size: root.dataset.blockSize,
                               caching: "0", ops: go === "reset" ? root.dataset.ops : "",
                               step: null });
      } else if (current) {
        const moves = { first: 0, prev: current.step - 1, next: current.step + 1,
                        last: current.total };
        const step = Math.min(Math.max(moves[go], 0), current.total);
        state.step = step === current.total ? null : String(step);
      }
      update(true);
    });
    // A field's text, as the kit reads numbers where it holds one (１２ is 12).
    const typed = (input) => {
      const value = number(input.value);
      return value === null ? input.value.trim() : String(value);
    };
    settings.addEventListener("input", () => {
      state.blocks = typed(settings.elements.blocks);
      state.block_size = typed(settings.elements.block_size);
      state.caching = settings.elements.caching.checked ? "1" : "0";
      update(true);
    });
    settings.addEventListener("submit", (event) => event.preventDefault());
    root.querySelector(".bt-new").addEventListener("submit", (event) => {
      event.preventDefault();
      const tokens = whole(event.target.elements.tokens.value, [1, TOKENS[1]]);
      if (!current || tokens === null) return;
      const name = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"].find((c) => !current.pool.tables.has(c));
      if (name) act(`${name}:${tokens}`);
    });
    update(false);
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="block-table"]').forEach(setup));
})();
