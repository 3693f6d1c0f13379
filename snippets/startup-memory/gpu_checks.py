"""What the GPU job checks of the start-up lab on the RTX 4090 (coursekit/gpu_labs.py):
lab_startup.py is run three ways, each held to the lesson by lab_startup_check.compare
(its docstring lists what is exact and what has a tolerance)."""

from lab_startup_check import MAX_NUM_SEQS, compare


def lab_startup_py(lab):
    problems = []
    for way in MAX_NUM_SEQS:
        run = lab.run_python("lab_startup.py", way, name=f"lab_startup.py {way}")
        rows, found = compare(way, run.log, run.stdout)
        lab.report(f"lab_startup.py {way}", rows)
        problems += [f"{way}: {problem}" for problem in found]
    assert not problems, "\n".join(problems)


CHECKS = {"lab_startup.py": lab_startup_py}
