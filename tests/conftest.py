import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import browser
from browser import CHROMIUM, serve
from pages import ROOT, pages, python_blocks


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU; may skip unless REQUIRE_GPU=1")


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


def pytest_terminal_summary(terminalreporter):
    from guards import stale_translations

    labs = [block for page in pages() for block in python_blocks(page)[0] if block.gpu]
    terminalreporter.section("GPU lab blocks: listed here, run by the GPU job")
    for block in labs:
        terminalreporter.write_line(f"{block}  {block.code.include}")
    stale = stale_translations(ROOT)
    if stale:
        terminalreporter.section("translations that may be out of date (shown with a notice)")
        for line in stale:
            terminalreporter.write_line(line)


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


@pytest.fixture(scope="session")
def build(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    return site, mkdocs_build(ROOT, site)


@pytest.fixture(scope="session")
def site(build):
    site, result = build
    if result.returncode:
        pytest.fail(f"mkdocs build failed:\n{result.stderr}")
    return site


@pytest.fixture(scope="session")
def site_url(site):
    with serve(site) as url:
        yield url


@pytest.fixture(scope="session")
def chromium():
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium")
    with browser.chromium() as chromium:
        yield chromium


def edit_file(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text, f"{path} no longer holds {old!r}: update this test"
    path.write_text(text.replace(old, new, 1), "utf-8")


def copy_course(copy: Path) -> Path:
    """The sources the site is built from, copied (node_modules linked) into a folder."""
    for name in ("docs", "snippets", "hooks"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    (copy / "node_modules").symlink_to(ROOT / "node_modules")
    return copy


@pytest.fixture
def repo_copy(tmp_path):
    """A throwaway copy of the course's sources, for showing that a guard fails."""
    return copy_course(tmp_path / "repo")


@pytest.fixture(scope="session")
def vllm_src():
    """The pinned vLLM release's source; a required test under CI=true, so no download fails it."""
    import vllm_source

    try:
        return vllm_source.source_dir()
    except (OSError, RuntimeError) as error:
        pytest.skip(f"vLLM's source is not available: {error}")
