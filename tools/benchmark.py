"""Measure the course: the test suite as a multiple of one strict build, the full build and the
build time per page as lessons are added, the rebuild under `mkdocs serve`, what each page
transfers, the KV cache explorer's time per input change, each language's search index, and
Lighthouse's scores for every lesson when Lighthouse is installed.

Run: .venv/bin/python tools/benchmark.py [--runs N] [--no-suite] [--lighthouse-only]
     [--lighthouse-runs N]
Lighthouse is not a dependency of the course (176 MB); for its scores:
  npm install --no-save lighthouse@13.5.0   (or LIGHTHOUSE=/path/to/lighthouse)
A report, not a test: timings on a shared 2-core machine are noisy, so it prints medians and
ratios measured in the same run.
Targets: suite <= 15 strict builds, full build <= 5 s, rebuild <= 2 s, a lesson's first load
<= 250 kB gzip, Lighthouse mobile performance >= 90 on every lesson.
"""

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from coursekit import ROOT
from coursekit.browser import CHROMIUM_ARGS, DESKTOP_CHROMIUM, chromium, free_port, ready, serve
from coursekit.built_site import copy_course, mkdocs_build
from coursekit.pages import lessons_in_nav, mkdocs_config
from coursekit.scaffold import new_lesson


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
        repo = copy_course(Path(tmp) / "course")
        port = free_port()
        # mkdocs serve serves the site under the path of site_url, as GitHub Pages does.
        path = urlsplit(mkdocs_config(ROOT).site_url or "/").path.rstrip("/")
        url = f"http://127.0.0.1:{port}{path}/lessons/kv-cache/"
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


def explorer_update_ms(site: Path, changes: int = 15) -> list[float]:
    """What the KV cache explorer reports (data-last-update-ms) for each change of its sequence
    length, on lesson 1's English page."""
    with serve(site) as base, chromium() as browser:
        page = browser.new_page()
        page.goto(base + "/en/lessons/kv-cache/", wait_until="load")
        root = '[data-component="kv-explorer"]'
        ready(page, root)
        times = []
        for value in range(1000, 1000 + changes):
            page.fill(f'{root} input[name="seq_len"]', str(value))
            times.append(float(page.eval_on_selector(root, "e => e.dataset.lastUpdateMs")))
        page.close()
    return times


