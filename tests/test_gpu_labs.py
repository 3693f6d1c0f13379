"""GPU labs as a contract (coursekit.gpu_labs): every data-run="gpu" block of every page has the
check its snippet folder declares in gpu_checks.py, and the GPU job runs them all.

Offline, always: the contract holds, its breaches are reported, and the Lab harness works (with
stand-ins for vLLM). With `-m gpu` on the self-hosted RTX 4090 (.ci/gpu-job): every GPU block's
check, which skips without an NVIDIA GPU or vLLM (REQUIRE_GPU=1 makes that skip fail); in the
dry run (.ci/gpu-job --dry-run) the same, against the stand-ins, each test named "(dry run)". A check's vLLM logs
are kept in $GPU_LAB_LOG_DIR (default: pytest's temporary folder), its figures go to
$GITHUB_STEP_SUMMARY when that is set.
"""

import importlib.util
import os
import re
import shutil
import socket
import subprocess
import textwrap
from pathlib import Path

import pytest

from coursekit import ROOT
from coursekit.gpu_labs import (
    START_TIMEOUT,
    GpuBlock,
    Lab,
    check_function,
    contract_problems,
    dry_run,
    gpu_blocks,
    lab_for,
    run_check,
)
from coursekit.lab_notebooks import STEPS, lab_notebooks
from coursekit.pages import mkdocs_config

# -- the contract, offline -------------------------------------------------------------------


def test_every_gpu_block_has_a_check_and_every_check_a_block():
    assert contract_problems(ROOT) == []


def test_the_kv_cache_lab_and_its_cli_twin_are_gpu_blocks():
    assert {str(block) for block in gpu_blocks(ROOT)} >= {
        "kv-cache/serve_kv.py", "kv-cache/serve_kv.sh"}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def gpu_page(*files: str) -> str:
    return "# Lab\n\n" + "".join(
        f'```{{.python title="{file}" data-run="gpu"}}\n--8<-- "demo/{file}"\n```\n\n'
        for file in files)


@pytest.fixture
def tiny_course(tmp_path):
    """docs/ and snippets/ with one lesson whose page shows two GPU blocks, both checked."""
    root = tmp_path / "course"
    for language in ("zh", "en"):
        write(root / f"docs/lessons/demo.{language}.md", gpu_page("lab.py", "serve.sh"))
    write(root / "snippets/demo/lab.py", "print('on a GPU')\n")
    write(root / "snippets/demo/serve.sh", "vllm serve some/model\n")
    write(root / "snippets/demo/gpu_checks.py", """\
        def lab(lab):
            lab.run_python("lab.py")


        def serve(lab):
            pass


        CHECKS = {"lab.py": lab, "serve.sh": serve}
        """)
    return root


def test_gpu_blocks_are_read_from_the_pages(tiny_course):
    pages = ("docs/lessons/demo.en.md", "docs/lessons/demo.zh.md")
    assert gpu_blocks(tiny_course) == [GpuBlock("demo/lab.py", pages),
                                       GpuBlock("demo/serve.sh", pages)]
    assert contract_problems(tiny_course) == []
    assert check_function(gpu_blocks(tiny_course)[0], tiny_course).__name__ == "lab"


def test_a_check_that_never_runs_its_block_fails(tiny_course, tmp_path):
    lab_block, serve_block = gpu_blocks(tiny_course)
    lab = lab_for(lab_block, tiny_course, tmp_path / "logs")
    run_check(lab_block, lab, tiny_course)
    assert lab.ran == ["lab.py"]
    with pytest.raises(AssertionError, match=r"the check of demo/serve.sh never ran serve.sh"
                       r" \(it ran \[\]\)"):
        run_check(serve_block, lab_for(serve_block, tiny_course, tmp_path / "logs"), tiny_course)


