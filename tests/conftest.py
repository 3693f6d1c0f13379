"""What every test may use: the course built once, the site served, Chromium, the pinned vLLM
source, and copies of the small fixture course (tests/fixture_course) to break."""

import fcntl
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit import ROOT, browser
from coursekit.built_site import mkdocs_build
from coursekit.code import install_finder
from coursekit.scaffold import new_lesson
from coursekit.translations import mark

FIXTURE = Path(__file__).with_name("fixture_course")
# The dry run's stand-ins for vLLM, torch and nvidia-smi (see tests/stand_in_vllm/vllm/vllm).
STAND_IN = Path(__file__).with_name("stand_in_vllm")
# The fixture course's second lesson is made by the scaffolding tool, as a contributor's is.
SCAFFOLDED = ("second", "第二课", "Second lesson")

# Tests import lesson code by its plain module name, as a reader's folder does.
install_finder()


def required(item) -> bool:
    """Under CI=true every test is required, except GPU tests; REQUIRE_GPU=1 requires those."""
    if item.get_closest_marker("gpu"):
        return os.environ.get("REQUIRE_GPU") == "1"
    return os.environ.get("CI") == "true"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.skipped and required(item):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"a required test was skipped ({reason}); CI=true forbids that"


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: -p no:xdist runs without it
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: a worker more than the machine has cores. A worker waits while Chromium lays
    out its page in processes of its own, and while another worker builds the course; with as
    many workers as cores the CPU stood partly idle (2 cores: 175 s with 2 workers, 156 s with
    3, where the CPU was 92 % busy)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items):
    """The tests that need the built course go last: the first worker to reach one builds the
    course while the others still have other tests to run, rather than wait for it."""
    items.sort(key=lambda item: "build" in getattr(item, "fixturenames", ()))


def pytest_addoption(parser):
    parser.addoption("--site-dir", help="build the course there and keep it (default: a"
                     " temporary folder); CI publishes the site its tests passed on")


def pytest_terminal_summary(terminalreporter):
    from coursekit.guards import stale_translations

    stale = stale_translations(ROOT)
    if stale:
        terminalreporter.section("translations that may be out of date (shown with a notice)")
        for line in stale:
            terminalreporter.write_line(line)


