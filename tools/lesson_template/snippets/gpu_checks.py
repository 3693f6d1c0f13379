"""What the GPU job checks after running this lesson's GPU blocks
(coursekit/gpu_labs.py)."""


def check_lab(lab):
    run = lab.run_python("%%module%%_lab.py")
    assert run.stdout.strip(), "the lab printed no generated text"


CHECKS = {"%%module%%_lab.py": check_lab}
