// A code block's colours, put in when the block nears the screen (or the page is printed).
// The page ships each block's text plain and its colours as runs on the <code> element
// (hooks/code_tokens.py): styling every token of a lesson at load was most of the work a phone
// did to show it. The text is the same either way, so nothing moves.
(function () {
  "use strict";

  // "kn.4 1 nn.12": a span of class kn over 4 characters, 1 plain, a span of class nn over 12.
  function colour(code) {
    var runs = code.getAttribute("data-colours");
    code.removeAttribute("data-colours");
    // Text Material's search marked (?h=...) keeps its marks, uncoloured.
    if (!runs || code.firstElementChild) return;
    var text = code.textContent;
    var at = 0;
    var pieces = document.createDocumentFragment();
    runs.split(" ").forEach(function (run) {
      var dot = run.lastIndexOf(".");
      var length = Number(run.slice(dot + 1));
      var piece = text.slice(at, at + length);
      at += length;
      if (dot < 0) {
        pieces.appendChild(document.createTextNode(piece));
      } else {
        var span = document.createElement("span");
        span.className = run.slice(0, dot);
        span.textContent = piece;
        pieces.appendChild(span);
      }
    });
    if (at === text.length) code.replaceChildren(pieces);  // else the runs are not this text's
  }

  // After the load event, when Material has set the page up: colouring blocks while it does
  // would have it style them once more.
  function start() {
    var codes = Array.prototype.slice.call(document.querySelectorAll("div.highlight > pre > code[data-colours]"));
    if (!("IntersectionObserver" in window)) {
      codes.forEach(colour);
      return;
    }
    // A screen ahead, either way: a reader scrolling sees colours, not the switch.
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        observer.unobserve(entry.target);
        colour(entry.target.querySelector(":scope > code"));
      });
    }, {rootMargin: "100% 0px"});
    codes.forEach(function (code) { observer.observe(code.parentNode); });
    window.addEventListener("beforeprint", function () {
      observer.disconnect();
      codes.forEach(colour);
    });
  }
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
