"""Render a ```kv-explorer fence as the KV cache explorer, labelled in the page's language.

The fence body names the model presets file (`presets: kv-cache/model_presets.json`, looked up
in the snippet folders) and the preset shown first (`model: ...`); the presets go into the page,
so the widget needs no request. Labels and messages come from `extra.kv_explorer` of the
language being built (mkdocs.yml).
"""

import html
import json
import re
from pathlib import Path

import yaml
from mkdocs.exceptions import PluginError

FENCE = re.compile(r"^```kv-explorer[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
GPUS = {"RTX 4090 (24 GB)": 24, "RTX 3090 (24 GB)": 24, "L40S (48 GB)": 48,
        "A100 (80 GB)": 80, "H100 (80 GB)": 80}
# (input, kind, default) in the order the form shows them; kind decides the check.
FIELDS = [
    ("layers", "int", 28), ("kv_heads", "int", 4), ("head_dim", "int", 128),
    ("attention_heads", "int", 28), ("kv_lora_rank", "int", 512),
    ("qk_rope_head_dim", "int", 64), ("seq_len", "int", 8192), ("batch", "int", 1),
    ("gpu_gib", "number", 24), ("params_billion", "number", 7.61),
    ("weights_gib", "number", 14), ("utilization", "fraction", 0.92), ("block_size", "int", 16),
]
OUTPUTS = ["bytes_per_token", "kib_per_token", "gib_per_sequence", "gib_total",
           "kv_memory_gib", "num_blocks", "max_concurrency", "sequences", "formula",
           "mha_kib_per_token", "mha_gib_per_sequence", "mha_sequences"]


def _settings(body: str, where: str) -> dict:
    settings = yaml.safe_load(body)
    if not isinstance(settings, dict) or set(settings) != {"presets", "model"}:
        raise PluginError(f"{where}: a kv-explorer fence holds two lines,"
                          " presets: <file in snippets/> and model: <preset shown first>")
    return settings


def _presets(file: str, config, where: str) -> str:
    for base in config.mdx_configs["pymdownx.snippets"]["base_path"]:
        path = Path(base) / file
        if path.is_file():
            return json.dumps(json.loads(path.read_text("utf-8")), ensure_ascii=False)
    raise PluginError(f"{where}: presets file {file} is in no snippet folder")


def _select(name: str, label: str, options: list[tuple[str, str]], chosen: str = "") -> str:
    items = "".join(
        f'<option value="{html.escape(value)}"{" selected" if value == chosen else ""}>'
        f"{html.escape(text)}</option>" for value, text in options)
    return (f'<label class="kv-field" data-field="{name}"><span>{html.escape(label)}</span>'
            f'<select name="{name}">{items}</select></label>')


def widget(body: str, labels: dict, config, where: str) -> str:
    settings = _settings(body, where)
    presets = _presets(settings["presets"], config, where)
    models = [(m["name"], m["name"]) for m in json.loads(presets)["models"]]
    if settings["model"] not in dict(models):
        raise PluginError(f"{where}: kv-explorer model {settings['model']!r} is not a preset")
    parts = [
        _select("model", labels["model"], models + [("custom", labels["custom"])],
                settings["model"]),
        _select("kv_dtype", labels["kv_dtype"],
                [("2", "BF16 / FP16"), ("1:fp8", "FP8"), ("1:int8", "INT8")]),
        _select("gpu", labels["gpu"],
                [(str(gib), name) for name, gib in GPUS.items()] + [("custom", labels["custom"])]),
        _select("weight_dtype", labels["weight_dtype"],
                [("bf16", "BF16"), ("fp8", "FP8"), ("awq", "AWQ 4-bit"),
                 ("custom", labels["custom"])]),
    ]
    for name, kind, default in FIELDS:
        step = "any" if kind != "int" else "1"
        parts.append(
            f'<label class="kv-field" data-field="{name}"><span>{html.escape(labels[name])}</span>'
            f'<input name="{name}" type="number" step="{step}" value="{default}"'
            f' data-kind="{kind}"></label>')
    rows = "".join(f'<tr data-row="{key}"><th>{html.escape(labels[key])}</th>'
                   f'<td><output data-key="{key}"></output></td></tr>' for key in OUTPUTS)
    messages = html.escape(json.dumps(labels["messages"], ensure_ascii=False))
    return (
        f'<div class="kv-explorer" data-messages="{messages}">\n'
        f'<script type="application/json" class="kv-presets">{presets}</script>\n'
        f'<p class="kv-explorer-title"><strong>{html.escape(labels["title"])}</strong></p>\n'
        f'<form class="kv-form">{"".join(parts)}</form>\n'
        f'<p class="kv-error" role="alert" hidden></p>\n'
        f'<table class="kv-results"><tbody>{rows}</tbody></table>\n'
        f'<p class="kv-note">{html.escape(labels["note"])}</p>\n'
        "</div>\n"
    )


def on_page_markdown(markdown, page, config, files):
    if "```kv-explorer" not in markdown:
        return markdown
    labels = config.extra["kv_explorer"]
    where = page.file.src_uri
    markdown = FENCE.sub(lambda match: widget(match[1], labels, config, where), markdown)
    if "```kv-explorer" in markdown:
        raise PluginError(f"{where}: a kv-explorer fence must start at the beginning of a line"
                          " (not inside tabs, lists or admonitions)")
    return markdown
