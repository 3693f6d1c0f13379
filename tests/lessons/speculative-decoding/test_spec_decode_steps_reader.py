"""The speculation stepper on lesson 7's page, in headless Chromium: in Chinese it writes
the separators labels.yml gives for the language. What it shows for every link is
tests/test_components.py's parity check, driven by the component's parity.py."""

import re

from coursekit import ROOT
from coursekit.browser import component_alone
from coursekit.components import component_pages

# A Chinese label followed by an ASCII separator: “这一步产出的 token: on”, “task, k, step”.
ASCII_AFTER_CHINESE = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef] ?[:,] "


def test_the_spec_stepper_in_chinese_takes_its_separators_from_labels_yml(page, site, site_url):
    """The speculation stepper's Chinese page says “：” after its labels and lists a link's
    invalid values with “、”, as labels.yml gives them for each language."""
    path = "/" + component_pages(ROOT)["spec-decode-steps"]  # the Chinese page
    root = '[data-component="spec-decode-steps"]'
    component_alone(page, site_url, site, path, "spec-decode-steps")("task=nope&k=0&step=999")
    assert page.locator(f'{root} [data-key="fallback"]').text_content() == "task、k、step"
    text = page.locator(root).inner_text()
    assert "这一步产出的 token：" in text
    assert re.findall(f".{{8}}{ASCII_AFTER_CHINESE}", text) == []