def suite_seconds() -> float:
    """One run of the README's test command (package.json's `test`), set-up already done:
    the suite as CI runs it, on every core."""
    command = json.loads((ROOT / "package.json").read_text("utf-8"))["scripts"]["test"]
    tests = command.split("&&")[-1].strip()  # the part after `bash .ci/setup`
    start = time.perf_counter()
    result = subprocess.run(tests, shell=True, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode:
        sys.exit(f"the test suite ({tests}) failed:\n{result.stdout[-3000:]}")
    return seconds


def growth(counts=(0, 5, 10)) -> list[tuple[int, int, float]]:
    """(scaffolded lessons, pages, build seconds) for copies of the course with more lessons."""
    rows = []
    for count in counts:
        with tempfile.TemporaryDirectory() as tmp:
            course = copy_course(Path(tmp) / "course")
            for number in range(count):
                new_lesson(course, f"benchmark-lesson-{number}", f"测量课 {number}",
                           f"Benchmark lesson {number}")
            start = time.perf_counter()
            result = mkdocs_build(course, Path(tmp) / "site")
            seconds = time.perf_counter() - start
            if result.returncode:
                sys.exit(f"the course with {count} more lessons does not build:\n{result.stderr}")
            pages = len(list((Path(tmp) / "site").rglob("index.html")))
            rows.append((count, pages, seconds))
    return rows


CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
ROOTS = {"zh": "", "en": "en/"}


def lighthouse_pages(site: Path) -> list[tuple[str, str, str]]:
    """(language, path, preset): every lesson of both languages on a phone (issue 27's target
    is mobile performance >= 90 on each), and the first lesson on a desktop too."""
    # The lessons in reading order (the nav); a lesson has a snippet folder, a notebook none.
    lessons = [slug for slug in (Path(page).stem for page in lessons_in_nav(ROOT))
               if (ROOT / "snippets" / slug).is_dir() and (site / "lessons" / slug).is_dir()]
    pages = [(language, f"{root}lessons/{lesson}/", "mobile")
             for language, root in ROOTS.items() for lesson in lessons]
    return pages + [(language, f"{root}lessons/{lessons[0]}/", "desktop")
                    for language, root in ROOTS.items()]


def search_index_sizes(site: Path) -> list[str]:
    """Each language's search index, which a page downloads when its reader opens search."""
    return [f"search index {language}: {len(data) / 1000:.0f} kB,"
            f" {len(gzip.compress(data)) / 1000:.1f} kB gzip"
            for language, root in ROOTS.items()
            for data in [(site / root / "search" / "search_index.json").read_bytes()]]


def lighthouse_binary() -> str | None:
    for candidate in (os.environ.get("LIGHTHOUSE"), ROOT / "node_modules" / ".bin" / "lighthouse",
                      shutil.which("lighthouse")):
        if candidate and Path(candidate).is_file():
            return str(candidate)
    return None


def score(report: dict, category: str) -> int:
    """A Lighthouse report's score of a category, out of 100."""
    return round(100 * (report["categories"][category]["score"] or 0))


def lighthouse(site: Path, runs: int) -> list[str]:
    """Lighthouse on every lesson of both languages (mobile; the first lesson on desktop too),
    the site served with gzip under the path of site_url as GitHub Pages serves it, in the
    tests' Chromium; `runs` times per page, reporting the run of median performance (a
    single run's performance score varies by a few points)."""
    binary = lighthouse_binary()
    if binary is None:
        return ["lighthouse: not installed; npm install --no-save lighthouse@13.5.0"
                " (or LIGHTHOUSE=/path/to/lighthouse) for its scores"]
    if not DESKTOP_CHROMIUM.is_file():
        return [f"lighthouse: no browser at {DESKTOP_CHROMIUM}; apt-get install chromium, or"
                " CHROMIUM=/path/to/chromium (Debian's chromium-headless-shell works too)"]
    lines = []
    prefix = urlsplit(mkdocs_config(ROOT).site_url or "/").path
    with serve(site, compress=True, prefix=prefix) as base:
        for _, path, preset in lighthouse_pages(site):
            reports = []
            for _ in range(runs):
                result = subprocess.run(
                    [binary, f"{base}/{path}", "--output=json", "--output-path=stdout",
                     "--quiet", f"--only-categories={','.join(CATEGORIES)}",
                     "--chrome-flags=--headless=new " + " ".join(CHROMIUM_ARGS),
                     *(["--preset=desktop"] if preset == "desktop" else [])],
                    capture_output=True, text=True,
                    env={**os.environ, "CHROME_PATH": str(DESKTOP_CHROMIUM)})
                if result.returncode:
                    lines.append(f"lighthouse {path} {preset}: failed: {result.stderr[-500:]}")
                    break
                reports.append(json.loads(result.stdout))
            if len(reports) < runs:
                continue
            reports.sort(key=lambda report: score(report, "performance"))
            report = reports[len(reports) // 2]
            scores = " ".join(f"{name} {score(report, name)}" for name in CATEGORIES)
            if runs > 1:
                scores += (f" (performance: median of {runs} runs,"
                           f" {score(reports[0], 'performance')}-{score(reports[-1], 'performance')})")
            audits = report["audits"]

            def value(*names, audits=audits):  # audit ids differ between Lighthouse releases
                return next((audits[name].get("numericValue") or 0 for name in names
                             if name in audits), 0)

            groups = {item["group"]: item["duration"] for item in
                      audits["mainthread-work-breakdown"]["details"]["items"]}
            # Script time by file: Material's bundle, and what the course adds.
            ours = sum(item["total"] for item in audits["bootup-time"]["details"]["items"]
                       if "/bundle." not in item["url"] and item["url"].endswith(".js"))
            details = (f"DOM {value('dom-size', 'dom-size-insight'):,.0f} nodes,"
                       f" main thread {value('mainthread-work-breakdown') / 1000:.1f} s"
                       f" (style and layout {groups.get('styleLayout', 0) / 1000:.1f} s,"
                       f" the course's scripts {ours:,.0f} ms),"
                       f" TBT {value('total-blocking-time'):,.0f} ms,"
                       f" LCP {value('largest-contentful-paint') / 1000:.1f} s")
            failing = [audit_id for audit_id, audit in audits.items()
                       if audit.get("score") is not None and audit["score"] < 1
                       and audit.get("scoreDisplayMode") == "binary"]
            lines.append(f"lighthouse {path:32} {preset:7}: {scores}; {details}"
                         + (f"; failing: {', '.join(failing)}" if failing else ""))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per timing (default 5)")
    parser.add_argument("--no-suite", action="store_true", help="skip timing the test suite")
    parser.add_argument("--lighthouse-only", action="store_true",
                        help="only Lighthouse's scores for the lessons")
    parser.add_argument("--lighthouse-runs", type=int, default=3,
                        help="Lighthouse runs per page, the median reported (default 3)")
    arguments = parser.parse_args()
    runs = arguments.runs
    if arguments.lighthouse_only:
        with tempfile.TemporaryDirectory() as site:
            result = mkdocs_build(ROOT, Path(site))
            if result.returncode:
                sys.exit(f"mkdocs build failed:\n{result.stderr}")
            print("\n".join(lighthouse(Path(site), arguments.lighthouse_runs)))
        return

    if not arguments.no_suite:
        # Builds before and after the suite, so that both see the machine as it was.
        builds = full_build_seconds(1)
        suite = suite_seconds()
        build = statistics.median(builds + full_build_seconds(2))
        print(f"test suite: {suite:.0f} s = {suite / build:.1f} strict builds of the course"
              f" ({build:.2f} s, median of 3 around it); target <= 15")
    for count, pages, seconds in growth():
        print(f"course + {count:>2} scaffolded lessons: {pages} pages built in {seconds:.2f} s,"
              f" {1000 * seconds / pages:.0f} ms per page")
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
        print("target: lesson page <= 250 kB gzip on first load")
        times = explorer_update_ms(Path(site))
        print(f"KV cache explorer: median {statistics.median(times):.2f} ms, max {max(times):.2f} ms"
              " per input change")
        print("\n".join(search_index_sizes(Path(site))))
        print("\n".join(lighthouse(Path(site), arguments.lighthouse_runs)))


if __name__ == "__main__":
    main()
