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
from coursekit.components import KIT, components, label_problems, read_number, read_whole

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
