"""This lesson's charts (coursekit/charts.py): `npm run charts` draws them into
charts/."""

from %%module%% import blocks_needed

TOKENS = list(range(0, 65, 4))


def charts() -> dict[str, dict]:
    return {
        "%%slug%%-blocks": {
            "title": {"zh": "token 数与 block 数", "en": "Tokens and blocks"},
            "x": {"label": {"zh": "token 数", "en": "Tokens"}},
            "y": {"label": {"zh": "block 数", "en": "Blocks"}},
            "series": [
                {
                    "label": "block_size 16",
                    "x": TOKENS,
                    "y": [blocks_needed(n) for n in TOKENS],
                }
            ],
        }
    }
