"""The KV cache explorer on lesson 1's page as readers use it (issue 10), in headless
Chromium: what it shows when the weights do not fit, where its summary sits on a phone, what
it makes of a link the form never wrote, how its fields show the keyboard's focus, and that
switching language keeps its settings. axe audits it with the rest of the lesson, in the
state where it shows the most (tests/test_readers.py:
test_home_and_lesson_at_each_width_in_both_schemes); every component's full-width digits are
read there too."""

import re
from urllib.parse import unquote, urlencode, urlsplit

import pytest

from coursekit import ROOT
from coursekit.browser import component_alone, fits, link_state, ready
from coursekit.components import component_pages, components, fill

ROOTS = {"zh": "/", "en": "/en/"}
OTHER = {"zh": "en", "en": "zh"}
WIDTHS = {"phone": 390, "desktop": 1280}
PAGE = component_pages(ROOT)["kv-explorer"]  # lessons/kv-cache/


def url(base: str, language: str) -> str:
    return base + ROOTS[language] + PAGE


EXPLORER = '[data-component="kv-explorer"]'
KV_EXPLORER = components(ROOT)["kv-explorer"]
NEEDS_THE_CARD = ["kv_memory_gib", "num_blocks", "max_concurrency", "sequences", "mha_sequences"]


def message(language: str, key: str, **values) -> str:
    """One of the explorer's messages in a language, its {placeholders} filled in."""
    return fill(KV_EXPLORER.labels[language]["messages"][key], **values)


def open_explorer(tab, course_url: str, language: str, query: str = "") -> None:
    tab.goto(url(course_url, language) + query, wait_until="load")
    ready(tab, EXPLORER)


def explorer_alone(tab, site, course_url: str, language: str):
    """The explorer alone, cut from the lesson page in a language: open_link(query) hands it a
    link (coursekit.browser.component_alone). What it does with many links is checked there;
    the lesson page, opened once, shows its layout."""
    return component_alone(tab, course_url, site, ROOTS[language] + PAGE, "kv-explorer")


def outputs(tab) -> dict[str, str]:
    return dict(tab.eval_on_selector_all(
        f"{EXPLORER} [data-key]", "elements => elements.map(e => [e.dataset.key, e.textContent])"))


@pytest.mark.parametrize("language", ROOTS)
def test_explorer_shows_what_needs_no_card_when_the_weights_do_not_fit(tabs, course_url,
                                                                        language):
    tab = tabs(width=WIDTHS["phone"])
    state = {"model": "Qwen2.5-14B-Instruct", "gpu": "24", "weight_dtype": "bf16"}
    open_explorer(tab, course_url, language, "?" + urlencode(state))
    expected = KV_EXPLORER.parity().expected(state)
    assert expected["bytes_per_token"] == "196,608"
    assert outputs(tab) == expected
    assert {key: expected[key] for key in NEEDS_THE_CARD} == dict.fromkeys(NEEDS_THE_CARD, "—")
    assert tab.locator(".kv-results").is_visible() and tab.locator(".kv-error").is_hidden()
    # Which results cannot be computed, and why, in the page's language.
    warning = tab.locator(".kv-warning")
    assert warning.is_visible()
    usable = f"{int(24 * 2**30 * 0.92) / 2**30:.2f}"  # GiB: 24 × gpu_memory_utilization
    assert warning.text_content() == message(language, "no_room", usable=usable,
                                             weights=expected["weight_memory_gib"])
    # The summary: announced, and just above the model picker (the kit's compact layout keeps
    # it on screen while the reader edits any field: test_components.py).
    summary = tab.locator(".kv-summary")
    assert summary.get_attribute("aria-live") == "polite"
    assert tab.locator(".kv-error").get_attribute("role") == "alert"
    assert summary.text_content() == message(language, "summary_no_room",
                                             kib_per_token=expected["kib_per_token"])
    picker = tab.locator('select[name="model"]')
    gap = picker.bounding_box()["y"] - (summary.bounding_box()["y"] + summary.bounding_box()["height"])
    assert 0 <= gap < 24, f"the summary is {gap:.0f}px above the model picker"
    # Picking a model that fits: the summary says so, in view without scrolling.
    picker.evaluate("select => select.scrollIntoView({block: 'center'})")
    picker.select_option("Qwen2.5-7B-Instruct")
    after = KV_EXPLORER.parity().expected(state | {"model": "Qwen2.5-7B-Instruct"})
    assert summary.text_content() == message(language, "summary", **after)
    assert warning.is_hidden()
    top, bottom = summary.evaluate("e => [e.getBoundingClientRect().top,"
                                   " e.getBoundingClientRect().bottom - innerHeight]")
    assert top >= 0 and bottom <= 0, "the summary is out of view"
    picker.select_option("Llama-3.1-70B-Instruct")
    tab.wait_for_function("s => document.querySelector(s).textContent.includes('320.0')",
                          arg=".kv-summary")
    assert warning.is_visible()
    assert tab.failed == [] and tab.off_site == []


