"""The KV cache explorer on the lesson page: bad input gets a message in the page's language,
the settings live in the link, and the time per input change is reported.

That it shows what explorer.py computes is tests/test_components.py's check, driven by the
component's parity.py.
"""

import re
import statistics

import pytest

from coursekit import ROOT
from coursekit.code import load
from coursekit.components import components

LESSON = {"zh": "/lessons/kv-cache/", "en": "/en/lessons/kv-cache/"}
ROOT_SELECTOR = '[data-component="kv-explorer"]'


def parity():
    folder = components(ROOT)["kv-explorer"].folder
    return load(folder / "parity.py", "parity_kv_explorer")


def open_lesson(page, url: str) -> None:
    page.goto(url, wait_until="load")
    page.wait_for_selector(f"{ROOT_SELECTOR}[data-ready]", state="attached")


def test_most_parity_cases_show_numbers():
    contract = parity()
    cases = contract.cases()
    assert sum(contract.expected(state) == "error" for state in cases) < len(cases) // 4


def test_time_per_input_change_is_reported(page, site_url, capsys):
    # Measured in the page: reported, not asserted.
    open_lesson(page, site_url + LESSON["en"])
    times = []
    for value in range(1000, 1040):
        page.fill('input[name="seq_len"]', str(value))
        times.append(float(page.eval_on_selector(ROOT_SELECTOR, "e => e.dataset.lastUpdateMs")))
    with capsys.disabled():
        print(f"\nKV explorer: median {statistics.median(times):.2f} ms,"
              f" max {max(times):.2f} ms per input change")


@pytest.mark.parametrize(("language", "message"), [
    ("zh", "层数：请输入正整数。"), ("en", "Layers: enter a positive whole number.")])
def test_bad_input_gets_a_message_in_the_page_language(page, site_url, language, message):
    open_lesson(page, site_url + LESSON[language])
    for bad in ("0", "-3", "2.5", ""):
        page.fill('input[name="layers"]', bad)
        assert page.locator(".kv-error").text_content() == message
        assert page.locator(".kv-results").is_hidden()
    assert not re.search(r"NaN|Infinity", page.locator(ROOT_SELECTOR).inner_text())
    page.fill('input[name="layers"]', "28")
    assert page.locator(".kv-error").is_hidden()


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