def test_a_block_without_check_and_a_check_without_block_are_reported(tiny_course):
    checks = tiny_course / "snippets/demo/gpu_checks.py"
    checks.write_text(checks.read_text().replace('"serve.sh": serve', '"other.sh": serve'))
    assert contract_problems(tiny_course) == [
        "snippets/demo/serve.sh: a GPU block with no check; add it to CHECKS in"
        " snippets/demo/gpu_checks.py",
        'snippets/demo/gpu_checks.py: checks other.sh, which no page shows as a data-run="gpu"'
        " block",
    ]


def test_a_lesson_without_gpu_checks_is_reported(tiny_course):
    (tiny_course / "snippets/demo/gpu_checks.py").unlink()
    assert contract_problems(tiny_course) == [
        f"snippets/demo/{file}: a GPU block with no check; add it to CHECKS in"
        " snippets/demo/gpu_checks.py" for file in ("lab.py", "serve.sh")]


def test_a_gpu_block_of_a_missing_file_is_reported(tiny_course):
    (tiny_course / "snippets/demo/serve.sh").unlink()
    assert contract_problems(tiny_course) == [
        "docs/lessons/demo.en.md: the GPU block demo/serve.sh names no file of snippets/"]
    with pytest.raises(FileNotFoundError, match="demo/serve.sh names no file"):
        lab_for(gpu_blocks(tiny_course)[1], tiny_course)


@pytest.mark.parametrize(("checks", "problem"), [
    ("CHECKS = dict(lab_py=print)\n", "needs CHECKS = {'<gpu block file>': check_function"),
    ("CHECKS = {\n", "gpu_checks.py: '{' was never closed"),
    ("import a_gpu_library\n\nCHECKS = {'lab.py': None, 'serve.sh': None}\n",
     "does not load without a GPU (ModuleNotFoundError: No module named 'a_gpu_library')"),
    ("CHECKS = {'lab.py': print, 'serve.sh': 'serve'}\n",
     "CHECKS['serve.sh'] is 'serve', not a function of one Lab"),
])
def test_a_broken_gpu_checks_file_is_reported(tiny_course, checks, problem):
    (tiny_course / "snippets/demo/gpu_checks.py").write_text(checks)
    problems = contract_problems(tiny_course)
    assert len(problems) == 1 and problem in problems[0], problems
    assert problems[0].startswith("snippets/demo/gpu_checks.py")


# -- the labs, on the GPU runner ----------------------------------------------------------------


def no_gpu_lab_here() -> str | None:
    """Why GPU labs cannot run on this machine, or None. Never imports vLLM."""
    if shutil.which("nvidia-smi") is None:
        return "no NVIDIA GPU: nvidia-smi is not installed"
    if subprocess.run(["nvidia-smi"], capture_output=True).returncode != 0:
        return "no NVIDIA GPU: nvidia-smi fails"
    if importlib.util.find_spec("vllm") is None:
        return "vLLM is not installed: pip install -r requirements-gpu.txt"
    return None


@pytest.mark.gpu
@pytest.mark.parametrize("block", gpu_blocks(ROOT),
                         ids=lambda block: f"{block} (dry run)" if dry_run() else str(block))
def test_gpu_lab(block, tmp_path):
    reason = no_gpu_lab_here()
    if reason:
        pytest.skip(f"{block}: {reason}")
    # Fails too when the check never ran the block's own file.
    run_check(block, lab_for(block, ROOT, None if os.environ.get("GPU_LAB_LOG_DIR") else tmp_path))


LAB_NOTEBOOKS = lab_notebooks(mkdocs_config(ROOT))


@pytest.mark.gpu
@pytest.mark.parametrize("slug", sorted({slug for slug, _ in LAB_NOTEBOOKS}),
                         ids=lambda slug: f"{slug}-lab notebook (dry run)" if dry_run() else f"{slug}-lab notebook")
