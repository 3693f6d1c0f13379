"""Measure the site: full strict build, rebuild under `mkdocs serve`, and what each page transfers.

Run: .venv/bin/python tests/benchmark.py [--runs N]
A report, not a test: timings on a shared 2-core machine are noisy, so it prints medians.
Targets: full build <= 5 s, rebuild <= 2 s, lesson page <= 1 MB transferred.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from browser import chromium, free_port, serve
from conftest import copy_course, mkdocs_build
from pages import ROOT


def full_build_seconds(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as site:
            start = time.perf_counter()
            result = mkdocs_build(ROOT, Path(site))
            times.append(time.perf_counter() - start)
            if result.returncode:
                sys.exit(f"mkdocs build failed:\n{result.stderr}")
    return times


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")
    except OSError:
        return ""


def rebuild_seconds(runs: int) -> list[float]:
    """Time from saving an edited page to `mkdocs serve` serving the new text."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = copy_course(Path(tmp))
        port = free_port()
        url = f"http://127.0.0.1:{port}/lessons/kv-cache/"
        server = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
            cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while "KV" not in fetch(url):
                if time.monotonic() > deadline:
                    sys.exit("mkdocs serve did not start within 60 s")
                time.sleep(0.2)
            page = repo / "docs/lessons/kv-cache.zh.md"
            times = []
            for run in range(runs):
                marker = f"benchmark-edit-{run}"
                start = time.perf_counter()
                page.write_text(page.read_text("utf-8") + f"\n{marker}\n", "utf-8")
                while marker not in fetch(url):
                    if time.perf_counter() - start > 60:
                        sys.exit("the edited page was not served within 60 s")
                    time.sleep(0.05)
                times.append(time.perf_counter() - start)
            return times
        finally:
            server.terminate()
            server.wait()


def page_transfers(site: Path, compress: bool) -> dict[str, tuple[int, int]]:
    """Bytes received (bodies and headers) and requests, per page, loaded in Chromium."""
    results = {}
    with serve(site, compress) as base, chromium() as browser:
        for html in sorted(site.rglob("index.html")):
            path = "/" + html.parent.relative_to(site).as_posix().removeprefix(".") + "/"
            path = path.replace("//", "/")
            context = browser.new_context()
            page = context.new_page()
            requests = []
            page.on("requestfinished", lambda request: requests.append(request))
            page.goto(base + path, wait_until="networkidle")
            total = 0
            for request in requests:
                sizes = request.sizes()
                total += sizes["responseBodySize"] + sizes["responseHeadersSize"]
            results[path] = (total, len(requests))
            context.close()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per timing (default 5)")
    runs = parser.parse_args().runs

    builds = full_build_seconds(runs)
    print(f"full build --strict: median {statistics.median(builds):.2f} s"
          f" over {runs} runs (min {min(builds):.2f}, max {max(builds):.2f}); target <= 5 s")
    rebuilds = rebuild_seconds(runs)
    print(f"rebuild after editing one page under mkdocs serve: median"
          f" {statistics.median(rebuilds):.2f} s over {runs} edits; target <= 2 s")
    with tempfile.TemporaryDirectory() as site:
        mkdocs_build(ROOT, Path(site))
        plain = page_transfers(Path(site), compress=False)
        gzipped = page_transfers(Path(site), compress=True)
        print("page transfers in Chromium: uncompressed / gzip (as GitHub Pages serves them)")
        for path, (size, count) in plain.items():
            print(f"  {path:<32} {size / 1000:7.1f} kB / {gzipped[path][0] / 1000:6.1f} kB"
                  f" in {count:2d} requests")
    print("target: lesson page <= 1000 kB")


if __name__ == "__main__":
    main()
