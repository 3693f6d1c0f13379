// The offload tiers component: a view over offload.js, offload.py's JavaScript twin
// (courseModules.offload, on lesson 5's prefix_cache.js), which sends the link's documents
// one request at a time through the GPU prefix cache and the CPU tier behind it, as
// offload.py does (and so vLLM 0.26.0's OffloadingConnector with CPUOffloadingManager);
// tests/lessons/kv-offloading/test_offload_js.py holds the twin to the Python. The TTFT is
// revisits.py's estimate, with the constants data.py reads from the lessons' modules.
// parity.py says what the page must show for each link, and the tests check it in Chromium.
// The kit's stepper runs the link, the presets, the form and the steps. Texts go in with
// textContent only.
(() => {
  const { Refused, fill, element, whole, once, calm, stepper, compact } = courseKit;
  const { blocks_for } = courseModules.block_pool;
  const { block_hashes } = courseModules.prefix_cache;
  const { HIT, OffloadedCache } = courseModules.offload;
  const SETTINGS = ["num_gpu_blocks", "num_cpu_blocks", "policy", "doc_tokens"];
  const POLICIES = ["lru", "arc"];
  const DOCUMENTS = "ABCDEFGH";

  // Thousands grouped by commas, as Python's f"{n:,}".
  const grouped = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

  // Lesson 3's estimate of a step that computes n tokens of one request with `before`
  // computed already (step_costs.py: step, chunked_prefill.py: step_bounds): the longer of
  // its bytes over the bandwidth and its FLOPs over the peak rate.
  function step(m, n, before) {
    const read = m.read_base + n * m.read_per_token + (before + n) * m.kv_per_token;
    const pairs = n * before + (n * (n + 1)) / 2;
    const flops = m.flops_per_token * n + m.flops_per_logit + pairs * m.attention;
    return Math.max(read / m.bandwidth, flops / m.peak);
  }

  // revisits.py: ttft: seconds to the first token without the tier (compute what the GPU
  // misses) and with it (reload the CPU's hit over PCIe, compute the rest); estimates.
  function ttft(m, v) {
    const without = step(m, v.prompt_tokens - v.gpu_hit, v.gpu_hit);
    const done = v.prompt_tokens - v.recomputed;
    const reload = (Math.floor(v.cpu_hit / m.block_size) * m.bytes_per_block) / m.pcie;
    return [without, reload + step(m, v.recomputed, done)];
  }

  // Every request in turn through the twin: what it found and moved, the TTFT estimates,
  // the totals so far, and each document's blocks in each tier before and after it.
  function simulate({ settings, workload }, estimate, firstToken) {
    const { num_gpu_blocks: gpu, num_cpu_blocks: cpu, policy, doc_tokens: size } = settings;
    const names = [...DOCUMENTS].filter((d) => workload.includes(d));
    const docs = {};
    const keys = {};
    for (const d of names) {
      const first = firstToken + DOCUMENTS.indexOf(d) * size;
      docs[d] = Array.from({ length: size }, (_, i) => first + i);
      keys[d] = block_hashes(docs[d]);
    }
    const cache = new OffloadedCache(gpu, cpu, policy);
    const holds = () => {
      const onGpu = new Set(cache.gpu.cached_blocks.values());
      return Object.fromEntries(names.map((d) => [d, keys[d].map((key) => [onGpu.has(key), cache.cpu.lookup(key) === HIT])]));
    };
    const total = { gpu: 0, cpu: 0, recomputed: 0, failed: 0 };
    let before = holds();
    const steps = [...workload].map((d, i) => {
      const ran = cache.gpu.history.length;
      const v = cache.visit(`${d}${i}`, docs[d]);
      if (cache.gpu.history.length === ran) {
        throw new Refused("never_fits", { doc: d, tokens: grouped(size), needed: grouped(blocks_for(size)),
                                          usable: grouped(gpu - 1) });
      }
      total.gpu += v.gpu_hit;
      total.cpu += v.cpu_hit;
      total.recomputed += v.recomputed;
      total.failed += v.store_failed ? 1 : 0;
      const after = holds();
      const shown = { doc: d, v, ttft: ttft(estimate, v), before, after, total: { ...total },
                      gpuUsed: cache.gpu.cached_blocks.size, cpuUsed: cache.cpu.num_allocated - cache.cpu.free_list.length };
      before = after;
      return shown;
    });
    return { names, steps };
  }

  // What a cell of a tier's row shows after the request: a block it hit, computed, reloaded,
  // stored or evicted, one held from before, or none.
  function cellState(s, d, index, tier, blockSize) {
    const [wasGpu, wasCpu] = s.before[d][index];
    const [onGpu, onCpu] = s.after[d][index];
    const mine = s.doc === d;
    const hit = s.v.gpu_hit / blockSize;
    const loaded = index >= hit && index < hit + s.v.loaded;
    if (tier === "gpu") {
      if (!onGpu) return wasGpu ? "gone" : "";
      if (mine) return index < hit ? "hit" : loaded ? "load" : "computed";
      return "held";
    }
    if (!onCpu) return wasCpu ? "gone" : "";
    if (mine && loaded) return "load";
    return wasCpu ? "held" : "store";
  }

  function setup(root) {
    compact(root);
    const estimate = JSON.parse(root.dataset.model);
    const limits = JSON.parse(root.dataset.limits);
    const firstToken = Number(root.dataset.firstToken);
    const texts = JSON.parse(root.dataset.texts);
    const summary = root.querySelector(".ot-summary");
    const tiers = root.querySelector(".ot-tiers");
    const failedNow = root.querySelector(".ot-failed-now");
    const orderInput = root.querySelector('.ot-workload input[name="order"]');
    const key = (name) => root.querySelector(`[data-key="${name}"]`);

    const read = (name, text) => {
      if (typeof text !== "string") return undefined;
      if (name === "policy") return POLICIES.includes(text) ? text : undefined;
      if (name === "order") {
        const [least, most] = limits.order;
        return new RegExp(`^[${DOCUMENTS}]{${least},${most}}$`).test(text) ? text : undefined;
      }
      return whole(text, limits[name]) ?? undefined;
    };

    // Each document's two rows of cells, one cell per full block, and the blocks each tier
    // holds of it.
    function draw(result, model) {
      tiers.replaceChildren();
      if (!result) return;
      const blocks = Math.floor(model.settings.doc_tokens / estimate.block_size);
      tiers.style.setProperty("--ot-blocks", String(Math.max(blocks, 1)));
      for (const d of result.names) {
        for (const tier of ["gpu", "cpu"]) {
          const row = element("div", null, { class: `ot-row ot-row-${tier}` });
          row.append(element("span", tier === "gpu" ? d : "", { class: "ot-doc", "aria-hidden": "true" }),
                     element("span", texts[tier], { class: "ot-tier", "aria-hidden": "true" }));
          const strip = element("span", null, { class: "ot-strip", "aria-hidden": "true" });
          for (let b = 0; b < blocks; b += 1) strip.append(element("span", null, { class: "ot-cell" }));
          const count = element("span", null, { class: "ot-count", "aria-label": fill(texts.row, { doc: d, tier: texts[tier] }) });
          count.append(element("output", null, { "data-key": `${tier}-${d}` }), `/${grouped(blocks)}`);
          row.append(strip, count);
          tiers.append(row);
        }
      }
    }

    // The tiers after the chosen request, what it found and moved, and the totals.
    function show(result, model) {
      if (!result) return;
      const s = result.steps[model.step];
      key("step").textContent = s.v.request_id;
      summary.querySelector(".ot-shown").textContent = s.v.request_id;
      for (const name of ["gpu_hit", "cpu_hit", "recomputed", "loaded", "stored", "evicted"]) {
        key(name).textContent = grouped(s.v[name]);
      }
      key("ttft_without").textContent = courseKit.fixed(s.ttft[0] * 1000, 1);
      key("ttft_with").textContent = courseKit.fixed(s.ttft[1] * 1000, 1);
      key("total_gpu").textContent = grouped(s.total.gpu);
      key("total_cpu").textContent = grouped(s.total.cpu);
      key("total_recomputed").textContent = grouped(s.total.recomputed);
      key("failed").textContent = grouped(s.total.failed);
      key("gpu_used").textContent = `${grouped(s.gpuUsed)}/${grouped(model.settings.num_gpu_blocks - 1)}`;
      key("cpu_used").textContent = `${grouped(s.cpuUsed)}/${grouped(model.settings.num_cpu_blocks)}`;
      failedNow.hidden = !s.v.store_failed;
      const rows = tiers.children;
      result.names.forEach((d, n) => {
        ["gpu", "cpu"].forEach((tier, t) => {
          const cells = rows[2 * n + t].querySelector(".ot-strip").children;
          const held = s.after[d].filter((where) => where[t]).length;
          for (let b = 0; b < cells.length; b += 1) {
            const state = cellState(s, d, b, tier, estimate.block_size);
            cells[b].className = state ? `ot-cell ot-${state}` : "ot-cell";
          }
          key(`${tier}-${d}`).textContent = grouped(held);
        });
      });
    }

    const lastRequest = (model) => model.workload.length - 1;
    const kit = stepper(root, "ot", {
      settings: SETTINGS, workload: "order", read, write: (name, value) => value,
      run: (model) => simulate(model, estimate, firstToken),
      view: [root.querySelector(".ot-view"), summary],
      first: () => 0, last: lastRequest,
      fill: (model, { invalid }) => {
        orderInput.value = model.workload;
        invalid.mark(orderInput, null);
      },
      draw, show,
    });

    // An order the reader typed: capital letters A–H, or the field is marked once typing
    // pauses and the page keeps computing with the order from before the edit (the kit's
    // calm()), which the message names.
    calm(root.querySelector(".ot-workload"), kit.invalid, {
      current: () => kit.model.workload,
      read: (input) => read("order", input.value.trim()),
      take: (input, order) => {
        kit.model.workload = order;
        kit.changed();
      },
      message: (input, kept) => {
        const [least, most] = kit.limits.order;
        return fill(kit.messages.invalid_order, { label: JSON.parse(root.dataset.fields).order, least, most, kept });
      },
    });
    root.querySelector(".ot-workload").addEventListener("submit", (event) => event.preventDefault());
    root.dataset.ready = "true";
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="offload-tiers"]').forEach(once(setup)));
})();
