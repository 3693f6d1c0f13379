// The request timeline. data.py gives each field's limits and the fence's values; the
// arithmetic follows snippets/serving-metrics/serving_metrics.py (vllm bench serve's
// calculate_metrics, with numpy's pairwise sums and linear interpolation), and parity.py
// says what the page must show for each link. Texts go in with textContent only.
(() => {
  const { fill, element, number, whole, fixed, share, attempt, Refused, fieldLabel, InvalidFields,
          LinkValues, fallbackNote, calm, compact, once } = courseKit;
  const MS = 1000;
  const FIELDS = ["requests", "ttft", "tpot", "p"];
  const NAMES = "ABCDEFGH";
  const two = (x) => fixed(x, 2);

  // serving_metrics._pairwise_sum: numpy's sum of float64, to the last bit.
  function pairwiseSum(values) {
    const n = values.length;
    if (n < 8) {
      let total = 0;
      for (const value of values) total += value;
      return total;
    }
    if (n <= 128) {
      const sums = values.slice(0, 8);
      const full = n - (n % 8);
      for (let i = 8; i < full; i += 8) {
        for (let j = 0; j < 8; j += 1) sums[j] += values[i + j];
      }
      let total = ((sums[0] + sums[1]) + (sums[2] + sums[3])) +
        ((sums[4] + sums[5]) + (sums[6] + sums[7]));
      for (let i = full; i < n; i += 1) total += values[i];
      return total;
    }
    let half = Math.floor(n / 2);
    half -= half % 8;
    return pairwiseSum(values.slice(0, half)) + pairwiseSum(values.slice(half));
  }
  const mean = (values) => (values.length ? pairwiseSum(values) / values.length : 0);
  const sorted = (values) => [...values].sort((a, b) => a - b);
  function median(values) {
    const s = sorted(values);
    if (!s.length) return 0;
    const middle = Math.floor(s.length / 2);
    return s.length % 2 ? s[middle] : (s[middle - 1] + s[middle]) / 2;
  }
  // np.percentile's linear interpolation, numpy's _lerp included.
  function percentile(values, p) {
    const s = values.length ? sorted(values) : [0];
    const position = (s.length - 1) * (p / 100);
    const below = Math.floor(position);
    const above = Math.min(below + 1, s.length - 1);
    const t = position - below;
    const [a, b] = [s[below], s[above]];
    return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
  }

  // serving_metrics.request_metrics, times in seconds.
  function requestMetrics(sent, times) {
    const ttft = times[0] - sent;
    const e2el = times[times.length - 1] - sent;
    const n = times.length;
    return {
      ttft, e2el, n,
      tpot: n > 1 ? (e2el - ttft) / (n - 1) : 0,
      itls: times.slice(1).map((t, i) => t - times[i]),
    };
  }

  // A Chinese input method's separators as the ASCII ones: ／ and 、 (the listing comma,
  // what its key for / or \\ types) join a request's times as / does, ； its requests as ;
  // does, and so does a line break (Enter in the field). ， stays the comma number() groups
  // digits with (８，１９２). parity.py: SEPARATORS.
  const SEPARATORS = { "\uff0f": "/", "\u3001": "/", "\uff1b": ";", "\n": ";" };
  const plainSeparators = (text) => text.trim().replace(/\r/g, "")
    .replace(/[\uff0f\u3001\uff1b\n]/g, (c) => SEPARATORS[c]);

  // The requests a text holds, each [send time, token times...] in ms, or null.
  function parse(text, limits) {
    const runs = plainSeparators(text).split(";");
    if (runs.length < limits.requests[0] || runs.length > limits.requests[1]) return null;
    const parsed = [];
    for (const run of runs) {
      const times = run.split("/").map((word) => whole(word, limits.ms));
      if (times.includes(null) || times.length - 1 < 1 ||
          times.length - 1 > limits.tokens[1]) return null;
      if (times.some((t, i) => i > 0 && t < times[i - 1])) return null;
      parsed.push(times);
    }
    return parsed;
  }

  function compute(v) {
    const requests = v.requests.map((t) => requestMetrics(t[0] / MS,
                                                          t.slice(1).map((x) => x / MS)));
    // vllm bench serve's clock starts with the run (t = 0), before the first send.
    const duration = Math.max(...v.requests.map((t) => t[t.length - 1])) / MS;
    if (duration <= 0) throw new Refused("no_duration", {});
    const good = requests.map((r) => v.ttft / MS >= r.ttft && v.tpot / MS >= r.tpot);
    const series = {
      ttft: requests.map((r) => r.ttft),
      tpot: requests.filter((r) => r.n > 1).map((r) => r.tpot),
      itl: requests.flatMap((r) => r.itls),
      e2el: requests.map((r) => r.e2el),
    };
    const shown = { duration: two(duration * MS),
                    goodput: two(good.filter(Boolean).length / duration) };
    for (const [name, values] of Object.entries(series)) {
      shown[`mean_${name}`] = two(mean(values) * MS);
      shown[`median_${name}`] = two(median(values) * MS);
      shown[`p_${name}`] = two(percentile(values, v.p) * MS);
    }
    requests.forEach((r, i) => {
      shown[`ttft-${i}`] = two(r.ttft * MS);
      shown[`tpot-${i}`] = two(r.tpot * MS);
      shown[`e2el-${i}`] = two(r.e2el * MS);
      shown[`good-${i}`] = good[i] ? "✓" : "✗";
    });
    return shown;
  }

  function draw(root, runs, shown) {
    const body = root.querySelector(".rm-requests tbody");
    body.replaceChildren(...runs.map((_, i) => {
      const row = element("tr", null);
      row.append(element("td", NAMES[i]));
      for (const key of ["ttft", "tpot", "e2el", "good"]) {
        const cell = element("td", null);
        cell.append(element("output", shown[`${key}-${i}`], { "data-key": `${key}-${i}` }));
        row.append(cell);
      }
      return row;
    }));
    const start = Math.min(...runs.map((t) => t[0]));
    const span = Math.max(...runs.map((t) => t[t.length - 1])) - start;
    const at = (ms) => `${(100 * (ms - start)) / span}%`;
    root.querySelector(".rm-timeline").replaceChildren(...runs.map((t, i) => {
      const track = element("div", null, { class: "rm-track" });
      const ttft = element("span", null, { class: "rm-ttft" });
      ttft.style.left = at(t[0]);
      ttft.style.width = `${(100 * (t[1] - t[0])) / span}%`;
      track.append(ttft, ...t.slice(1).map((ms) => {
        const tick = element("span", null, { class: "rm-tick" });
        tick.style.left = at(ms);
        return tick;
      }));
      const row = element("div", null, { class: "rm-row" });
      row.append(element("span", NAMES[i], { class: "rm-name" }), track);
      return row;
    }));
  }

  function setup(root) {
    // data.py's limits and the fence's values, and labels.yml's messages.
    const [limits, defaults, messages] = ["limits", "defaults", "messages"]
      .map((key) => JSON.parse(root.dataset[key]));
    const [form, error, invalidLine] = [".rm-form", ".rm-error", ".rm-invalid"]
      .map((selector) => root.querySelector(selector));
    const invalid = new InvalidFields(invalidLine);
    const field = (name) => form.elements.namedItem(name);
    // A field's visible label (labels.yml's, in the page's language), for its message.
    compact(root);

    // A field's value from a text, or undefined where the page does not take it.
    const read = (name, text) => {
      let value;
      if (name === "requests") value = parse(text, limits);
      else if (name === "p") {
        value = number(text);
        if (value !== null && !(value >= limits.p[0] && value <= limits.p[1])) value = null;
      } else value = whole(text, limits[name]);
      return value ?? undefined;
    };

    // The link's values; where it has none or one the page does not take, the fence's, and
    // the kit's note names those (the fields then hold the fence's).
    const link = new LinkValues(defaults);
    const values = {};
    for (const name of FIELDS) values[name] = link.read(name, (text) => read(name, text));
    // What the link holds of a value: its ASCII digits, as the page read them.
    const written = (name, value = values[name]) => (name === "requests"
      ? value.map((times) => times.join("/")).join(";") : String(value));
    for (const name of FIELDS) {
      field(name).value = link.fallback.includes(name) || !link.params.has(name)
        ? defaults[name] : link.params.get(name);
    }
    const showFallback = fallbackNote(root, messages, limits, "");
    showFallback(link.fallback);

    function show() {
      const shown = attempt(() => compute(values), error, [...root.querySelectorAll(".rm-view")],
                            messages);
      if (shown !== null) {
        draw(root, values.requests, shown);
        for (const output of root.querySelectorAll("output[data-key]")) {
          output.textContent = shown[output.dataset.key];
        }
      }
      root.dataset.ready = "";
    }

    // A value typed that the page does not take marks its field once typing pauses, and the
    // page keeps the value from before the edit (the kit's calm()), which the message names.
    calm(form, invalid, {
      current: (input) => values[input.name],
      read: (input) => read(input.name, input.value),
      take: (input, value) => {
        values[input.name] = value;
        show();
        share(Object.fromEntries(FIELDS.map((name) => [name, written(name)])));
        showFallback([]); // the link no longer holds the values the note is about
      },
      message: (input, kept) => fill(input.name === "requests" ? root.dataset.invalidRequests
        : root.dataset.invalid, { label: fieldLabel(input), least: limits[input.name]?.[0],
                                  most: limits[input.name]?.[1], kept: written(input.name, kept) }),
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    show();
  }

  document$.subscribe(() =>
    document.querySelectorAll('[data-component="request-metrics"]').forEach(once(setup)));
})();
