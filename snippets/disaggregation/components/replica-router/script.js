// The replica router: a view over router.js, router.py's JavaScript twin
// (courseModules.router, on the scheduler's and the prefix cache's twins), which routes
// the link's requests one after another to replicas of lesson 3's scheduler on lesson 5's
// prefix cache; tests/lessons/disaggregation/test_router_twin.py holds the twin to the
// Python. Between two requests every busy replica runs `gap` engine steps, and a chat's
// next turn waits until its answer is back (the twin has no clock: parity.py runs the
// same loop on router.py). parity.py says what the page must show for each link, and the
// tests check it in Chromium. The kit's stepper runs the link, the presets, the form and
// the steps. Texts go in with textContent only.
(() => {
  const { fill, element, whole, fixed, once, stepper, compact } = courseKit;
  const { Replica, choose, POLICIES, BLOCK_SIZE, PREFIX_BLOCKS } = courseModules.router;
  const { Request } = courseModules.scheduler;
  const { block_hashes } = courseModules.prefix_cache;
  const SETTINGS = ["policy", "replicas", "blocks", "gap"];

  // The link's requests (such as 1a: chat a on system prompt S1), one space apart, or null.
  function readRequests(text, world) {
    const found = text.split(" ").filter(Boolean);
    const [least, most] = world.limits.requests;
    if (found.length < least || found.length > most) return null;
    const ok = found.every((w) => w.length === 2 && Object.hasOwn(world.systems, w[0]) && world.chats.includes(w[1]));
    return ok ? found : null;
  }

  // Each request in turn: the loads the router sees, the replica it chooses, the tokens
  // that replica caches of the prompt (parity.py: run).
  function simulate({ settings, workload }, world) {
    const replicas = [];
    for (let i = 0; i < settings.replicas; i += 1) replicas.push(new Replica(`R${i}`, settings.blocks));
    const history = new Map(); // chat -> its tokens up to its last answer
    const inFlight = new Map(); // request id -> [chat, prompt]
    const answering = new Set(); // chats whose answer is not back yet
    const turns = new Map();
    const rows = [];
    const answer = [];
    for (let k = 0; k < world.output; k += 1) answer.push(-1 - k); // as the scheduler samples it

    const stepAll = () => {
      for (const replica of replicas) {
        if (!replica.busy) continue;
        for (const id of replica.step()) {
          const [chat, prompt] = inFlight.get(id);
          inFlight.delete(id);
          answering.delete(chat);
          history.set(chat, [...prompt, ...answer]);
        }
      }
    };

    workload.forEach((chat, number) => {
      if (number) for (let s = 0; s < settings.gap; s += 1) stepAll();
      while (answering.has(chat)) stepAll();
      const { base, stride, tokens } = world.question;
      const question = [];
      for (let k = 0; k < tokens; k += 1) question.push(base + stride * number + k);
      const prompt = [...(history.get(chat) ?? world.systems[chat[0]]), ...question];
      const loads = replicas.map((r) => r.load);
      const index = choose(settings.policy, replicas, prompt, number, world.prefixNumbers);
      // prefix_cache.py's lookup refuses the answers' token ids (-1 - k): _hit is lookup
      // without that check, in both languages
      const cached = replicas[index].cache._hit(prompt, null)[1];
      const id = `q${number}`;
      replicas[index].add(new Request(id, prompt.length, world.output, 0, prompt));
      inFlight.set(id, [chat, prompt]);
      answering.add(chat);
      turns.set(chat, (turns.get(chat) ?? 0) + 1);
      rows.push({ chat, turn: turns.get(chat), replica: index, loads, cached, tokens: prompt.length });
    });
    return rows;
  }

  const ratio = (rows) => [rows.reduce((s, r) => s + r.cached, 0), rows.reduce((s, r) => s + r.tokens, 0)];

  function setup(root) {
    compact(root);
    const json = (name) => JSON.parse(root.dataset[name]);
    const texts = json("texts");
    const systems = json("systems");
    const prefixNumbers = new Map(Object.entries(json("prefixNumbers")).map(([name, number]) => [
      block_hashes(systems[name], BLOCK_SIZE)[PREFIX_BLOCKS - 1], BigInt(number)]));
    const world = {
      systems, prefixNumbers, limits: json("limits"), chats: root.dataset.chats,
      output: Number(root.dataset.output), question: json("question"),
    };
    const choices = { blocks: json("blocks"), gap: json("gaps") };
    const field = root.querySelector('.rr-requests input');
    const send = root.querySelector(".rr-send");
    const table = root.querySelector(".rr-replicas tbody");
    const trace = root.querySelector(".rr-trace");
    const key = (name) => root.querySelector(`[data-key="${name}"]`);

    function read(name, text) {
      if (name === "policy") return POLICIES.includes(text) ? text : undefined;
      if (name === "requests") return readRequests(text, world) ?? undefined;
      if (name === "replicas") return whole(text, world.limits.replicas) ?? undefined;
      const value = whole(text, [1, choices[name].at(-1)]);
      return choices[name].includes(value) ? value : undefined;
    }

    // The request shown: where it went and what it hit; each replica's requests, the load
    // the router saw, its hits; the requests sent so far.
    function show(result, model) {
      if (!result) return;
      const step = model.step;
      const row = result[step];
      const before = result.slice(0, step + 1);
      const [cached, tokens] = ratio(before);
      key("step").textContent = `q${step}`;
      key("request").textContent = row.chat;
      key("turn").textContent = String(row.turn);
      key("replica").textContent = `R${row.replica}`;
      key("cached").textContent = `${row.cached}/${row.tokens}`;
      key("total").textContent = `${cached}/${tokens}`;
      key("rate").textContent = `${fixed(cached / tokens * 100, 1)}%`;
      table.replaceChildren(...row.loads.map((load, i) => {
        const took = before.filter((r) => r.replica === i);
        const [hit, prompt] = ratio(took);
        const tr = element("tr", null, i === row.replica ? { class: "rr-chosen", "aria-current": "true" } : {});
        tr.append(element("th", `R${i}`, { scope: "row" }));
        for (const [name, text] of [["sent", String(took.length)], ["load", String(load)], ["hits", `${hit}/${prompt}`]]) {
          const td = element("td", null);
          td.append(element("output", text, { "data-key": `${name}-R${i}`, "aria-live": "off" }));
          tr.append(td);
        }
        return tr;
      }));
      trace.replaceChildren(...before.map((r, n) => {
        const item = element("li", null, n === step ? { "aria-current": "step" } : {});
        const go = element("button", null, { type: "button", title: fill(texts.show, { q: `q${n}` }) });
        go.append(element("span", `q${n} ${r.chat}`, { class: "rr-q" }), " → ",
                  element("output", `R${r.replica} ${r.cached}/${r.tokens}`, { "data-key": `at-q${n}`, "aria-live": "off" }));
        go.addEventListener("click", () => kit.go(n));
        item.append(go);
        return item;
      }));
      send.querySelector("[data-next-turn]").disabled =
        model.workload.length >= world.limits.requests[1];
    }

    // The requests field and the send buttons follow the workload.
    function fillRequests(model, { invalid }) {
      invalid.forget([field]);
      field.value = model.workload.join(" ");
      const full = model.workload.length >= world.limits.requests[1];
      const used = new Set(model.workload.map((w) => w[1]));
      const free = [...world.chats].some((c) => !used.has(c));
      for (const button of send.querySelectorAll("[data-system]")) button.disabled = full || !free;
      send.querySelector("[data-next-turn]").disabled = full;
    }

    const lastRequest = (model) => model.workload.length - 1;
    const kit = stepper(root, "rr", {
      settings: SETTINGS, workload: "requests", read,
      write: (name, value) => (name === "requests" ? value.join(" ") : value),
      run: (model) => simulate(model, world),
      view: [root.querySelector(".rr-view"), root.querySelector(".rr-figures")],
      first: lastRequest, last: lastRequest,
      fill: fillRequests, draw: () => {}, show,
    });
    const { model } = kit;

    // A list the reader typed: the field is marked if the page does not take it, and the
    // page keeps computing with the last valid one.
    field.addEventListener("input", () => {
      const requests = readRequests(field.value.trim(), world);
      const [least, most] = world.limits.requests;
      kit.invalid.mark(field, requests === null ? fill(kit.messages.invalid_requests, { least, most }) : null);
      if (requests === null) return;
      model.workload = requests;
      fillRequests(model, kit);
      kit.changed();
    });
    // Send one more request: a new chat on a system prompt, or the next turn of the chat
    // shown; the page shows it.
    send.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button || button.disabled) return;
      const used = new Set(model.workload.map((w) => w[1]));
      const chat = button.dataset.system
        ? `${button.dataset.system}${[...world.chats].find((c) => !used.has(c))}`
        : model.workload[model.step];
      model.workload = [...model.workload, chat];
      fillRequests(model, kit);
      kit.changed();
      if (model.result) kit.go(model.workload.length - 1);
    });
    root.dataset.ready = "true";
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="replica-router"]').forEach(once(setup)));
})();
