"""Every in-page component shows in Chromium exactly what its lesson's Python code computes.

A component with a parity contract (parity.py in its folder, see coursekit/components.py)
states it as:

    cases() -> list[dict[str, str]]     link query states to open its page with
    expected(state) -> dict | "error"   what each [data-key] element shows, or "error" where
                                        the component's [role=alert] element shows instead
    BROKEN = (old, new)                 a wrong formula: `old` in script.js becomes `new`
    FULL_WIDTH, KEY_RESULTS             what the course-wide reader tests check of it
                                        (coursekit/components.py: CONTRACT)

The component's script marks its root element data-ready once it has computed.
"""

import pytest

from coursekit import ROOT, pages
from coursekit.browser import component_mismatches, fits, page_showing, shown, skip_search
from coursekit.components import (
    KIT,
    components,
    contract_problems,
    key_results,
    label_problems,
    read_number,
    read_whole,
)

# Each contract is loaded by the tests that read it: one that fails to load fails those.
CONTRACTS = {name: component for name, component in components(ROOT).items()
             if (component.folder / "parity.py").is_file()}


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_component_shows_what_python_computes(page, site, site_url, name):
    component = CONTRACTS[name]
    assert component_mismatches(page, site_url, site, component, component.parity()) == []


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_parity_check_catches_a_wrong_formula(page, site, site_url, name):
    component = CONTRACTS[name]
    old, new = component.parity().BROKEN
    scripts = list(site.rglob(f"assets/components/{name}/script.js"))
    assert scripts, f"the built site has no script.js of {name}"
    text = scripts[0].read_text("utf-8")
    assert old in text, f"{scripts[0].relative_to(site)} no longer holds {old!r}: update BROKEN"
    # The browser gets the broken script in place of the site's.
    page.route(f"**/assets/components/{name}/script.js", lambda route: route.fulfill(
        body=text.replace(old, new), content_type="text/javascript"))
    assert component_mismatches(page, site_url, site, component, component.parity(),
                                first_only=True), "the check missed it"


def test_parity_check_catches_what_an_error_leaves_on_screen(page, site, site_url):
    """Under a refused input's error, what the component hid must not show (the parity check
    reads it with coursekit.browser.HIDDEN_SHOWN): here lesson 8's bar, where this once
    happened, draws its [hidden] elements anyway."""
    name = "startup-memory-bar"
    # The style comes from the built site, not from route.fetch(): a handler that fetches can
    # still be waiting when the test moves on ("Response has been disposed", a flake seen once).
    style = next(site.rglob(f"assets/components/{name}/style.css")).read_text("utf-8")
    page.route(f"**/assets/components/{name}/style.css", lambda route: route.fulfill(
        body=style + "\n[data-component] [hidden] { display: block !important; }",
        content_type="text/css"))
    mismatches = component_mismatches(page, site_url, site, CONTRACTS[name],
                                      CONTRACTS[name].parity(), first_only=True)
    assert any("still showing" in mismatch for mismatch in mismatches), mismatches


def test_every_component_has_a_parity_contract():
    """What the course-wide tests read of each component (coursekit/components.py:
    CONTRACT) is in its contract, and a page shows it."""
    assert contract_problems(ROOT) == []


def test_components_have_the_same_labels_in_every_language():
    assert label_problems(ROOT, pages.languages(ROOT)) == []


# Texts a reader may type or a link may hold: ASCII, full-width forms, grouped digits, and
# what no number is.
NUMBER_TEXTS = ["8192", "８１９２", "８，１９２", "8,192", "1,000,000", "1,0000", "12,34", ",123",
                "1,000.5", "0.92", "０．９２", ".5", "5.", "1e4", "１ｅ４", "1E+3", "16.0",
                " 8192", "8192\u3000", "\u30008192 ", "8192\n", "8 192", "+8", "-1", "0x10",
                "NaN", "Infinity", "1e400", "1e-400", "9" * 300, "", "　", "abc", "٣"]


