// Render TeX to HTML with KaTeX at build time (hooks/katex.py): reads a JSON list of
// {tex, display} on stdin and writes a JSON list of {html} or {error} on stdout.
const katex = require(process.argv[2]);
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(({ tex, display }) => {
    try {
      return { html: katex.renderToString(tex, { displayMode: display, throwOnError: true }) };
    } catch (error) {
      return { error: error.message };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
