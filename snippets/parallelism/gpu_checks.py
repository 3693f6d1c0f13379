"""What the GPU job checks of the parallelism lab (coursekit/gpu_labs.py): lab_tp.py at
TP 1 on one RTX 4090, its KV cache tokens held to lab_tp_check.predicted exactly; TP 2
only where the runner has two GPUs (the course's runner has one: the check reports the
TP 2 prediction and that it was not run)."""

import re

from lab_tp_check import compare, predicted


def lab_tp_py(lab):
    run = lab.run_python("lab_tp.py", "1", name="lab_tp.py 1")
    rows, problems = compare(1, run.log)
    speed = re.search(r"decode at concurrency 1, TP 1: ([\d.]+) tokens/s", run.stdout)
    rows["decode, TP 1"] = f"{speed[1]} tokens/s" if speed else "not printed"
    lab.report("lab_tp.py 1", rows)
    gpus = int(re.search(r"GPUs: (\d+)", run.stdout)[1])
    if gpus < 2:
        want = predicted(2)
        lab.report("lab_tp.py 2 (needs two GPUs: not run)", {
            "GPUs on this runner": gpus,
            "predicted GPU KV cache size, tokens": f"{want.tokens:,}",
            "predicted maximum concurrency": f"{want.max_concurrency:.2f}x",
        })  # fmt: skip
    else:
        two = lab.run_python("lab_tp.py", "2", name="lab_tp.py 2")
        more, found = compare(2, two.log)
        lab.report("lab_tp.py 2", more)
        problems += found
    assert not problems, "\n".join(problems)


CHECKS = {"lab_tp.py": lab_tp_py}