IGNORED_CHOICES = [{"kv_dtype": "bogus"}, {"weight_dtype": "bogus"}, {"gpu": "bogus"},
                   {"model": "bogus"},
                   {"model": "<img src=x onerror=alert(1)>", "gpu": "<script>alert(2)</script>",
                    "kv_dtype": "1:fp8", "weight_dtype": "x\" onfocus=\"alert(3)"}]


def link_notes(language: str, state: dict[str, str]) -> list[str]:
    """The explorer's notes, one per value of the link that fell back, in a language."""
    labels = KV_EXPLORER.labels[language]
    return [message(language, key, label=labels[name], name=name, **values)
            for key, name, values in KV_EXPLORER.parity().link_notes(state)]


@pytest.mark.parametrize("language", ROOTS)
def test_explorer_ignores_choices_the_form_does_not_offer(tabs, site, course_url, language):
    tab = tabs(width=WIDTHS["phone"])
    dialogs = []
    tab.on("dialog", lambda dialog: dialogs.append(dialog.message) or dialog.dismiss())
    contract = KV_EXPLORER.parity()
    open_link = explorer_alone(tab, site, course_url, language)
    for state in IGNORED_CHOICES:
        open_link(urlencode(state))
        assert contract.ignored(state), state
        assert tab.locator(".kv-ignored").is_visible(), f"{state}: no note"
        notes = tab.locator(".kv-ignored p").all_text_contents()
        assert notes == link_notes(language, state), state
        assert outputs(tab) == contract.expected(state), state
        for name in ("model", "kv_dtype", "gpu", "weight_dtype"):
            chosen = tab.locator(f'select[name="{name}"]').input_value()
            assert chosen == contract.page_form(state)[0][name] != "", f"{state}: {name}"
        assert tab.locator(f"{EXPLORER} :is(img, script:not([src]))").count() == 0
    assert dialogs == []
    # A link the form wrote has nothing to ignore.
    open_link("kv_dtype=1%3Afp8&gpu=48")
    assert tab.locator(".kv-ignored").is_hidden()
    assert tab.failed == [] and tab.off_site == []


# Numbers no field takes: each falls back to its field's own value with a note, and the results
# show; only numbers each field takes but together too large for the page to compute exactly
# show its error. Its parity contract (components/kv-explorer/parity.py) runs these and more,
# where no link may make it show NaN, Infinity or a runaway number either.
HOSTILE_NUMBERS = ["layers=1e300", "seq_len=" + "9" * 300, "seq_len=NaN", "utilization=1e-400",
                   "gpu=custom&gpu_gib=1e300",
                   "model=custom&layers=1000&kv_heads=1000&head_dim=4096&attention_heads=1000"
                   "&seq_len=10000000&batch=100000"]


