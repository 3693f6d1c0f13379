"""GPU labs as a contract: every `data-run="gpu"` block of every page is run by the GPU job, and
checked by the check its snippet folder declares.

A snippet folder with GPU blocks has a gpu_checks.py whose CHECKS maps each GPU block's file
name to a function taking a Lab. The function runs the block (and what else the lab needs)
through the Lab and asserts what the lesson predicts, computed with the lesson's own code,
imported by its plain module name:

    from kv_capacity import QWEN_FP8, predict_from_log, read_startup_log

    def serve_kv(lab):
        run = lab.run_python("serve_kv.py")
        low, high = predict_from_log(QWEN_FP8, read_startup_log(run.log))
        ...

    CHECKS = {"serve_kv.py": serve_kv}

gpu_checks.py is loaded on machines without a GPU too (contract_problems checks that its
CHECKS are functions), so it never imports vLLM: the Lab runs vLLM in processes of its own.
tests/test_gpu_labs.py runs every GPU block's check on the GPU runner, and fails a check that
never ran its own block.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from coursekit import ROOT
from coursekit.browser import free_port
from coursekit.code import copy_bundle, load
from coursekit.pages import GpuBlock, gpu_blocks

START_TIMEOUT = 900  # seconds: a first run downloads the model's weights
CHECKS_FILE = "gpu_checks.py"
# Set by `.ci/gpu-job --dry-run`, where stand-ins (tests/stand_in_vllm) play vLLM, torch and the
# GPU: every figure a Lab reports then says so. The stand-ins refuse to run without it.
DRY_RUN = "GPU_LAB_DRY_RUN"


def dry_run() -> bool:
    return os.environ.get(DRY_RUN) == "1"


def declared_checks(folder: Path) -> set[str]:
    """The file names gpu_checks.py's CHECKS names, read without running it."""
    path = folder / CHECKS_FILE
    if not path.is_file():
        return set()
    try:
        tree = ast.parse(path.read_text("utf-8"), str(path))
    except SyntaxError as error:
        raise ValueError(f"{_where(path)}: {error}") from None
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(getattr(target, "id", "") == "CHECKS" for target in targets):
            if isinstance(node.value, ast.Dict) and all(
                    isinstance(key, ast.Constant) and isinstance(key.value, str)
                    for key in node.value.keys):
                return {key.value for key in node.value.keys}
    raise ValueError(f"{_where(path)}: needs CHECKS = {{'<gpu block file>': check_function, ...}},"
                     " a dict written out with the file names as strings")


def contract_problems(root: Path = ROOT) -> list[str]:
    """GPU blocks without a check, checks of files that are no GPU block, and checks that are
    no function of one Lab (found by loading gpu_checks.py, which must not need vLLM)."""
    problems, blocks = [], gpu_blocks(root)
    problems += [f"{block.shown_on[0]}: the GPU block {block} names no file of snippets/"
                 for block in blocks if not (root / "snippets" / block.include).is_file()]
    folders = {block.folder_name for block in blocks} | {
        path.parent.name for path in (root / "snippets").glob(f"*/{CHECKS_FILE}")}
    for name in sorted(folders):
        folder = root / "snippets" / name
        try:
            declared = declared_checks(folder)
        except ValueError as error:
            problems.append(str(error))
            continue
        shown = {block.file_name for block in blocks if block.folder_name == name}
        problems += [f"snippets/{name}/{file}: a GPU block with no check; add it to CHECKS in"
                     f" snippets/{name}/{CHECKS_FILE}" for file in sorted(shown - declared)]
        problems += [f"snippets/{name}/{CHECKS_FILE}: checks {file}, which no page shows as a"
                     ' data-run="gpu" block' for file in sorted(declared - shown)]
        if declared:
            problems += _callable_problems(folder, root)
    return problems


def _callable_problems(folder: Path, root: Path) -> list[str]:
    where = _where(folder / CHECKS_FILE)
    try:
        checks = _load_checks(folder, root)
    except Exception as error:  # any error of the lesson's file is the finding
        return [f"{where}: does not load without a GPU ({type(error).__name__}: {error});"
                " it must not import vLLM, the Lab runs vLLM in processes of its own"]
    problems = []
    for file, check in sorted(checks.items()):
        try:
            inspect.signature(check).bind(None)
        except (TypeError, ValueError):
            problems.append(f"{where}: CHECKS[{file!r}] is {check!r}, not a function of one Lab")
    return problems


def _load_checks(folder: Path, root: Path) -> dict:
    module = load(folder / CHECKS_FILE, f"gpu_checks_of_{folder.name.replace('-', '_')}", root)
    return module.CHECKS


def check_function(block: GpuBlock, root: Path = ROOT):
    """The function that checks a GPU block, from its folder's gpu_checks.py."""
    checks = _load_checks(root / "snippets" / block.folder_name, root)
    if block.file_name not in checks:
        raise KeyError(f"snippets/{block.folder_name}/{CHECKS_FILE} has no check of {block}")
    return checks[block.file_name]