def test_lab_notebook(slug, tmp_path):
    """The lab notebook a reader runs on a rented GPU runs from top to bottom, and its offline
    cells print on the GPU machine what the page shows. Its steps use the ports a reader's
    machine has free, so they must be free here."""
    reason = no_gpu_lab_here()
    if reason:
        pytest.skip(f"{slug}-lab notebook: {reason}")
    script = (ROOT / "snippets" / slug / STEPS).read_text("utf-8")
    for port in sorted(set(re.findall(r"http://127\.0\.0\.1:(\d+)", script))):
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", int(port))) != 0, (
                f"port {port}, which {slug}'s {STEPS} serves on, is taken on this machine")
    book = LAB_NOTEBOOKS[slug, "en"]
    log_dir = Path(os.environ.get("GPU_LAB_LOG_DIR") or tmp_path) / f"{slug}-lab-notebook"
    # A stand-in serves in a second: a dry run's step that waits longer waits for nothing.
    timeout = 120 if dry_run() else START_TIMEOUT
    printed = Lab(ROOT / "snippets" / slug, log_dir).run_notebook(book, timeout)
    shown = [cell.outputs[0].text for cell in book.cells
             if cell.cell_type == "code" and cell.source.startswith("%run ")]
    assert [text for text in printed if text in shown] == shown, f"{slug}: a %run cell printed something else"


# -- the Lab harness, offline, with stand-ins for vLLM ----------------------------------------


@pytest.fixture
def lesson(tmp_path):
    """A snippet folder of a throwaway course, with a module that a lab imports."""
    folder = tmp_path / "course/snippets/demo"
    write(folder / "lesson_numbers.py", "ANSWER = 42\n")
    write(folder / "gpu_checks.py", "CHECKS = {}\n")
    return folder


@pytest.fixture
def lab(lesson, tmp_path):
    return Lab(lesson, tmp_path / "logs")


def test_run_python_runs_a_script_in_a_readers_folder(lesson, lab):
    write(lesson / "lab.py", """\
        import os
        import sys

        from lesson_numbers import ANSWER

        print("answer", ANSWER, sys.argv[1:])
        print("loading weights", file=sys.stderr)
        print(sorted(os.listdir(".")), file=sys.stderr)
        open("left_behind.txt", "w").close()
        """)
    run = lab.run_python("lab.py", "--flag")
    assert run.stdout == "answer 42 ['--flag']\n"
    assert run.log.startswith("loading weights\n")
    # The reader's folder holds the lesson's code, not the course's machinery.
    assert "'gpu_checks.py'" not in run.log and "'lesson_numbers.py'" in run.log
    assert (lab.log_dir / "lab.py.log").read_text() == run.log
    assert not (lesson / "left_behind.txt").exists()  # it ran in a copy
    assert lab.ran == ["lab.py"]


def test_run_code_counts_as_no_file_of_the_lesson(lab):
    run = lab.run_code("from lesson_numbers import ANSWER\nprint(ANSWER + 1)", name="variant")
    assert run.stdout == "43\n" and lab.ran == []
    assert (lab.log_dir / "variant.log").is_file()


def test_a_failing_script_fails_with_its_log(lesson, lab):
    write(lesson / "broken.py", "raise SystemExit('CUDA out of memory')\n")
    with pytest.raises(AssertionError) as failure:
        lab.run_python("broken.py")
    log = lab.log_dir / "broken.py.log"
    assert f"broken.py failed (exit 1); its log: {log}" in str(failure.value)
    assert "CUDA out of memory" in str(failure.value) and "CUDA out of memory" in log.read_text()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_script_past_its_timeout_is_stopped_and_keeps_its_log(lesson, lab, tmp_path):
    # Like vLLM, the script starts a process of its own (its engine), which must not outlive it.
    pid_file = tmp_path / "engine.pid"
    write(lesson / "hangs.py", f"""\
        import subprocess
        import sys
        import time

        engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(pid_file)!r}, "w").write(str(engine.pid))
        print("Loading weights took 1.00 seconds", file=sys.stderr, flush=True)
        time.sleep(120)
        """)
    with pytest.raises(AssertionError) as failure:
        lab.run_python("hangs.py", timeout=3)
    log = lab.log_dir / "hangs.py.log"
    assert f"hangs.py did not finish in 3 s; its log: {log}" in str(failure.value)
    assert "Loading weights took 1.00 seconds" in log.read_text()
    assert not alive(int(pid_file.read_text()))