@pytest.mark.parametrize("language", ROOTS)
def test_explorer_answers_hostile_numbers_with_a_note_each(tabs, site, course_url, language):
    tab = tabs(width=WIDTHS["phone"])
    contract = KV_EXPLORER.parity()
    open_link = explorer_alone(tab, site, course_url, language)
    for query in HOSTILE_NUMBERS:
        open_link(query)
        state = dict(pair.split("=") for pair in query.split("&"))
        error = tab.locator(".kv-error")
        shown = tab.locator(EXPLORER).inner_text()
        assert not re.search(r"NaN|Infinity|\d{20}", shown.replace(",", "")), f"{query}: {shown}"
        assert tab.evaluate("document.scrollingElement.scrollWidth") <= WIDTHS["phone"], query
        if query == HOSTILE_NUMBERS[-1]:  # every field takes its number: too large together
            assert contract.expected(state) == "error" and error.is_visible()
            assert error.text_content() == message(language, "too_large")
            continue
        assert error.is_hidden() and tab.locator(".kv-results").is_visible(), query
        assert tab.locator(".kv-ignored p").all_text_contents() == link_notes(language, state)
        assert outputs(tab) == contract.expected(state) != "error", query
    # A reader who types such a number gets the field's own message, with its range, once
    # the field is left (issue 40: calm fields), and the value from before the edit is kept.
    layers = tab.locator('input[name="layers"]')
    before = layers.input_value()
    layers.fill("1e300")
    layers.blur()
    label = KV_EXPLORER.labels[language]["layers"]
    assert tab.locator(".kv-invalid").text_content() == " ".join([
        message(language, "int", label=label, max="1,000"), message(language, "kept", kept=before)])
    assert layers.get_attribute("aria-invalid") == "true"
    assert tab.failed == [] and tab.off_site == []


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS)
@pytest.mark.parametrize("language", ROOTS)
def test_explorer_from_a_hand_edited_link_notes_each_bad_value_and_shows_results(
        tabs, site, course_url, language, width):
    """Issue 27: ?seq_len=abc&batch=-1&model=nope showed no results and one error twice,
    with batch=-1 unflagged."""
    tab = tabs(width=width)
    contract = KV_EXPLORER.parity()
    state = {"seq_len": "abc", "batch": "-1", "model": "nope"}
    explorer_alone(tab, site, course_url, language)(urlencode(state))
    where = f"{language} {width}px"
    # Each value fell back to the form's own, and the results show, with no error at all.
    assert tab.locator(".kv-results").is_visible() and tab.locator(".kv-error").is_hidden(), where
    assert tab.locator(".kv-ignored p").count() == 3, f"{where}: not a note per value"
    assert outputs(tab) == contract.expected(state) == contract.expected({}), where
    assert tab.locator(".kv-ignored p").all_text_contents() == link_notes(language, state), where
    assert [name for _, name, _ in contract.link_notes(state)] == ["model", "seq_len", "batch"]
    assert tab.locator(".kv-summary").text_content() == message(
        language, "summary", **contract.expected({})), where
    fields = {name: tab.locator(f'{EXPLORER} [name="{name}"]').input_value()
              for name in ("model", "seq_len", "batch")}
    assert fields == {"model": contract.FIRST_MODEL, "seq_len": "8192", "batch": "1"}, where
    assert tab.locator(f"{EXPLORER} [aria-invalid]").count() == 0, where
    assert tab.evaluate("document.scrollingElement.scrollWidth") <= width, where
    # Once the reader changes a value, the link holds the form's values: the notes go.
    tab.fill('input[name="batch"]', "2")
    assert tab.locator(".kv-ignored").is_hidden(), where
    assert link_state(tab)["batch"] == "2"
    assert tab.failed == [] and tab.off_site == []


# Per row of the explorer's results: its value's lines, the label's lines, and the room
# between the end of the label's text and the value when both share a line.
RESULT_ROWS = """root => [...root.querySelectorAll('.kv-results [data-key]')].map(value => {
  const label = value.closest('[data-row]').firstElementChild;
  const range = document.createRange();
  range.selectNodeContents(label);
  const labelLines = [...range.getClientRects()];
  const last = labelLines[labelLines.length - 1], box = value.getBoundingClientRect();
  const lineHeight = parseFloat(getComputedStyle(value).lineHeight) || 20;
  return {key: value.dataset.key, valueLines: value.getClientRects().length,
          labelHeight: label.getBoundingClientRect().height / lineHeight,
          room: Math.abs(box.top - last.top) < 4 ? box.left - last.right : null,
          right: box.right - root.getBoundingClientRect().right};
})"""


