// The example component: blocks for a number of tokens, as speculative_decoding.py computes them.
(() => {
  function setup(root) {
    const input = root.querySelector("input[name=tokens]");
    const output = root.querySelector("[data-key=blocks]");
    const error = root.querySelector("[role=alert]");
    const blockSize = Number(root.dataset.blockSize);
    const shared = new URLSearchParams(location.search).get("tokens");
    if (shared !== null) input.value = shared;

    function update() {
      const text = input.value.trim();
      const tokens = Number(text);
      const ok = /^\d+$/.test(text) && Number.isSafeInteger(tokens);
      error.hidden = ok;
      output.hidden = !ok;
      output.value = ok ? String(Math.ceil(tokens / blockSize)) : "";
      root.dataset.ready = "true";
    }
    input.addEventListener("input", () => {
      update();
      const state = new URLSearchParams(location.search);
      state.set("tokens", input.value);
      history.replaceState(null, "", `${location.pathname}?${state}${location.hash}`);
    });
    update();
  }
  document$.subscribe(() =>
    document.querySelectorAll('[data-component="speculative-decoding-blocks"]').forEach(setup));
})();