def run_check(block: GpuBlock, lab: Lab, root: Path = ROOT) -> None:
    """Run a GPU block's check with a Lab; a check that never ran the block itself fails."""
    check_function(block, root)(lab)
    assert block.file_name in lab.ran, (
        f"the check of {block} never ran {block.file_name} (it ran {lab.ran}): a GPU block's"
        " check runs the block with lab.run_python or lab.serve")


def _where(path: Path) -> str:
    """snippets/<lesson>/<file>, as problems name a file of a snippet folder."""
    return f"snippets/{path.parent.name}/{path.name}"


@dataclass
class Run:
    stdout: str  # what the lab printed
    log: str  # vLLM's log: the process's stderr


@dataclass
class Server:
    url: str  # e.g. http://127.0.0.1:8123
    log_file: Path

    @property
    def log(self) -> str:
        """The server's output so far (stdout and stderr)."""
        return self.log_file.read_text("utf-8", "replace")

    def get(self, path: str, timeout: float = 120) -> dict:
        """GET a path of the server (e.g. /v1/models); its JSON answer."""
        return request_json(self.url + path, timeout=timeout)

    def post(self, path: str, body: dict, timeout: float = 120) -> dict:
        """POST body as JSON to a path of the server (e.g. /v1/completions); its JSON answer."""
        return request_json(self.url + path, body, timeout)


@dataclass
class Lab:
    """Runs a lesson's GPU code as a reader would: in a folder holding the lesson's code and
    what it imports (coursekit.code.copy_bundle), with this Python's programs (python, vllm)
    first on PATH. Every run's log is written to log_dir as it runs, and kept whatever happens;
    every process a run starts is stopped when it ends. Figures go to the job summary."""

    folder: Path  # the snippet folder
    log_dir: Path
    summary_file: Path | None = None
    ran: list[str] = field(default_factory=list)  # the folder's files run so far

    @contextmanager
    def _workdir(self):
        with tempfile.TemporaryDirectory(prefix=f"lab-{self.folder.name}-") as work:
            copy_bundle(self.folder, Path(work), self.folder.parent.parent)
            yield Path(work)

    def _env(self) -> dict[str, str]:
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        # vLLM logs to stdout by default; on stderr, stdout holds only what the lab prints.
        return {**os.environ, "PATH": path, "VLLM_LOGGING_STREAM": "ext://sys.stderr",
                "PYTHONUNBUFFERED": "1"}

    def log_path(self, name: str) -> Path:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return self.log_dir / f"{name.replace('/', '_')}.log"

    def run_python(self, file: str, *args: str, name: str | None = None,
                   timeout: float = START_TIMEOUT) -> Run:
        """Run one of the folder's scripts, as `python FILE ARGS...` in the reader's folder."""
        if not (self.folder / file).is_file():
            raise FileNotFoundError(f"{self.folder / file}: no such file in the lesson")
        self.ran.append(file)
        return self._run([sys.executable, file, *args], name or file, timeout)

    def run_code(self, code: str, *, name: str, timeout: float = START_TIMEOUT) -> Run:
        """Run some Python of the check's own (e.g. a variant of a lab), with the folder's files
        beside it. It does not count as running any of the folder's files."""
        return self._run([sys.executable, "-c", code], name, timeout)

    def _run(self, command: list[str], name: str, timeout: float) -> Run:
        log_path = self.log_path(name)
        with (self._workdir() as work, open(log_path, "w", encoding="utf-8") as log,
              tempfile.TemporaryFile("w+", encoding="utf-8") as out):
            process = subprocess.Popen(command, cwd=work, env=self._env(), stdout=out,
                                       stderr=log, text=True, start_new_session=True)
            try:
                returncode = _finished(process, name, log_path, timeout)
            finally:
                _stop(process)
            out.seek(0)
            stdout = out.read()
        text = log_path.read_text("utf-8", "replace")
        printed = f"\nwhat it printed:\n{stdout[-3000:]}" if stdout.strip() else ""
        assert returncode == 0, f"{name} failed (exit {returncode}); its log: {log_path}\n" + (
            _tail(log_path) + printed)
        return Run(stdout, text)

    @contextmanager
    def serve(self, file: str, *extra: str, timeout: float = START_TIMEOUT):
        """Start a `vllm serve` script of the folder, with `--host 127.0.0.1 --port N` (and
        `extra`) added to its command; yields a Server once GET /v1/models answers, and stops
        the server and everything it started afterwards."""
        if not (self.folder / file).is_file():
            raise FileNotFoundError(f"{self.folder / file}: no such file in the lesson")
        self.ran.append(file)
        port, log_file = free_port(), self.log_path(file)
        with self._workdir() as work:
            script = (work / file).read_text("utf-8").rstrip("\n")
            flags = shlex.join(["--host", "127.0.0.1", "--port", str(port), *extra])
            with open(log_file, "w", encoding="utf-8") as log:
                process = subprocess.Popen(["bash", "-c", f"{script} {flags}"], cwd=work,
                                           env=self._env(), stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True)
            try:
                server = Server(f"http://127.0.0.1:{port}", log_file)
                deadline = time.monotonic() + timeout
                while not _answers(f"{server.url}/v1/models"):
                    if process.poll() is not None:
                        raise AssertionError(f"{file} exited (exit {process.returncode}) before"
                                             f" it served; its log: {log_file}\n"
                                             f"{_tail(log_file)}")
                    if time.monotonic() > deadline:
                        raise AssertionError(f"{file} did not serve within {timeout:g} s; its"
                                             f" log: {log_file}\n{_tail(log_file)}")
                    time.sleep(0.1)  # a stand-in serves in a fraction of a second
                yield server
            finally:
                _stop(process)

    def run_notebook(self, book, timeout: float = START_TIMEOUT) -> list[str]:
        """Run a lab notebook (coursekit/lab_notebooks.py) cell by cell, as Jupyter would in the
        reader's folder: a `%%bash` cell with bash, `%run FILE` with this Python. Not the set-up
        cell (`%pip install vllm==<pin>`): the job has installed the pin already. Servers a cell
        starts keep running until a later cell stops them, or the notebook ends. Returns what
        each cell printed; a cell that fails fails the run, with its log."""
        printed, started = [], []
        with self._workdir() as work:
            try:
                for number, cell in enumerate(book.cells):
                    if cell.cell_type != "code" or cell.source.startswith("%pip install "):
                        continue
                    script = None
                    if cell.source.startswith("%%bash\n"):
                        # On bash's stdin, as IPython's %%bash hands it: in `bash -c SCRIPT`,
                        # the step's `pkill -f "vllm serve"` would match the step itself.
                        command, script = ["bash"], cell.source.removeprefix("%%bash\n")
                    elif cell.source.startswith("%run "):
                        command = [sys.executable, *shlex.split(cell.source.removeprefix("%run "))]
                    else:
                        raise ValueError(f"cell {number}: neither %%bash nor %run: {cell.source[:60]!r}")
                    log_path = self.log_path(f"cell {number}")
                    with open(log_path, "w", encoding="utf-8") as log:
                        process = subprocess.Popen(command, cwd=work, env=self._env(), stdout=log,
                                                   stderr=subprocess.STDOUT, text=True,
                                                   stdin=subprocess.PIPE, start_new_session=True)
                        started.append(process)
                        process.stdin.write(script or "")
                        process.stdin.close()
                        returncode = _finished(process, f"cell {number}", log_path, timeout)
                    assert returncode == 0, (f"cell {number} failed (exit {returncode}); its log:"
                                             f" {log_path}\n{_tail(log_path)}")
                    printed.append(log_path.read_text("utf-8", "replace"))
            finally:
                for process in reversed(started):
                    _stop(process)
        return printed

    def report(self, title: str, rows: dict[str, object]) -> None:
        """Figures for the job summary (GitHub's step summary when the job runs there). In a
        dry run every line says so: its figures come from the stand-in, not from a GPU."""
        if dry_run():
            lines = [f"### Dry run, no GPU: {title}", "", "| dry run | stand-in's figures |",
                     "|---|---|"]
            lines += [f"| dry run: {key} | {value} |" for key, value in rows.items()]
        else:
            lines = [f"### {title}", "", "| | |", "|---|---|"]
            lines += [f"| {key} | {value} |" for key, value in rows.items()]
        text = "\n".join(lines) + "\n\n"
        print(text)
        if self.summary_file:
            with open(self.summary_file, "a", encoding="utf-8") as out:
                out.write(text)


