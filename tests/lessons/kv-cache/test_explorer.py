"""The KV cache explorer: bad input gets a message in the page's language (on the explorer
alone), and on the lesson page the settings live in the link (tools/benchmark.py reports its
time per input change). In Python: weights
that do not fit leave what needs no card, and the parity contract reads a hostile link as the
page does.

That it shows what explorer.py computes is tests/test_components.py's check, driven by the
component's parity.py.
"""

import re

import pytest
from explorer import Settings, explore, preset_weight_bytes, shown
from hf_config import read_presets

from coursekit import ROOT
from coursekit.browser import component_alone, ready
from coursekit.code import load
from coursekit.components import components

LESSON = {"zh": "/lessons/kv-cache/", "en": "/en/lessons/kv-cache/"}
ROOT_SELECTOR = '[data-component="kv-explorer"]'


def parity():
    folder = components(ROOT)["kv-explorer"].folder
    return load(folder / "parity.py", "parity_kv_explorer")


def open_lesson(page, url: str) -> None:
    page.goto(url, wait_until="load")
    ready(page, ROOT_SELECTOR)


def test_the_parity_contract_starts_from_the_lessons_fence():
    for language in ("zh", "en"):
        lesson = (ROOT / "docs" / "lessons" / f"kv-cache.{language}.md").read_text("utf-8")
        assert f"```kv-explorer\nmodel: {parity().FIRST_MODEL}\n```" in lesson, language


def test_weights_that_do_not_fit_leave_what_needs_no_card():
    qwen = read_presets()["Qwen2.5-14B-Instruct"]
    settings = Settings(qwen.model, qwen.attention_heads, seq_len=8192, batch=4, gpu_gib=24,
                        utilization=0.92, weights_bytes=preset_weight_bytes(qwen, "bf16"))
    shown_ = shown(explore(settings))
    needs_the_card = {"kv_memory_gib", "num_blocks", "max_concurrency", "sequences",
                      "mha_sequences"}
    assert {key for key, value in shown_.items() if value == "—"} == needs_the_card
    assert shown_["bytes_per_token"] == "196,608"  # 2 × 48 layers × 8 × 128 × 2
    assert shown_["gib_total"] == "6.00"  # 196,608 × 8,192 × 4 bytes
    assert shown_["weight_memory_gib"] == "27.51"


def test_hostile_links_fall_back_as_the_page_does():
    contract = parity()
    assert contract.ignored({"kv_dtype": "bogus", "model": "nope", "gpu": "80"}) == [
        "model", "kv_dtype"]
    assert contract.expected({"kv_dtype": "bogus"}) == contract.expected({})
    # A number its field does not take falls back to the field's own, with a note.
    for state in ({"seq_len": "1e308"}, {"layers": "1e300"}, {"batch": "-1"},
                  {"batch": "2.5"}, {"seq_len": "inf"}, {"seq_len": "1_000"}):
        assert contract.expected(state) == contract.expected({}), state
        assert contract.ignored(state) == list(state), state
    assert contract.link_notes({"seq_len": "abc", "batch": "-1", "model": "nope"}) == [
        ("link_choice", "model", {"fallback": contract.FIRST_MODEL}),
        ("link_int", "seq_len", {"max": "10,000,000", "fallback": "8192"}),
        ("link_int", "batch", {"max": "100,000", "fallback": "1"})]
    assert contract.expected({"seq_len": "1e4"}) == contract.expected({"seq_len": "10000"})
    assert contract.expected({"seq_len": "１０，０００"}) == contract.expected({"seq_len": "10000"})
    # A preset's architecture changed by the link: a custom model, as typing makes it.
    assert contract.page_form({"layers": "40"})[0]["model"] == "custom"
    assert contract.page_form({"layers": "28.0"})[0]["model"] == contract.FIRST_MODEL


def test_most_parity_cases_show_numbers():
    contract = parity()
    cases = contract.cases()
    assert sum(contract.expected(state) == "error" for state in cases) < len(cases) // 4


@pytest.mark.parametrize(("language", "message"), [
    ("zh", "层数：请输入 1 到 1,000 之间的整数。"),
    ("en", "Layers: enter a whole number from 1 to 1,000.")])
def test_bad_input_gets_a_message_in_the_page_language(page, site, site_url, language, message):
    """Once the field is left (issue 40: calm fields) it says what it takes and that the
    results keep the value from before the edit, which they still show."""
    component_alone(page, site_url, site, LESSON[language], "kv-explorer")("")
    field = page.locator('input[name="layers"]')
    before, results = field.input_value(), page.locator(".kv-results").inner_text()
    for bad in ("0", "-3", "2.5", "", "1001", "1e300"):
        field.fill(bad)
        field.blur()
        assert page.locator(".kv-invalid").text_content().startswith(message + " ")
        assert before in page.locator(".kv-invalid").text_content()
        assert page.locator(".kv-results").inner_text() == results
    assert not re.search(r"NaN|Infinity", page.locator(ROOT_SELECTOR).inner_text())
    field.fill("28")
    assert page.locator(".kv-invalid").is_hidden() and field.get_attribute("aria-invalid") is None


def test_settings_live_in_the_link(page, site_url):
    open_lesson(page, site_url + LESSON["zh"])
    page.select_option('select[name="model"]', "Llama-3.1-8B-Instruct")
    page.select_option('select[name="kv_dtype"]', "1:fp8")
    page.fill('input[name="seq_len"]', "32768")
    shown = page.locator('[data-key="sequences"]').text_content()
    shared = page.evaluate("location.href")  # page.url can lag behind history.replaceState
    assert "model=Llama-3.1-8B-Instruct" in shared and "seq_len=32768" in shared
    other = page.context.new_page()
    open_lesson(other, shared)
    assert other.locator('select[name="kv_dtype"]').input_value() == "1:fp8"
    assert other.locator('[data-key="sequences"]').text_content() == shown
