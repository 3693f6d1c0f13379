"""The continuous batching lesson's simulator cites vLLM where it mirrors it, its pages quote
the metrics its lab reads, and its defaults and defaults table are vLLM's. (Every citation
and metric of every lesson is checked against the pinned release by tests/test_vllm_claims.py.)"""

import re

import defaults
import scheduler

from coursekit import ROOT, vllm_source
from coursekit.vllm_claims import claims


def quoted(kind: str, where: str = "continuous-batching") -> set[tuple[str, str]]:
    return {(claim.name, claim.value) for claim in claims(ROOT)
            if claim.kind == kind and where in claim.where}


def test_the_simulator_cites_vllm_where_it_mirrors_it():
    assert {
        ("vllm/v1/core/sched/scheduler.py", "Scheduler.schedule"),
        ("vllm/v1/core/sched/scheduler.py", "Scheduler._preempt_request"),
        ("vllm/v1/core/sched/scheduler.py", "Scheduler.update_from_output"),
        ("vllm/v1/core/kv_cache_manager.py", "KVCacheManager.allocate_slots"),
        ("vllm/v1/core/sched/request_queue.py", "FCFSRequestQueue"),
        ("vllm/config/scheduler.py", "SchedulerConfig.verify_max_model_len"),
        ("vllm/engine/arg_utils.py", "EngineArgs.get_batch_defaults"),
    } <= quoted("source", "continuous-batching/scheduler.py")


def test_the_pages_quote_the_metrics_the_lab_reads():
    assert {("vllm:iteration_tokens_total", ""), ("vllm:num_preemptions", "")} <= quoted("metric")


def test_the_defaults_are_vllms(vllm_src):
    arg_utils = (vllm_src / "vllm/engine/arg_utils.py").read_text("utf-8")
    body = arg_utils[arg_utils.index("def get_batch_defaults"):arg_utils.index("# tpu specific")]
    large, other = body.split("else:", 1)
    assert "device_memory >= 70 * GiB_bytes and \"a100\" not in device_name" in large
    for table, text in ((defaults.LARGE, large), (defaults.OTHER, other)):
        tokens = re.findall(r"UsageContext\.(\w+): (\d+),", text)
        assert tokens == [("LLM_CLASS", str(table["LLM()"][0])),
                          ("OPENAI_API_SERVER", str(table["vllm serve"][0])),
                          ("LLM_CLASS", str(table["LLM()"][1])),
                          ("OPENAI_API_SERVER", str(table["vllm serve"][1]))]
    config = (vllm_src / "vllm/config/scheduler.py").read_text("utf-8")
    assert f"DEFAULT_MAX_NUM_BATCHED_TOKENS: ClassVar[int] = {defaults.FALLBACK[0]}" in config
    assert f"DEFAULT_MAX_NUM_SEQS: ClassVar[int] = {defaults.FALLBACK[1]}" in config
    # The simulator's defaults are `vllm serve`'s on an RTX 4090; vLLM's own block size.
    assert (scheduler.MAX_NUM_BATCHED_TOKENS, scheduler.MAX_NUM_SEQS) == defaults.OTHER["vllm serve"]
    assert vllm_source.default(vllm_src, "block_size") == scheduler.BLOCK_SIZE
    assert vllm_source.default(vllm_src, "long_prefill_token_threshold") == 0
    assert vllm_source.default(vllm_src, "scheduler_reserve_full_isl") is True
    assert vllm_source.default(vllm_src, "watermark") == 0.0


def test_the_resolution_of_the_defaults():
    # EngineArgs._set_default_max_num_seqs_and_batched_tokens_args, case by case.
    gpu = ("NVIDIA GeForce RTX 4090", 24)
    assert defaults.batch_defaults("LLM()", *gpu, 32768) == (8192, 256)
    assert defaults.batch_defaults("vllm serve", *gpu, 32768) == (2048, 256)
    assert defaults.batch_defaults("vllm serve", "NVIDIA A100-SXM4-80GB", 80, 32768) == (2048, 256)
    assert defaults.batch_defaults("vllm serve", "NVIDIA H100 80GB HBM3", 80, 32768) == (8192, 1024)
    assert defaults.batch_defaults("vllm run-batch", *gpu, 32768) == (2048, 128)
    assert defaults.batch_defaults("vllm serve", *gpu, 32768, max_num_batched_tokens=64) == (64, 64)
    assert defaults.batch_defaults("vllm serve", *gpu, 32768, max_num_seqs=512) == (2048, 512)
    assert defaults.batch_defaults("vllm serve", *gpu, 1000) == (2048, 256)
    assert defaults.batch_defaults("vllm serve", *gpu, 4, max_num_seqs=2) == (8, 2)  # seqs * len
    assert defaults.batch_defaults("vllm serve", *gpu, 32768, enable_chunked_prefill=False) == (
        32768, 256)
    assert defaults.batch_defaults("LLM()", *gpu, 32768, performance_mode="throughput") == (
        16384, 512)
