"""This lesson's chart (coursekit/charts.py): `npm run charts` draws it into charts/.

The example request of sampling.py, stage by stage: each stage's probabilities over the
eight tokens (a token at -inf has probability 0)."""

from sampling import EXAMPLE, LOGITS, OUTPUT, PROMPT, VOCAB, sample, softmax

STAGES = ["raw", "penalties", "temperature", "min_p", "top_k", "top_p"]


def charts() -> dict[str, dict]:
    stages = sample(LOGITS, EXAMPLE, PROMPT, OUTPUT)["stages"]
    return {
        "sampling-stages": {
            "title": {
                "zh": "同一组 logits 经过采样的每一步",
                "en": "One logits vector through each sampling step",
            },
            "x": {
                "label": {"zh": "token 编号", "en": "Token id"},
                "ticks": [list(range(len(VOCAB))), VOCAB],
            },
            "y": {"label": {"zh": "概率", "en": "Probability"}},
            "series": [
                {
                    "label": name,
                    "x": list(range(len(VOCAB))),
                    "y": softmax(stages[name]),
                }
                for name in STAGES
            ],
        }
    }