# The dry run's stand-in server, on its own: a `vllm serve` without a GPU.
STAND_IN_SERVER = ROOT / "tests/stand_in_vllm/vllm/vllm/stand_in_server.py"


def test_serve_starts_a_script_and_stops_it(lesson, lab, monkeypatch):
    monkeypatch.setenv("STAND_IN_LOG", "INFO GPU KV cache size: 1,024 tokens")
    # `python` is found on PATH, as `vllm` is on the GPU runner: this Python's programs.
    write(lesson / "serve.sh", f"python {STAND_IN_SERVER} some/model \\\n  --max-model-len 8\n")
    with lab.serve("serve.sh") as server:
        assert server.get("/v1/models") == {"data": [{"id": "some/model"}]}
        answer = server.post("/v1/completions", {"model": "some/model", "prompt": "hi"})
        assert answer == {"choices": [{"text": "some/model: hi"}]}
        assert "GPU KV cache size: 1,024 tokens" in server.log
    assert lab.ran == ["serve.sh"]
    assert server.url.startswith("http://127.0.0.1:")
    assert server.log_file == lab.log_dir / "serve.sh.log"
    with pytest.raises(OSError):  # the server is gone
        server.get("/v1/models", timeout=5)


@pytest.mark.parametrize(("program", "timeout", "failure", "logged"), [
    ("sys.exit(f'ValueError: no such model {sys.argv[1:]}')", 30,
     "serve.sh exited (exit 1) before it served",
     "ValueError: no such model ['--host', '127.0.0.1', '--port', "),
    ("print('Loading weights', file=sys.stderr, flush=True)\ntime.sleep(120)", 2,
     "serve.sh did not serve within 2 s", "Loading weights\n"),
])
def test_a_server_that_does_not_serve_fails_with_its_log(lesson, lab, tmp_path, program,
                                                         timeout, failure, logged):
    pid_file = tmp_path / "server.pid"
    write(lesson / "server.py", f"import os, sys, time\n\nopen({str(pid_file)!r}, 'w').write("
          f"str(os.getpid()))\n{program}\n")
    write(lesson / "serve.sh", "python server.py\n")
    with pytest.raises(AssertionError) as raised:
        with lab.serve("serve.sh", timeout=timeout):
            pass
    log = lab.log_dir / "serve.sh.log"
    assert f"{failure}; its log: {log}" in str(raised.value)
    assert logged in log.read_text() and logged in str(raised.value)
    assert not alive(int(pid_file.read_text()))


def test_a_lab_of_a_file_the_lesson_lacks_fails_at_once(lab):
    with pytest.raises(FileNotFoundError, match="missing.py: no such file in the lesson"):
        lab.run_python("missing.py")
    assert lab.ran == []


def test_report_writes_the_job_summary(lab, tmp_path, capsys):
    lab.summary_file = tmp_path / "summary.md"
    lab.report("serve_kv.py", {"reported GPU KV cache size": "519,040 tokens"})
    expected = ("### serve_kv.py\n\n| | |\n|---|---|\n"
                "| reported GPU KV cache size | 519,040 tokens |\n")
    assert lab.summary_file.read_text() == expected + "\n"
    assert expected in capsys.readouterr().out


def test_lab_for_keeps_logs_per_lesson(monkeypatch, tmp_path):
    block = GpuBlock("kv-cache/serve_kv.py", ("docs/lessons/kv-cache.zh.md",))
    monkeypatch.setenv("GPU_LAB_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    lab = lab_for(block)
    assert (lab.folder, lab.log_dir, lab.summary_file) == (
        ROOT / "snippets/kv-cache", tmp_path / "logs/kv-cache", tmp_path / "summary.md")
    assert lab_for(block, log_dir=tmp_path / "mine").log_dir == tmp_path / "mine/kv-cache"