@pytest.mark.parametrize("language", ROOTS)
def test_explorer_results_and_fields_are_readable(tabs, course_url, language):
    """On a phone, and with the window widened to a desktop's (one load for both)."""
    tab = tabs(width=WIDTHS["phone"])
    open_explorer(tab, course_url, language)
    tab.evaluate("document.fonts.ready")
    # The lesson's model, then the model with the longest figures, as a reader picks it.
    for choices in ({}, {"model": "DeepSeek-V3 (MLA)", "gpu": "24", "weight_dtype": "bf16"}):
        for name, value in choices.items():
            tab.select_option(f'{EXPLORER} select[name="{name}"]', value)
        for width in WIDTHS.values():
            tab.set_viewport_size({"width": width, "height": 900})
            where = f"{language} {width}px {choices}"
            assert fits(tab, width), f"{where}: the page scrolls sideways"
            assert outputs(tab) == KV_EXPLORER.parity().expected(choices), where
            assert tab.locator(".kv-results").is_visible(), where
            rows = tab.locator(EXPLORER).evaluate(RESULT_ROWS)
            assert len(rows) == len(KV_EXPLORER.data({"model": "Qwen2.5-7B-Instruct"})["outputs"])
            for row in rows:
                assert row["valueLines"] == 1, f"{where}: {row['key']} broken across lines"
                assert row["labelHeight"] < 3.5, f"{where}: {row['key']}'s label squeezed"
                assert row["room"] is None or row["room"] >= 8, f"{where}: {row['key']} runs" \
                    " into its label"
                assert row["right"] <= 0, f"{where}: {row['key']} sticks out"
            # Fields: 16px at least (a phone zooms into smaller ones).
            sizes = tab.locator(f"{EXPLORER} :is(input, select)").evaluate_all(
                "fields => fields.map(f => parseFloat(getComputedStyle(f).fontSize))")
            assert min(sizes) >= 16, where
    # The course's focus ring: Material takes the outline off inputs, and Chromium's own ring
    # ("auto") is 1px thin.
    tab.locator('select[name="model"]').focus()
    for name in ("kv_dtype", "gpu", "weight_dtype", "layers"):
        tab.keyboard.press("Tab")
        focused = tab.evaluate("""() => {const f = document.activeElement, s = getComputedStyle(f);
            return [f.name, s.outlineStyle, parseFloat(s.outlineWidth)]}""")
        assert focused[0] == name
        assert focused[1] not in ("none", "auto") and focused[2] >= 2, f"{name}: {focused}"


@pytest.mark.parametrize("source", ROOTS)
def test_switching_language_keeps_the_section_and_the_explorer_settings(tabs, site, course_url,
                                                                        source):
    """A reader on a phone, at the lesson's fourth section from a shared link, changes the
    explorer's settings (which sit in that section) and switches language."""
    tab = tabs(width=WIDTHS["phone"])
    ids = {language: re.findall(r'<h2 id="([^"]+)"', (site / ROOTS[language].lstrip("/")
           / PAGE / "index.html").read_text("utf-8")) for language in ROOTS}
    open_explorer(tab, course_url, source, "#" + ids[source][3])
    tab.select_option('select[name="model"]', "Llama-3.1-8B-Instruct")
    tab.select_option('select[name="kv_dtype"]', "1:fp8")
    tab.fill('input[name="seq_len"]', "32768")
    shown = outputs(tab)
    tab.hover(".md-header__option .md-select")
    with tab.expect_navigation(wait_until="load"):
        tab.click(f'.md-select__link[hreflang="{OTHER[source]}"]')
    tab.wait_for_function("location.hash.length > 1")
    ready(tab, EXPLORER)
    assert tab.locator("html").get_attribute("lang") == OTHER[source]
    assert urlsplit(tab.url).path == urlsplit(url(course_url, OTHER[source])).path
    target_section = ids[OTHER[source]][3]
    assert unquote(urlsplit(tab.url).fragment) == target_section
    heading = tab.locator(f'article h2[id="{target_section}"]')
    assert heading.evaluate("h => h.getBoundingClientRect().top") < 200
    assert tab.locator('select[name="model"]').input_value() == "Llama-3.1-8B-Instruct"
    assert tab.locator('input[name="seq_len"]').input_value() == "32768"
    assert outputs(tab) == shown
    assert tab.failed == [] and tab.off_site == []
