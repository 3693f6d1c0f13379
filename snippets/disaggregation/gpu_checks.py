"""What the GPU job checks of lesson 12's lab on the RTX 4090 (coursekit/gpu_labs.py):
two vLLM instances of Qwen2.5-7B-Instruct-AWQ share the one card (0.45 of its memory
each), a prefill instance and a decode instance joined by ExampleConnector through a
folder; lab_disagg_send.py plays the proxy. Every request's cached tokens
(usage.prompt_tokens_details.cached_tokens) and the decode instance's two KV connector
counters must be exactly what lab_disagg_check.predict says; the times are reported, not
asserted (on one card the split teaches the flow, not a speed-up). It needs one GPU.
"""

from statistics import median

from coursekit.vllm_claims import serve_options
from lab_disagg_check import predict, read


def lab_disagg_send_py(lab):
    prefill, decode = (
        serve_options(lab.folder / name)
        for name in ("lab_prefill_serve.sh", "lab_decode_serve.sh")
    )
    for option in ("model", "max_model_len", "gpu_memory_utilization"):
        assert prefill.get(option) == decode.get(option), (
            f"the two instances differ in {option}"
        )
    assert (
        prefill["gpu_memory_utilization"] + decode["gpu_memory_utilization"] < 0.92
    ), "two instances on one card must leave each other room"
    with (
        lab.serve("lab_prefill_serve.sh") as p_server,
        lab.serve("lab_decode_serve.sh") as d_server,
    ):
        sent = lab.run_python("lab_disagg_send.py", p_server.url, d_server.url)
    found, times = read(sent.stdout)
    expected = predict()
    rows = {
        f"{name}: prompt, cached tokens": f"{found['requests'].get(name)}"
        f" (predicted {value})"
        for name, value in expected["requests"].items()
    }
    rows |= {
        name: f"{found['counters'].get(name)} (predicted {value})"
        for name, value in expected["counters"].items()
    }
    for kind in ("aggregated", "disaggregated"):
        ms = median(t for name, t in times.items() if name.startswith(kind))
        rows[f"median time to first token, {kind}"] = f"{ms:.1f} ms (measured)"
    lab.report("lab_disagg_send.py", rows)
    assert found == expected, f"vLLM reported {found}, predicted {expected}"


CHECKS = {"lab_disagg_send.py": lab_disagg_send_py}
