"""Every in-page component shows in Chromium exactly what its lesson's Python code computes.

A component with a parity contract (parity.py in its folder, see coursekit/components.py)
states it as:

    cases() -> list[dict[str, str]]     link query states to open its page with
    expected(state) -> dict | "error"   what each [data-key] element shows, or "error" where
                                        the component's [role=alert] element shows instead
    BROKEN = (old, new)                 a wrong formula: `old` in script.js becomes `new`

The component's script marks its root element data-ready once it has computed.
"""

import shutil

import pytest

from coursekit import ROOT, pages
from coursekit.browser import component_mismatches, serve
from coursekit.components import components, label_problems

CONTRACTS = {name: component for name, component in components(ROOT).items()
             if component.parity() is not None}


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_component_shows_what_python_computes(page, site, site_url, name):
    component = CONTRACTS[name]
    assert component_mismatches(page, site_url, site, component, component.parity()) == []


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_parity_check_catches_a_wrong_formula(page, site, tmp_path, name):
    component = CONTRACTS[name]
    old, new = component.parity().BROKEN
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    scripts = list(broken.rglob(f"assets/components/{name}/script.js"))
    assert scripts, f"the built site has no script.js of {name}"
    for script in scripts:
        text = script.read_text("utf-8")
        assert old in text, f"{script.relative_to(broken)} no longer holds {old!r}: update BROKEN"
        script.write_text(text.replace(old, new), "utf-8")
    # The bare page runs the same script.js as the lesson page: no need to open that again.
    with serve(broken) as base:
        assert component_mismatches(page, base, broken, component, component.parity(),
                                    lesson_page=False), "the check missed it"


def test_every_component_has_a_parity_contract():
    assert [name for name, component in components(ROOT).items()
            if component.parity() is None] == []


def test_components_have_the_same_labels_in_every_language():
    assert label_problems(ROOT, pages.languages(ROOT)) == []
