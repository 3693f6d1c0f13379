"""The KV cache explorer in Chromium shows exactly what snippets/kv-cache/explorer.py computes,
for every preset and for random settings; bad input gets a message in the page's language."""

import json
import random
import re
import shutil
import statistics
import sys
from urllib.parse import urlencode

import pytest

from browser import serve
from conftest import edit_file
from pages import ROOT

sys.path.insert(0, str(ROOT / "snippets" / "kv-cache"))
from explorer import WEIGHT_BYTES, Settings, explore  # noqa: E402
from hf_config import from_hf_config  # noqa: E402
from kv_cache_size import GIB, ModelConfig  # noqa: E402

LESSON = {"zh": "/lessons/kv-cache/", "en": "/en/lessons/kv-cache/"}
PRESETS = json.loads((ROOT / "snippets/kv-cache/model_presets.json").read_text())["models"]
DEFAULTS = {"kv_dtype": "2", "gpu": "80", "weight_dtype": "awq", "seq_len": "8192",
            "batch": "4", "utilization": "0.92", "block_size": "16"}


def python_shows(state: dict) -> dict | str:
    """What explorer.py shows for a widget state, or the word 'error'."""
    dtype = int(state["kv_dtype"].split(":")[0])
    preset = next((m for m in PRESETS if m["name"] == state["model"]), None)
    if preset:
        model = from_hf_config(preset["config"], preset["name"], dtype_bytes=dtype)
        heads = preset["config"]["num_attention_heads"]
        params = float(state.get("params_billion", preset["parameters_billion"]))
    else:
        model = ModelConfig("custom", int(state["layers"]), int(state["kv_heads"]),
                            int(state["head_dim"]), dtype)
        heads, params = int(state["attention_heads"]), float(state.get("params_billion", 0))
    gpu = float(state["gpu_gib"]) if state["gpu"] == "custom" else float(state["gpu"])
    if state["weight_dtype"] == "custom":
        weights = int(float(state["weights_gib"]) * GIB)
    else:
        weights = int(params * 1e9 * WEIGHT_BYTES[state["weight_dtype"]])
    try:
        return explore(Settings(model, heads, int(state["seq_len"]), int(state["batch"]), gpu,
                                float(state["utilization"]), weights,
                                int(state["block_size"])))
    except ValueError:
        return "error"


def widget_shows(page, base: str, state: dict) -> dict | str:
    page.goto(f"{base}{LESSON['en']}?{urlencode(state)}", wait_until="load")
    page.wait_for_function("document.querySelector('.kv-explorer').dataset.lastUpdateMs")
    if page.locator(".kv-error").is_visible():
        return "error"
    shown = page.eval_on_selector_all(
        ".kv-results output", "os => os.map(o => [o.dataset.key, o.value])")
    return {key: value for key, value in shown if value != "—"}


def random_state(rng: random.Random) -> dict:
    state = {
        "model": "custom", "layers": rng.randint(1, 96),
        "attention_heads": (heads := rng.choice([8, 16, 28, 32, 40, 64, 128])),
        "kv_heads": rng.choice([h for h in (1, 2, 4, 8, 16, heads) if h <= heads]),
        "head_dim": rng.choice([64, 80, 96, 128, 256]),
        "kv_dtype": rng.choice(["2", "1:fp8", "1:int8"]),
        "seq_len": rng.randint(1, 131072), "batch": rng.randint(1, 64),
        "gpu": "custom", "gpu_gib": round(rng.uniform(8, 192), 2),
        "utilization": round(rng.uniform(0.5, 1.0), 3),
        "block_size": rng.choice([8, 16, 32, 64]),
    }
    if rng.random() < 0.5:
        state |= {"weight_dtype": "custom", "weights_gib": round(rng.uniform(0.5, 60), 2)}
    else:
        state |= {"weight_dtype": rng.choice(["bf16", "fp8", "awq"]),
                  "params_billion": round(rng.uniform(0.5, 80), 2)}
    return {key: str(value) for key, value in state.items()}


STATES = ([DEFAULTS | {"model": m["name"]} for m in PRESETS]
          + [random_state(random.Random(seed)) for seed in range(40)])


def parity_problems(page, base: str) -> list[str]:
    problems = []
    for state in STATES:
        expected, shown = python_shows(state), widget_shows(page, base, state)
        if shown != expected:
            problems.append(f"{urlencode(state)}: page shows {shown}, explorer.py {expected}")
    return problems


@pytest.fixture
def page(chromium):
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def test_widget_matches_python(page, site_url, capsys):
    assert parity_problems(page, site_url) == []
    assert sum(python_shows(s) == "error" for s in STATES) < len(STATES) // 4  # mostly numbers
    # Recompute time per input change, measured in the page: reported, not asserted.
    page.goto(site_url + LESSON["en"], wait_until="load")
    times = []
    for value in range(1000, 1040):
        page.fill('input[name="seq_len"]', str(value))
        times.append(float(page.eval_on_selector(".kv-explorer", "e => e.dataset.lastUpdateMs")))
    with capsys.disabled():
        print(f"\nKV explorer: median {statistics.median(times):.2f} ms, max {max(times):.2f} ms"
              " per input change")


def test_parity_check_catches_a_wrong_formula(page, site, tmp_path):
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    edit_file(broken / "javascripts/kv-explorer.js", ": 2 * v.layers * v.kv_heads", ": v.layers * v.kv_heads")
    with serve(broken) as base:
        problems = parity_problems(page, base)
    assert len(problems) > len(STATES) // 2 and "bytes_per_token" in problems[0]


@pytest.mark.parametrize(("language", "message"), [
    ("zh", "层数：请输入正整数。"), ("en", "Layers: enter a positive whole number.")])
def test_bad_input_gets_a_message_in_the_page_language(page, site_url, language, message):
    page.goto(site_url + LESSON[language], wait_until="load")
    for bad in ("0", "-3", "2.5", ""):
        page.fill('input[name="layers"]', bad)
        assert page.locator(".kv-error").text_content() == message
        assert page.locator(".kv-results").is_hidden()
    assert not re.search(r"NaN|Infinity", page.locator(".kv-explorer").inner_text())
    page.fill('input[name="layers"]', "28")
    assert page.locator(".kv-error").is_hidden()


def test_settings_live_in_the_link(page, site_url):
    page.goto(site_url + LESSON["zh"], wait_until="load")
    page.select_option('select[name="model"]', "Llama-3.1-8B-Instruct")
    page.select_option('select[name="kv_dtype"]', "1:fp8")
    page.fill('input[name="seq_len"]', "32768")
    shown = page.locator('[data-key="sequences"]').text_content()
    shared = page.url
    assert "model=Llama-3.1-8B-Instruct" in shared and "seq_len=32768" in shared
    other = page.context.new_page()
    other.goto(shared, wait_until="load")
    assert other.locator('select[name="kv_dtype"]').input_value() == "1:fp8"
    assert other.locator('[data-key="sequences"]').text_content() == shown
