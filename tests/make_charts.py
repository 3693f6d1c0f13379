"""Draw the KV cache lesson's charts from the calculator, one SVG per chart and language.

Run: npm run charts   (writes docs/assets/charts/<chart>.<language>.svg)
Each SVG carries the numbers it plots; tests/test_charts.py fails when they no longer match
what the calculator computes, so run this again after changing the calculator or the presets.
"""

import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

from pages import ROOT, mkdocs_config  # noqa: E402

sys.path.insert(0, str(ROOT / "snippets" / "kv-cache"))
from explorer import WEIGHT_BYTES, Settings, explore  # noqa: E402
from hf_config import bytes_per_token, presets  # noqa: E402
from kv_cache_size import GIB, ModelConfig  # noqa: E402

CHARTS = ROOT / "docs" / "assets" / "charts"
CONTEXTS = [2**k for k in range(10, 18)]  # 1,024 to 131,072 tokens
QWEN_CONTEXTS = CONTEXTS[:6]  # up to Qwen2.5-7B's own 32,768
MODELS = ["Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct", "Qwen2.5-72B-Instruct",
          "Llama-2-7B (MHA)", "DeepSeek-V3 (MLA)"]
DATA_COMMENT = re.compile(r"<!-- chart-data: (.*?) -->", re.S)
KV_LABELS = {2: "BF16 KV", 1: "FP8 KV"}


def labels() -> dict[str, dict]:
    """Chart labels per language: `extra.charts` of each language in mkdocs.yml."""
    i18n = mkdocs_config(ROOT).plugins["i18n"].config
    return {language.locale: language.extra["charts"] for language in i18n.languages}


def chart_data() -> dict:
    """The numbers both charts plot, computed by the lesson's own code."""
    configs = presets()
    kv = {name: [round(bytes_per_token(configs[name]) * n / GIB, 4) for n in CONTEXTS]
          for name in MODELS}
    qwen = configs["Qwen2.5-7B-Instruct"]
    fit = {}
    for weights in ("bf16", "awq"):
        for dtype in (2, 1):
            model = ModelConfig(qwen.name, qwen.num_layers, qwen.num_kv_heads, qwen.head_dim,
                                dtype)
            fit[f"{weights}/{dtype}"] = [
                int(explore(Settings(model, 28, n, 1, 24, 0.92,
                                     int(7.61 * 1e9 * WEIGHT_BYTES[weights])))["sequences"]
                    .replace(",", ""))
                for n in QWEN_CONTEXTS]
    return {"contexts": CONTEXTS, "kv_gib": kv, "qwen_contexts": QWEN_CONTEXTS,
            "sequences": fit}


def draw(data: dict, labels: dict) -> dict[str, str]:
    plt.rcParams.update({"font.family": ["Noto Sans CJK SC", "DejaVu Sans"],
                         "svg.hashsalt": "kv-cache", "font.size": 9})
    drawn = {}
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    for name, values in data["kv_gib"].items():
        axes.plot(data["contexts"], values, marker="o", markersize=3, label=name)
    axes.set(xscale="log", yscale="log", xlabel=labels["context"], ylabel=labels["gib"],
             title=labels["kv_title"])
    axes.set_xticks(data["contexts"], [f"{n // 1024}k" for n in data["contexts"]])
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=7)
    drawn["kv-vs-context"] = _svg(figure, {"contexts": data["contexts"], "kv_gib": data["kv_gib"]})
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    for key, values in data["sequences"].items():
        weights, dtype = key.split("/")
        label = f"{labels['weights'][weights]} · {KV_LABELS[int(dtype)]}"
        axes.plot(data["qwen_contexts"], values, marker="o", markersize=3, label=label)
    axes.set(xscale="log", yscale="log", xlabel=labels["context"],
             ylabel=labels["sequences"], title=labels["fit_title"])
    axes.set_xticks(data["qwen_contexts"], [f"{n // 1024}k" for n in data["qwen_contexts"]])
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=7)
    drawn["sequences-on-24gb"] = _svg(
        figure, {"qwen_contexts": data["qwen_contexts"], "sequences": data["sequences"]})
    return drawn


def _svg(figure, data: dict) -> str:
    from io import StringIO

    out = StringIO()
    figure.tight_layout()
    figure.savefig(out, format="svg", metadata={"Date": None})
    plt.close(figure)
    comment = f"<!-- chart-data: {json.dumps(data, sort_keys=True)} -->\n"
    svg = out.getvalue()
    return svg.replace("<svg ", comment + "<svg ", 1)


def plotted(svg: str) -> dict:
    match = DATA_COMMENT.search(svg)
    if match is None:
        raise ValueError("this SVG carries no chart data: regenerate it with npm run charts")
    return json.loads(match[1])


def stale_charts(folder: Path = CHARTS) -> list[str]:
    """Committed charts whose numbers are not what the calculator computes now."""
    data = chart_data()
    problems = []
    for language in labels():
        for chart in ("kv-vs-context", "sequences-on-24gb"):
            path = folder / f"{chart}.{language}.svg"
            if not path.is_file():
                problems.append(f"{path.name}: missing; run npm run charts")
                continue
            shown = plotted(path.read_text("utf-8"))
            if any(shown[key] != data[key] for key in shown):
                problems.append(f"{path.name}: plots old numbers; run npm run charts")
    return problems


if __name__ == "__main__":
    CHARTS.mkdir(parents=True, exist_ok=True)
    data = chart_data()
    for language, chart_labels in labels().items():
        for chart, svg in draw(data, chart_labels).items():
            path = CHARTS / f"{chart}.{language}.svg"
            path.write_text(svg, "utf-8")
            print(f"{path.relative_to(ROOT)}: {len(svg) // 1024} KiB")