def test_the_kit_reads_numbers_as_its_python_twin(page):
    """component-kit.js: number and whole, in Chromium, against coursekit.components:
    read_number and read_whole, which the parity contracts read links with."""
    page.add_script_tag(path=str(KIT["script.js"]))
    read = page.evaluate("""texts => texts.map(t => [courseKit.number(t),
                                                       courseKit.whole(t, [1, 10000])])""",
                         NUMBER_TEXTS)
    assert dict(zip(NUMBER_TEXTS, read)) == {
        text: [read_number(text), read_whole(text, 1, 10000)] for text in NUMBER_TEXTS}
    assert read_whole("８，１９２", 1, 10000) == 8192 and read_number("1,0000") is None


def test_the_kit_rounds_as_python_formats(page):
    """component-kit.js: fixed against Python's format(): ties (0.125, 0.03125) go to the
    even digit, and every usage a block pool of 2 to 64 blocks shows, to 4 decimals and as
    a percentage to 1, comes out as the parity contracts format it."""
    page.add_script_tag(path=str(KIT["script.js"]))
    cases = [(x, digits) for x in (0.125, 0.375, 2.5, 3.5, 0.5, 0.03125, 1.005, 2.675, 1e-7,
                                   0.0, 1.0, 123456.785, 8.0 / 3)
             for digits in (0, 1, 2, 4)]
    for total in range(1, 64):
        for free in range(total + 1):
            usage = 1.0 - free / total  # block_pool.py: BlockPool.usage
            cases += [(usage, 4), (usage * 100, 1)]
    shown = page.evaluate("cases => cases.map(([x, d]) => courseKit.fixed(x, d))", cases)
    assert [(x, d, s) for (x, d), s in zip(cases, shown) if s != f"{x:.{d}f}"] == []


# The compact layout (issue 27): on a 390x844 phone the components were 1.2 to 3.8 screens
# tall, their results screens away from the fields that change them. Now each keeps its key
# results in a .ck-summary (component-kit.css) that stays on screen while the reader edits.
# Each contract names its key results (KEY_RESULTS; without it, the kit's .ck-summary):
# coursekit/components.py: key_results.
SCREENS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
# A component is at most two and a half phone screens tall, as it opens (its secondary detail
# folded): before the compact layout the prompt sharing component took 3.5 (zh) and 3.8 (en)
# screens, and the explorer and the scheduler about two; now the explorer takes 1.4-1.5, the
# block table 1.2-1.3, the scheduler 1.6-1.8, and prompt sharing, a card per request (a prompt
# field and its blocks, four requests in the lesson's workload), 2.2-2.3.
MOST_SCREENS = 2.5
# For each of a component's controls, in turn, as a reader reaches it: scrolled up to the top
# of the screen (under what stays there: it scrolls clear of that by its scroll-margin),
# scrolled to the bottom, and focused as the keyboard focuses it (from the top of the
# component; the browser scrolls only as far as it must). Each time every key result must be
# on screen, whole, below Material's header, and not covered: what shows at its centre is
# itself; and so must the control's centre (the browser may leave a field's edge off screen).
KEY_RESULTS_IN_VIEW = """([root, keys]) => {
  const top = document.querySelector('.md-header').getBoundingClientRect().bottom;
  const seen = (element, whole = true) => {
    const box = element.getBoundingClientRect();
    const [above, below] = whole ? [box.top, box.bottom] : Array(2).fill(box.top + box.height / 2);
    if (box.height === 0 || above < top - 1 || below > innerHeight + 1) return false;
    const shown = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return shown !== null && (element.contains(shown) || shown.contains(element));
  };
  const component = document.querySelector(root);
  const missing = keys.filter((key) => component.querySelector(key) === null);
  keys = keys.filter((key) => !missing.includes(key));
  // Every fold unfolded: the component at its longest.
  component.querySelectorAll('details').forEach((more) => { more.open = true; });
  const controls = [...component.querySelectorAll(
      'input, select, textarea, button, summary, [tabindex="0"]')]
    .filter((control) => !control.closest('.ck-summary') && control.checkVisibility());
  const missed = [];
  for (const [index, control] of controls.entries()) {
    const name = `${control.tagName.toLowerCase()} ${index} ` +
      `(${control.name || control.getAttribute('aria-label') || control.textContent.trim().slice(0, 20)})`;
    for (const placed of ['start', 'end', 'keyboard']) {
      if (placed === 'keyboard') {
        component.scrollIntoView({block: 'start'});
        document.activeElement?.blur();
        control.focus();
      } else {
        control.scrollIntoView({block: placed});
        control.focus({preventScroll: true});
      }
      const hidden = keys.filter((key) => !seen(component.querySelector(key)));
      if (!seen(control, false)) hidden.push('the control itself');
      if (hidden.length) missed.push(`${name} at the ${placed}: ${hidden.join(', ')} out of view`);
    }
  }
  return {controls: controls.length, missed, missing};
}"""


