// What the course adds to Material's pages, for readers on touch screens, with a keyboard or
// a screen reader, and in two languages. Plain script, no dependency; it runs on every page.
(function () {
  "use strict";

  // Switching language keeps the section: both languages of a page have the same headings in
  // the same order (tests/test_translations.py), so the section's position carries over.
  var HEADINGS = "article :is(h1, h2, h3, h4, h5, h6)[id]";
  var KEY = "course.section";

  function currentSection() {
    var headings = Array.prototype.slice.call(document.querySelectorAll(HEADINGS));
    var hash = decodeURIComponent(location.hash.slice(1));
    var index = -1;
    headings.forEach(function (heading, position) {
      if (hash ? heading.id === hash
               : heading.getBoundingClientRect().top <= (document.querySelector(".md-header") || {offsetHeight: 0}).offsetHeight + 8) {
        index = position;
      }
    });
    return index;
  }

  // It keeps the page's settings too: a component (the KV cache explorer) keeps them in the
  // query string, which the other language's page reads the same way. The link gets it when
  // it is about to be used, as a component changes it without reloading.
  var SWITCHER = ".md-select__link[hreflang]";
  function carryQuery(event) {
    var link = event.target.closest && event.target.closest(SWITCHER);
    if (!link) return;
    var target = new URL(link.href, location.href);
    target.search = location.search;
    link.href = target.href;
  }
  ["mouseover", "focusin", "click"].forEach(function (type) {
    document.addEventListener(type, carryQuery, true);
  });

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest(SWITCHER);
    if (!link) return;
    var index = currentSection();
    try {
      if (index > 0) {  // 0 is the page's title: nothing to keep
        sessionStorage.setItem(KEY, JSON.stringify({path: new URL(link.href).pathname, index: index}));
      } else {
        sessionStorage.removeItem(KEY);
      }
    } catch (error) { /* no storage: the switch lands at the top, as before */ }
  }, true);

  try {
    var pending = JSON.parse(sessionStorage.getItem(KEY) || "null");
    sessionStorage.removeItem(KEY);
    if (pending && pending.path === location.pathname && !location.hash) {
      var heading = document.querySelectorAll(HEADINGS)[pending.index];
      if (heading) location.replace("#" + encodeURIComponent(heading.id));
    }
  } catch (error) { /* no storage */ }

  // A glossary term on a touch screen: the first tap shows its tooltip (Material shows it
  // while the term holds the focus), a second tap follows the link to the glossary.
  var focusedBeforeTap = null;
  document.addEventListener("pointerdown", function () {
    focusedBeforeTap = document.activeElement;
  }, true);
  document.addEventListener("click", function (event) {
    var term = event.target.closest && event.target.closest("a.glossary-term");
    if (term && window.matchMedia("(hover: none)").matches && focusedBeforeTap !== term) {
      event.preventDefault();
      term.focus();
      focusedBeforeTap = term;
    }
  });

  function afterMaterial() {
    // A table, display math or a notebook cell wider than a phone scrolls in its box: the keyboard
    // must reach it too (Material does so for its own code blocks).
    document.querySelectorAll("article :is(div.arithmatex, .jupyter-wrapper pre, .md-typeset__scrollwrap)").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) {
        box.tabIndex = 0;
      } else {
        box.removeAttribute("tabindex");
      }
    });
  }
  // Material sets the page up before the load event. Widths change once the fonts (KaTeX's
  // among them) have come, and when the window is resized. document.fonts.ready is not used:
  // asking for it while the page loads makes the browser style the whole page once more.
  window.addEventListener("load", afterMaterial);
  var pending;
  function soon() {
    clearTimeout(pending);
    pending = setTimeout(afterMaterial, 200);
  }
  if (document.fonts && document.fonts.addEventListener) document.fonts.addEventListener("loadingdone", soon);
  window.addEventListener("resize", soon);
})();
