"""Share a setup (issue 40): every component ends with the kit's line (component-kit.html:
share_link, put there by coursekit/components.py: render) whose button copies the page's
link, which holds the component's setup, and says so. Copying uses the clipboard, with a
visible confirmation; where the browser refuses it, the link shows in a field, selected,
for the reader to copy. Each component is opened alone (coursekit.browser.component_alone)
in both languages, after a change of its setup: a new component needs no edit here."""

import jinja2
import pytest

from coursekit import ROOT
from coursekit.browser import component_alone
from coursekit.components import KIT_TEMPLATE, component_pages, components

ROOTS = {"zh": "/", "en": "/en/"}
NAMES = sorted(components(ROOT))


def share_texts(language: str) -> dict[str, str]:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(KIT_TEMPLATE.parent))
    return environment.get_template(KIT_TEMPLATE.name).module.SHARE[language]


def test_the_share_line_says_the_same_in_both_languages():
    zh, en = share_texts("zh"), share_texts("en")
    assert set(zh) == set(en) and all(zh.values()) and all(en.values())


# A change of setup (a query the page then holds, as a reader's edit leaves it).
CHANGED = "?copied=1"
COPY = """async (root) => {
  history.replaceState(null, '', location.pathname + '?copied=1');
  const line = document.querySelector(root).querySelector('.ck-share');
  line.querySelector('button').click();
  const done = line.querySelector('.ck-share-done');
  for (let i = 0; i < 200 && !done.textContent; i += 1) await new Promise((r) => setTimeout(r, 10));
  const field = line.querySelector('.ck-share-link');
  return {done: done.textContent.trim(), doneShown: done.checkVisibility(), href: location.href,
          what: line.querySelector('.ck-share-what').textContent,
          button: line.querySelector('button').textContent,
          fieldShown: field.checkVisibility(), field: field.value,
          selected: document.activeElement === field && field.selectionStart === 0
            && field.selectionEnd === field.value.length};
}"""
REFUSE_CLIPBOARD = """Object.defineProperty(navigator, 'clipboard', {value: {
  writeText: () => Promise.reject(new DOMException('refused', 'NotAllowedError'))}});"""


@pytest.mark.parametrize("language", ROOTS)
def test_every_component_copies_the_link_to_its_setup(tabs, site, course_url, language):
    texts, pages = share_texts(language), component_pages(ROOT)
    allowed = tabs(width=390, permissions=["clipboard-read", "clipboard-write"])
    refused = tabs(width=390)
    refused.add_init_script(REFUSE_CLIPBOARD)
    for name in NAMES:
        root = f'[data-component="{name}"]'
        for tab in (allowed, refused):
            component_alone(tab, course_url, site, ROOTS[language] + pages[name], name)("")
            assert tab.locator(f"{root} .ck-share").count() == 1, f"{name}: no share line"
            copied = tab.evaluate(COPY, root)
            where = f"{name} {language}"
            assert copied["href"].endswith(CHANGED), where
            assert (copied["button"], copied["what"]) == (texts["button"], texts["what"]), where
            assert copied["doneShown"], f"{where}: no visible confirmation"
            if tab is allowed:
                assert copied["done"] == texts["copied"], where
                assert tab.evaluate("navigator.clipboard.readText()") == copied["href"], where
                assert not copied["fieldShown"], where
            else:
                assert copied["done"] == texts["refused"], where
                assert copied["fieldShown"] and copied["field"] == copied["href"], where
                assert copied["selected"], f"{where}: the link is not selected to copy"
    assert allowed.failed == refused.failed == [] and allowed.off_site == refused.off_site == []
