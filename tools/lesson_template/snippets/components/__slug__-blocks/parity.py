"""The component's parity contract: for each link, what the page must show, computed
with %%module%%.py (the browser tests check every case)."""

import coursekit.components as kit
from %%module%% import blocks_needed

DEFAULTS = {"tokens": "100"}  # the fence on the lesson page
# Full-width digits and commas, as a Chinese input method types them (the reader tests'
# data, coursekit/components.py: CONTRACT): a link, the same link in ASCII, and a field
# with what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"tokens": "１，０００"},
    "ascii": {"tokens": "1000"},
    "typed": ("tokens", "１７", "17"),
}
# The key results the compact layout keeps in view while a reader edits.
KEY_RESULTS = ['[data-key="blocks"]']
# A wrong formula the check must catch: rounding down instead of up.
BROKEN = ("Math.ceil(tokens / blockSize)", "Math.floor(tokens / blockSize)")


def cases() -> list[dict[str, str]]:
    taken = ["0", "1", "16", "17", "1,000", "１，０００", "１７", "1e3"]
    refused = ["-1", "2.5", "", "abc"]
    return [{}] + [{"tokens": tokens} for tokens in taken + refused]


def expected(state: dict[str, str]) -> dict[str, str] | str:
    text = (DEFAULTS | state)["tokens"]
    tokens = kit.read_whole(text, 0, 2**53 - 1)  # component-kit.js: whole
    return "error" if tokens is None else {"blocks": str(blocks_needed(tokens))}
