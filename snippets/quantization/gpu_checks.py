"""What the GPU job checks of the quantization lab on the RTX 4090 (see
coursekit/gpu_labs.py).

Each of the four Python labs loads Qwen2.5-7B-Instruct in one format and measures the
decode speed of one sequence; lab_quant_check.compare then holds vLLM's log to the
lesson:
- "Model loading took X GiB" (what DeviceMemoryProfiler saw torch allocate while
  loading) against quant_memory.weight_bytes: no lower than the prediction less the
  log's rounding (0.005 GiB), no higher than it plus the rounding, RoPE's 8 MiB cos/sin
  cache and 0.02 GiB of small buffers (Marlin's workspace, the allocator's rounding);
- the linear-kernel line, exactly the one the page names (none for BF16);
- the KV capacity, within lesson 1's calculator's range for the logged KV memory;
- the decode speed: reported as a share of section 3's floor
  (quant_memory.decode_floor_ms, which reads one row of the embedding table per
  sequence), and only held below it, a bandwidth ceiling, never to an exact figure;
- the same at concurrency 256 (lab_quant_check.batch_speed): held below the longer of
  section 3's two floors of a step of 256 sequences, its reads and its 16-bit math;
- lab_awq.py's two speeds against lab_bf16.py's (lab_quant_check.versus): the measured
  ratios next to the floors' (3.15x at concurrency 1, 1.00x at 256), reported only;
- the perplexity on a fixed text, reported; held to what vLLM does with
  prompt_logprobs: both requests compute every token (none read from the prefix cache),
  over the same number of tokens.
The served twin (lab_fp8_serve.sh, started by lab_speed_send.py's check) sets what
lab_fp8.py sets, and is held to the same.
"""

from coursekit import ROOT
from coursekit.vllm_claims import llm_options, serve_options
from lab_quant_check import VARIANTS, compare, versus

# What every variant sets besides the model (and quantization="fp8" for fp8).
ENGINE = {
    "max_model_len": 8192,
    "gpu_memory_utilization": 0.90,
    "max_num_batched_tokens": 2048,
    "max_num_seqs": 256,
}
MODELS = {
    "bf16": "Qwen/Qwen2.5-7B-Instruct",
    "fp8": "Qwen/Qwen2.5-7B-Instruct",
    "awq": "Qwen/Qwen2.5-7B-Instruct-AWQ",
    "gptq": "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4",
}


def expected_options(name):
    options = {"model": MODELS[name], **ENGINE}
    if name == "fp8":
        options["quantization"] = "fp8"
    return options


# What each Python lab printed in this job, by format: lab_awq.py's check compares it
# with lab_bf16.py's.
PRINTED = {}


def held_to_the_lesson(lab, name, title, log_text, speed_text, quality=True):
    rows, problems = compare(name, log_text, speed_text, quality)
    lab.report(title, rows)
    assert not problems, "\n".join(problems)


def python_lab(lab, name):
    script = VARIANTS[name].script
    options = llm_options(lab.folder / script, ROOT)
    assert options == expected_options(name), f"{script} sets {options}"
    run = lab.run_python(script)
    held_to_the_lesson(lab, name, script, run.log, run.stdout)
    PRINTED[name] = run.stdout


def lab_bf16_py(lab):
    python_lab(lab, "bf16")


def lab_fp8_py(lab):
    python_lab(lab, "fp8")


def lab_awq_py(lab):
    python_lab(lab, "awq")
    if "bf16" not in PRINTED:  # lab_bf16.py has not run in this job (pytest -k awq)
        python_lab(lab, "bf16")
    lab.report(
        "lab_awq.py against lab_bf16.py", versus(PRINTED["bf16"], PRINTED["awq"])
    )


def lab_gptq_py(lab):
    python_lab(lab, "gptq")


def lab_speed_send_py(lab):
    """The served twin of lab_fp8.py: the same engine, the speed measured over HTTP."""
    options = serve_options(lab.folder / "lab_fp8_serve.sh")
    assert options == expected_options("fp8"), f"lab_fp8_serve.sh sets {options}"
    sender = (lab.folder / "lab_speed_send.py").read_text("utf-8")
    assert f'MODEL = "{options["model"]}"' in sender, (
        "lab_speed_send.py asks another model"
    )
    with lab.serve("lab_fp8_serve.sh") as server:
        sent = lab.run_python("lab_speed_send.py", server.url)
        log = server.log
    held_to_the_lesson(
        lab,
        "fp8",
        "lab_fp8_serve.sh and lab_speed_send.py",
        log,
        sent.stdout,
        quality=False,
    )


CHECKS = {
    "lab_bf16.py": lab_bf16_py,
    "lab_fp8.py": lab_fp8_py,
    "lab_awq.py": lab_awq_py,
    "lab_gptq.py": lab_gptq_py,
    "lab_speed_send.py": lab_speed_send_py,
}