def request_json(url: str, body: dict | None = None, timeout: float = 120) -> dict:
    """GET url (or POST body as JSON) and return the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.load(response)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5):
            return True
    except OSError:
        return False


def _finished(process: subprocess.Popen, name: str, log_path: Path, timeout: float) -> int:
    """The process's exit code once it ends; one that runs past timeout fails, with its log."""
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{name} did not finish in {timeout:g} s; its log: {log_path}\n"
                             f"{_tail(log_path)}") from None


def _tail(log: Path, chars: int = 3000) -> str:
    return log.read_text("utf-8", "replace")[-chars:]


def _stop(process: subprocess.Popen, grace: float = 30) -> None:
    """Stop a process started in a session of its own, and every process of that session
    (vLLM's engine and workers), even once the leader has exited."""
    group = process.pid
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            process.poll()
            if not _group_alive(group):
                break
            time.sleep(0.1)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _group_alive(group: int) -> bool:
    """Whether a process group has a member that is not a zombie (Linux's /proc)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":  # state, ppid, pgrp
            return True
    return False


def lab_for(block: GpuBlock, root: Path = ROOT, log_dir: Path | None = None) -> Lab:
    """The Lab of a GPU block: logs in log_dir (else $GPU_LAB_LOG_DIR, else the temporary
    folder), one folder per lesson; figures to $GITHUB_STEP_SUMMARY when it is set."""
    if not (root / "snippets" / block.include).is_file():
        raise FileNotFoundError(f"{block.shown_on[0]}: the GPU block {block} names no file"
                                " of snippets/")
    base = log_dir or Path(os.environ.get("GPU_LAB_LOG_DIR") or tempfile.gettempdir())
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    return Lab(root / "snippets" / block.folder_name, base / block.folder_name,
               Path(summary) if summary else None)
