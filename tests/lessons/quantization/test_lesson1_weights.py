"""Lesson 1's explorer and charts count a preset's weights layer by layer (explorer.py), before
the reader meets lesson 4's tensor-by-tensor model: both give the same bytes."""

from explorer import preset_weight_bytes
from hf_config import read_presets
from quant_memory import weight_bytes

FORMATS = {"bf16": "bf16", "fp8": "fp8", "awq": "awq-int4-g128"}  # lesson 1's name: lesson 4's


def test_lesson_1_counts_every_preset_as_quant_memory_does():
    for preset in read_presets().values():
        for precision, fmt in FORMATS.items():
            assert preset_weight_bytes(preset, precision) == weight_bytes(preset.name, fmt), (
                preset.name, precision)