def shared_folder(tmp_path_factory) -> Path:
    """The temporary folder of this test run, which pytest-xdist's workers share."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(tmp_path_factory, name: str, make):
    """make() -> JSON-able result, run once per test run: the first of pytest-xdist's workers
    that asks makes it while the others wait for its result."""
    shared = shared_folder(tmp_path_factory)
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = shared / f"{name}.json"
        if not record.exists():
            record.write_text(json.dumps(make()), "utf-8")
        return json.loads(record.read_text("utf-8"))


@pytest.fixture(scope="session")
def once_per_run(tmp_path_factory):
    """once_per_run(name, make): once() for the conftest.py of a test folder, which cannot
    import this one (tests/conformance/conftest.py runs vLLM's side with it)."""
    return functools.partial(once, tmp_path_factory)


def built_once(tmp_path_factory, name: str, root: Path, site: Path,
               in_process: bool = False) -> subprocess.CompletedProcess:
    """mkdocs_build(root, site, in_process), once per test run."""
    def make():
        if site.exists():
            shutil.rmtree(site)
        result = mkdocs_build(root, site, in_process)
        return [result.returncode, result.stdout, result.stderr]

    returncode, stdout, stderr = once(tmp_path_factory, name, make)
    return subprocess.CompletedProcess(["mkdocs", "build"], returncode, stdout, stderr)


@pytest.fixture(scope="session")
def build(tmp_path_factory, request):
    """The real course, built once for the whole test run."""
    given = request.config.getoption("site_dir")
    site = Path(given).resolve() if given else shared_folder(tmp_path_factory) / "site"
    return site, built_once(tmp_path_factory, "site", ROOT, site)


@pytest.fixture(scope="session")
def site(build):
    site, result = build
    if result.returncode:
        pytest.fail(f"mkdocs build failed:\n{result.stderr}")
    return site


@pytest.fixture(scope="session")
def site_url(site):
    with browser.serve(site) as url:
        yield url


@pytest.fixture(scope="session")
def course_url(site):
    """The site served as GitHub Pages serves it: under the path of mkdocs.yml's site_url
    (a project site, e.g. /course/), nothing outside it; the base URL has no trailing slash."""
    from urllib.parse import urlsplit

    from coursekit.pages import mkdocs_config

    with browser.serve(site, prefix=urlsplit(mkdocs_config(ROOT).site_url or "/").path) as url:
        yield url


@pytest.fixture(scope="session")
def chromium():
    if not browser.CHROMIUM.exists():
        pytest.skip(f"no Chromium at {browser.CHROMIUM}: apt-get install chromium-headless-shell")
    with browser.chromium() as chromium:
        yield chromium


@pytest.fixture
def tabs(chromium):
    """open_tab(width, scheme, search, **options): reader tabs (coursekit.browser.reader_tabs),
    their contexts closed after the test."""
    with browser.reader_tabs(chromium) as open_tab:
        yield open_tab


@pytest.fixture
def page(chromium):
    """A fresh browser tab, which does not search; page.off_site lists the requests that left
    127.0.0.1."""
    context = chromium.new_context()
    tab = context.new_page()
    browser.skip_search(tab)
    tab.set_default_timeout(15_000)
    tab.off_site = []
    tab.on("request", lambda request: request.url.startswith(
        ("http://127.0.0.1", "data:", "blob:")) or tab.off_site.append(request.url))
    yield tab
    context.close()


def fixture_course(dest: Path) -> Path:
    """The fixture course in dest, built with the real site's configuration (INHERIT), hooks
    and npm packages, its translations marked fresh, and a lesson scaffolded into it."""
    shutil.copytree(FIXTURE, dest)
    config = dest / "mkdocs.yml"
    config.write_text(config.read_text("utf-8").replace(
        "INHERIT: ../../mkdocs.yml", f"INHERIT: {ROOT / 'mkdocs.yml'}"), "utf-8")
    for name in ("hooks", "overrides", "node_modules"):
        (dest / name).symlink_to(ROOT / name)
    for name in ("stylesheets", "javascripts"):  # the site-wide assets mkdocs.yml names
        if (ROOT / "docs" / name).is_dir():
            shutil.copytree(ROOT / "docs" / name, dest / "docs" / name)
    new_lesson(dest, *SCAFFOLDED)
    for page in (dest / "docs").rglob("*.en.md"):
        mark(page)
    return dest


@pytest.fixture(scope="session")
def pristine_fixture(tmp_path_factory):
    """The fixture course, made once for the test run; tests break copies of it (`course`)."""
    return Path(once(tmp_path_factory, "fixture", lambda: str(
        fixture_course(tmp_path_factory.mktemp("fixture") / "course"))))


@pytest.fixture(scope="session")
def fixture_site(pristine_fixture, tmp_path_factory):
    """The fixture course, built once."""
    site = pristine_fixture.parent / "site"
    result = built_once(tmp_path_factory, "fixture-site", pristine_fixture, site, in_process=True)
    if result.returncode:
        pytest.fail(f"the fixture course does not build:\n{result.stderr}")
    return site


@pytest.fixture
def course(pristine_fixture, tmp_path):
    """A throwaway copy of the fixture course, for showing that a guard fails."""
    copy = tmp_path / "course"
    shutil.copytree(pristine_fixture, copy, symlinks=True)
    return copy


@pytest.fixture(scope="session")
def vllm_src():
    """The pinned vLLM release's source; a required test under CI=true, so no download fails it."""
    from coursekit import vllm_source

    try:
        return vllm_source.source_dir()
    except (OSError, RuntimeError) as error:
        pytest.skip(f"vLLM's source is not available: {error}")


def _edit(path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text, f"{path} no longer holds {old!r}: update this test"
    path.write_text(text.replace(old, new, 1), "utf-8")


@pytest.fixture
def edit():
    """edit(path, old, new): replace the first `old` of a file, which must hold it."""
    return _edit


@pytest.fixture(scope="session")
def stand_in_site(tmp_path_factory):
    """The stand-ins for vLLM and torch, installed by pip into a folder of their own, with the
    `vllm` command in its bin/, as the dry run installs them into its venv."""
    site = tmp_path_factory.mktemp("stand-in-site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--no-build-isolation", "--target", str(site),
                    str(STAND_IN / "torch"), str(STAND_IN / "vllm")], check=True)
    return site


@pytest.fixture
def stand_in_vllm(stand_in_site, monkeypatch):
    """The processes this test starts find the stand-ins before anything real: `vllm` and
    `nvidia-smi` first on PATH, the `vllm` and `torch` modules on PYTHONPATH, and
    GPU_LAB_DRY_RUN=1, without which the stand-ins refuse to run."""
    monkeypatch.setenv("PATH", os.pathsep.join(
        [str(stand_in_site / "bin"), str(STAND_IN / "bin"), os.environ["PATH"]]))
    monkeypatch.setenv("PYTHONPATH", str(stand_in_site))
    monkeypatch.setenv("GPU_LAB_DRY_RUN", "1")
    return stand_in_site


@functools.cache
def _stand_in_code(path: Path, mtime_ns: int):
    # Compiled once per process: some 470 tests each run stand_in.py afresh, and with no
    # bytecode cache (PYTHONDONTWRITEBYTECODE) compiling it costs them 18 ms each.
    return compile(path.read_bytes(), str(path), "exec")


@pytest.fixture
def load_stand_in():
    """load_stand_in(path under tests/stand_in_vllm, module name): a file of the dry run's
    stand-in for vLLM, run afresh as a module of its own."""
    def load(relative: str, name: str):
        path = ROOT / "tests/stand_in_vllm" / relative
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        exec(_stand_in_code(path, path.stat().st_mtime_ns), module.__dict__)
        return module
    return load


@pytest.fixture
def engine(monkeypatch, load_stand_in):
    """The stand-in's engine (stand_in.py), as the GPU job's dry run runs it."""
    monkeypatch.setenv("GPU_LAB_DRY_RUN", "1")
    monkeypatch.delenv("VLLM_LOGGING_STREAM", raising=False)
    return load_stand_in("vllm/vllm/stand_in.py", "stand_in_engine")
