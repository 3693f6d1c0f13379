"""Lesson 3's scheduler, on lesson 2's block pool and lesson 5's prefix cache, does what vLLM
0.26.0's own Scheduler and AsyncScheduler do, step by step: the real classes, imported from the
pinned wheel in the conformance venv (.venv-vllm, made by .ci/setup) and run on the CPU by
tests/conformance/vllm_trace.py (the vllm_traces fixture of conftest.py). Every step of every
workload is compared: the tokens scheduled per request and their order, who samples, the
preemptions in order, who finishes, the running and waiting queues, the free blocks, every
running request's block table (the block ids), and the prefix cache's hits and queries."""

from scheduler_workloads import EDGE_CASES, MODES, RANDOM_PER_MODE, as_json, trace, workloads

from coursekit import ROOT

WORKLOADS = workloads()


def first_difference(ours: list[dict], theirs: list[dict]) -> str:
    for index in range(max(len(ours), len(theirs))):
        mine = ours[index] if index < len(ours) else "(no step)"
        vllm = theirs[index] if index < len(theirs) else "(no step)"
        if mine != vllm:
            return f"step {index}:\n  lesson 3: {mine}\n  vLLM:     {vllm}"
    return ""


def test_every_step_of_every_workload_matches_vllm(vllm_traces):
    mismatches = []
    for name, workload in WORKLOADS.items():
        difference = first_difference(trace(*workload), vllm_traces[name])
        if difference:
            mismatches.append(f"{name}: {as_json(*workload)}\n{difference}")
    assert not mismatches, (f"{len(mismatches)} of {len(WORKLOADS)} workloads differ from vLLM;"
                            " the first ones:\n\n" + "\n\n".join(mismatches[:3]))


def test_the_workloads_reach_what_they_are_meant_to(vllm_traces):
    """The comparison means something only where the engine preempts, hits the cache, admits
    while it prefills: vLLM's own traces show each of these in every mode."""
    for mode in MODES:
        traces = [t for name, t in vllm_traces.items() if name.endswith(f"[{mode}]")]
        preempting = sum(any(step["preempted"] for step in t) for t in traces)
        assert preempting >= 20, (mode, preempting)
        if "prefix caching" in mode:
            assert sum(t[-1]["hits"] > 0 for t in traces) >= 40, mode


def test_the_home_page_and_readme_state_what_is_compared(vllm_traces):
    cases, steps = len(vllm_traces), sum(len(t) for t in vllm_traces.values())
    assert cases == len(MODES) * (len(EDGE_CASES) + RANDOM_PER_MODE)
    english = (f"{cases:,} workloads", f"{steps:,} engine steps")
    chinese = (f"{cases:,} 个工作负载", f"{steps:,} 个引擎步")
    for page, phrases in (("README.md", english + chinese), ("docs/index.en.md", english),
                          ("docs/index.zh.md", chinese)):
        text = (ROOT / page).read_text("utf-8")
        missing = [phrase for phrase in phrases if phrase not in text]
        assert not missing, f"{page} should say what the conformance tests compare: {missing}"