@pytest.mark.parametrize("language", ["zh", "en"])
def test_lesson_pages_show_what_python_computes_and_keep_key_results_in_view(
        chromium, site, site_url, language):
    """Each lesson page, in Material, shows what Python computes for its component's fence
    (the parity check takes every other case on the component alone), and keeps its key
    results in view while a reader edits. Each page opens on a phone, then its window widens
    to a desktop's (one load for everything: a lesson page load costs most of a second of
    CPU)."""
    context = chromium.new_context(viewport=SCREENS["phone"])
    tab = context.new_page()
    skip_search(tab)
    tab.set_default_timeout(15_000)
    problems = []
    try:
        for name in sorted(CONTRACTS):
            keys = key_results(CONTRACTS[name].parity())
            path = page_showing(site, name).removeprefix("/en")
            tab.set_viewport_size(SCREENS["phone"])
            tab.goto(f"{site_url}{'/en' if language == 'en' else ''}{path}", wait_until="load")
            root = f'[data-component="{name}"]'
            assert shown(tab, name) == CONTRACTS[name].parity().expected({}), f"{name} {language}"
            tab.evaluate("document.fonts.ready")
            for screen, viewport in SCREENS.items():
                tab.set_viewport_size(viewport)
                width, height = viewport["width"], viewport["height"]
                assert fits(tab, width), f"{name} {language}: wider than {width}px"
                where = f"{name} {language} {width}x{height}"
                tall = tab.locator(root).evaluate("root => root.getBoundingClientRect().height")
                if screen == "phone" and tall > MOST_SCREENS * height:
                    problems.append(f"{where}: {tall:.0f}px tall")
                found = tab.evaluate(KEY_RESULTS_IN_VIEW, [root, keys])
                assert found["controls"] > 0, f"{where}: no control found"
                assert found["missing"] == [], f"{where}: no key result matches {found['missing']}"
                problems += [f"{where}: {missed}" for missed in found["missed"]]
    finally:
        context.close()
    assert problems == []


def test_a_component_sets_up_when_it_comes_near_the_screen(page, site, site_url):
    """A lesson's component sits far down its page; set up as the page loaded, lesson 5's held
    a phone's main thread for 300 ms (Lighthouse mobile 89; 93 when it waits)."""
    page.set_viewport_size({"width": 390, "height": 844})
    root = '[data-component="prompt-sharing"]'
    page.goto(f"{site_url}{page_showing(site, 'prompt-sharing')}", wait_until="load")
    page.wait_for_timeout(300)
    assert page.locator(f"{root}[data-ready]").count() == 0, "set up while far off the screen"
    page.locator(root).evaluate("root => scrollTo(0, root.getBoundingClientRect().top"
                                " + scrollY - 1.5 * innerHeight)")  # a screen and a half above
    page.wait_for_selector(f"{root}[data-ready]", state="attached")
