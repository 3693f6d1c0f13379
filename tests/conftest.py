import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pages import ROOT, pages, python_blocks

CHROMIUM = Path("/usr/bin/chromium")


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
    labs = [block for page in pages() for block in python_blocks(page)[0] if block.gpu]
    terminalreporter.section("GPU lab blocks: listed here, run by the GPU job")
    for block in labs:
        terminalreporter.write_line(f"{block}  {block.code.include}")


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
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def chromium():
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            # Without these, Chromium keeps calling home, which this offline machine refuses.
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield browser
        browser.close()


@pytest.fixture
def repo_copy(tmp_path):
    """A throwaway copy of the course's sources, for showing that a guard fails."""
    copy = tmp_path / "repo"
    for name in ("docs", "snippets", "hooks"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    (copy / "node_modules").symlink_to(ROOT / "node_modules")
    return copy
