"""Controls a finger finds on a phone (issue 40, point 5), in every component the course shows
and on Material's code copy buttons: a tap anywhere in a 44 px band through a control's middle
lands on it (or on its label); a component's actions stay in view without scrolling sideways;
its labels do not break inside a word or an identifier (only after "_", "-" or "/"); a select
shows its options whole. Each page with a component, in each language, is opened once on a
390 px phone and then widened to 1280 px."""

from collections import Counter

import pytest

from coursekit.browser import mount_code_blocks, ready

# Apple's and WCAG 2.5.5's least target: 44 CSS px. A tap is probed 21 px either side of the
# control's middle (a 42 px band: "about 44 px", with a pixel of rounding either side).
REACH = 21
PHONE, DESKTOP = 390, 1280

# The controls a reader taps, and what a tap at each probe point hits; each probe must land
# on the control or on one of its labels. Buttons are probed across too (lesson 7's ◀ was
# 34 px wide); a field or a select is as wide as its text. Each control is brought to the
# middle of the screen, clear of Material's header and a component's sticky summary.
MISSED_TAPS = """(reach) => {
  for (const folded of document.querySelectorAll('[data-component] details')) folded.open = true;
  const missed = [];
  const controls = [...document.querySelectorAll(
    '[data-component] :is(button, select, input, textarea, summary), .md-code__button')];
  for (const control of controls) {
    control.scrollIntoView({block: 'center', inline: 'center'});
    if (!control.checkVisibility()) continue;
    const box = control.getBoundingClientRect();
    const [x, y] = [box.left + box.width / 2, box.top + box.height / 2];
    // The screen's edge bounds every target: a probe past it is taken at the edge.
    const inside = ([px, py]) => [Math.min(Math.max(px, 0), innerWidth - 1), py];
    const probes = [[x, y - reach], [x, y + reach]];
    if (control.matches('button')) probes.push([x - reach, y], [x + reach, y]);
    probes.splice(0, probes.length, ...probes.map(inside));
    const takers = [control, ...(control.labels || [])];
    const misses = probes.filter(([px, py]) => {
      const hit = document.elementFromPoint(px, py);
      return !hit || !takers.some((taker) => taker.contains(hit));
    });
    if (misses.length) {
      const where = control.closest('[data-component]')?.dataset.component || 'code block';
      const name = control.getAttribute('aria-label') || control.getAttribute('name')
        || control.textContent.trim().slice(0, 20) || control.className;
      missed.push(`${where}: ${control.tagName.toLowerCase()}${control.type ? '[' + control.type
        + ']' : ''} "${name}" ${Math.round(box.width)}x${Math.round(box.height)} px`);
    }
  }
  return missed;
}"""

# Words of a component's labels that a line break cuts: a word (a run of letters, digits and
# "_-/." between spaces) may break only after "_", "-" or "/"; Chinese breaks between
# characters. Each piece is measured with a Range: a piece on two lines has two boxes.
BROKEN_WORDS = """() => {
  const broken = new Set();
  const labels = document.querySelectorAll(
    '[data-component] :is(label, dt, th, legend, summary, button, .ck-step, .ck-caption)');
  for (const label of labels) {
    if (!label.checkVisibility()) continue;
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/[A-Za-z0-9_./-]{2,}/g)) {
        for (const piece of word[0].matchAll(/[^_/-]+[_/-]*|[_/-]+/g)) {
          const range = document.createRange();
          const start = word.index + piece.index;
          range.setStart(node, start);
          range.setEnd(node, start + piece[0].length);
          const lines = new Set([...range.getClientRects()].filter((box) => box.width > 0)
            .map((box) => Math.round(box.top)));
          if (lines.size > 1) {
            const where = label.closest('[data-component]').dataset.component;
            broken.add(`${where}: "${word[0]}" breaks inside "${piece[0]}"`);
          }
        }
      }
    }
  }
  return [...broken];
}"""

# A select narrower than its widest option cuts that option's text: its natural width is
# measured on a copy laid out with nothing to squeeze it. An option wider than the component
# itself (a phone) is cut only where the select takes the component's whole width.
CUT_SELECTS = """() => [...document.querySelectorAll('[data-component] select')]
  .filter((select) => select.checkVisibility())
  .map((select) => {
    const copy = select.cloneNode(true);
    copy.style.cssText = 'position:absolute;width:auto;min-width:0;max-width:none;flex:none';
    select.parentElement.append(copy);
    const natural = copy.getBoundingClientRect().width;
    copy.remove();
    const shown = select.getBoundingClientRect().width;
    const box = select.closest('[data-component]');
    const style = getComputedStyle(box);
    const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return shown + 1 < Math.min(natural, room) ? `${select.closest('[data-component]').dataset.component}:`
      + ` select "${select.name}" ${Math.round(shown)} px wide, its options need`
      + ` ${Math.round(natural)} px` : null;
  }).filter(Boolean)"""

# Buttons a component lays out that sit outside the screen or outside the box that holds
# them (a table's action column scrolled off to the right), at the page's own scroll.
BUTTONS_OUT_OF_VIEW = """() => [...document.querySelectorAll('[data-component] button')]
  .filter((button) => button.checkVisibility())
  .filter((button) => {
    const box = button.getBoundingClientRect();
    let clip = {left: 0, right: document.documentElement.clientWidth};
    for (let up = button.parentElement; up; up = up.parentElement) {
      if (getComputedStyle(up).overflowX === 'visible') continue;
      const edge = up.getBoundingClientRect();
      clip = {left: Math.max(clip.left, edge.left), right: Math.min(clip.right, edge.right)};
    }
    return box.left < clip.left - 1 || box.right > clip.right + 1;
  })
  .map((button) => `${button.closest('[data-component]').dataset.component}: button`
    + ` "${button.textContent.trim()}" out of view`)"""


def component_pages(site, language: str) -> list[str]:
    root = site / language if language else site
    pages = sorted({path.parent.relative_to(site).as_posix() for path in root.rglob("index.html")
                    if 'data-component="' in path.read_text("utf-8")
                    and (language or not path.relative_to(site).parts[0] == "en")})
    assert pages, "no page shows a component"
    return pages


@pytest.mark.parametrize("language", ["", "en"])
def test_a_finger_finds_every_control_and_reads_every_label(tabs, site, site_url, language):
    phone = tabs(width=PHONE, has_touch=True, is_mobile=True)
    found = Counter()
    for page in component_pages(site, language):
        phone.set_viewport_size({"width": PHONE, "height": 844})
        phone.goto(f"{site_url}/{page}/", wait_until="load")
        for name in phone.eval_on_selector_all("[data-component]", "all => all.map("
                                               "(root) => root.dataset.component)"):
            ready(phone, f'[data-component="{name}"]')
        mount_code_blocks(phone)
        found.update(f"{page} at {PHONE} px: {each}" for each in phone.evaluate(MISSED_TAPS, REACH))
        for width in (PHONE, DESKTOP):
            phone.set_viewport_size({"width": width, "height": 844})
            phone.evaluate("() => new Promise((done) => requestAnimationFrame(done))")
            for check in (BROKEN_WORDS, CUT_SELECTS, BUTTONS_OUT_OF_VIEW):
                found.update(f"{page} at {width} px: {each}" for each in phone.evaluate(check))
    assert not found, "\n".join(f"{each} (x{count})" if count > 1 else each
                                 for each, count in found.items())
