// The example component: blocks for a number of tokens, as %%module%%.py computes them. The
// component kit (coursekit/component-kit.js, loaded first) reads the number as every
// component does, a Chinese input method's full-width digits (１，０００) too, and keeps the
// result (.ck-summary) in view while the reader edits (compact).
(() => {
  const { whole, share, compact } = window.courseKit;

  function setup(root) {
    compact(root);
    const input = root.querySelector("input[name=tokens]");
    const output = root.querySelector("[data-key=blocks]");
    const error = root.querySelector("[role=alert]");
    const blockSize = Number(root.dataset.blockSize);
    const shared = new URLSearchParams(location.search).get("tokens");
    if (shared !== null) input.value = shared;

    function update() {
      const tokens = whole(input.value, [0, Number.MAX_SAFE_INTEGER]);
      error.hidden = tokens !== null;
      output.hidden = tokens === null;
      output.value = tokens === null ? "" : String(Math.ceil(tokens / blockSize));
      root.dataset.ready = "true";
      return tokens;
    }
    input.addEventListener("input", () => share({ tokens: update() ?? input.value }));
    update();
  }
  document$.subscribe(() =>
    document.querySelectorAll('[data-component="%%slug%%-blocks"]').forEach(setup));
})();
