"""A built site served on 127.0.0.1 and Debian's Chromium, for the browser tests and the benchmark."""

import functools
import gzip
import http.server
import io
import os
import socket
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

# Debian's Chromium; $CHROMIUM points elsewhere (GitHub's runners have Google Chrome).
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
# Without these, Chromium keeps calling home, which an offline machine refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    prefix = "/"  # the URL path the site is served under, as a project site on GitHub Pages

    def log_message(self, *args):
        pass

    def send_head(self):
        if not self.path.startswith(self.prefix):
            self.send_error(404, "outside the site's path")
            return None
        return super().send_head()

    def translate_path(self, path):
        return super().translate_path("/" + path[len(self.prefix):])


class _GzipHandler(_QuietHandler):
    """Compresses text as static hosts such as GitHub Pages do."""

    TEXT = (".html", ".css", ".js", ".json", ".svg", ".xml")

    def send_head(self):
        if not self.path.startswith(self.prefix):
            return super().send_head()
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if (path.suffix not in self.TEXT or not path.is_file()
                or "gzip" not in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        body = gzip.compress(path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serve(directory: Path, compress: bool = False, prefix: str = "/"):
    """Serve a directory on a free port of 127.0.0.1 under the URL path prefix (e.g. /course/,
    as GitHub Pages serves a project site; anything outside it is a 404); yields its base URL,
    without the trailing slash."""
    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    base = _GzipHandler if compress else _QuietHandler
    handler = functools.partial(type("Handler", (base,), {"prefix": prefix}),
                                directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{prefix.rstrip('/')}"
    finally:
        server.shutdown()


@contextmanager
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def page_showing(site: Path, name: str) -> str | None:
    """The URL path, from the site's root, of the first built page showing a component."""
    marker = f'data-component="{name}"'
    for path in sorted(site.rglob("*.html")):
        if marker in path.read_text("utf-8"):
            folder = path.relative_to(site).parent.as_posix()
            return "/" if folder == "." else f"/{folder}/"
    return None


def component_shows(page, url: str, name: str) -> dict[str, str] | str:
    """What a component's [data-key] elements show once it is data-ready, or "error" when its
    [role=alert] element shows instead."""
    root = f'[data-component="{name}"]'
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(f"{root}[data-ready]", state="attached")
    if page.locator(f'{root} [role="alert"]').is_visible():
        return "error"
    return dict(page.eval_on_selector_all(
        f"{root} [data-key]", "elements => elements.map(e => [e.dataset.key, e.textContent])"))


def _skip_media(route):
    # Parity needs the page's HTML and scripts only; fonts and pictures only cost time.
    if route.request.resource_type in ("image", "font", "media"):
        return route.abort()
    return route.continue_()


def component_mismatches(page, base: str, site: Path, component, contract):
    """Each case of a component's parity contract (coursekit/components.py) where the built
    page does not show what the lesson's Python computes."""
    path = page_showing(site, component.name)
    if path is None:
        yield f"no built page shows the {component.name} component"
        return
    page.route("**/*", _skip_media)
    for state in contract.cases():
        query = urlencode(state)
        expected = contract.expected(state)
        shown = component_shows(page, f"{base}{path}?{query}", component.name)
        if shown != expected:
            yield f"{path}?{query}: the page shows {shown}, Python computes {expected}"
