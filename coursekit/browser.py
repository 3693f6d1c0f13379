"""A built site served on 127.0.0.1 and Debian's Chromium, for the browser tests and the benchmark."""

import functools
import gzip
import http.server
import io
import json
import os
import re
import socket
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

# Debian's Chromium headless shell: the Blink of /usr/bin/chromium, built from the same source,
# without the desktop browser around it, which costs the browser tests a fifth more CPU per page.
# $CHROMIUM names another browser (GitHub's runners have Google Chrome).
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium-headless-shell"))
# Lighthouse starts a whole browser of its own.
DESKTOP_CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
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


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A browser that closes a connection it no longer needs (a page left while it loads)
        # is no error of the site's; anything else still prints its traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


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
    server = _Server(("127.0.0.1", 0), handler)
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


# Material's search index, which every page fetches and builds in a worker: about a fifth of
# a lesson page's CPU in the browser. Tabs that do not search get an empty one (skip_search):
# without any, Material's other scripts stop too (the colour scheme, tooltips).
SEARCH_INDEX = "**/search/search_index.json"
EMPTY_SEARCH_INDEX = json.dumps({"config": {"lang": ["en"], "separator": "[\\s\\-]+",
                                            "pipeline": []}, "docs": []})


def skip_search(page, ask_the_site: bool = False) -> None:
    """This tab's pages build an empty search index instead of the site's. ask_the_site=True
    still requests the site's index where each page looks for it, and answers with the site's
    status: a page that looks in the wrong place gets its 404."""
    page.route(SEARCH_INDEX, _asked_search_index if ask_the_site else _empty_search_index)


def _empty_search_index(route):
    route.fulfill(status=200, content_type="application/json", body=EMPTY_SEARCH_INDEX)


def _asked_search_index(route):
    response = route.fetch()
    route.fulfill(response=response, body=EMPTY_SEARCH_INDEX if response.ok else response.body())


def page_showing(site: Path, name: str) -> str | None:
    """The URL path, from the site's root, of the first built page showing a component."""
    marker = f'data-component="{name}"'
    for path in sorted(site.rglob("*.html")):
        if marker in path.read_text("utf-8"):
            folder = path.relative_to(site).parent.as_posix()
            return "/" if folder == "." else f"/{folder}/"
    return None


def ready(page, root: str) -> None:
    """Bring a component (root: its CSS selector) into view, where it sets up (the component
    kit's once: within a screen of the view), wait until it has computed (data-ready), and
    scroll the page back to where it was."""
    scrolled = page.evaluate("() => [scrollX, scrollY]")
    page.locator(root).first.scroll_into_view_if_needed()
    page.wait_for_selector(f"{root}[data-ready]", state="attached")
    page.evaluate("([x, y]) => scrollTo(x, y)", scrolled)


# The shown code blocks Material has not mounted yet (content.lazy in mkdocs.yml): no copy
# button. A block in a closed <details> or a tab not chosen mounts once it is shown.
UNMOUNTED_CODE = ("[...document.querySelectorAll('pre > code')].filter((code) =>"
                  " code.checkVisibility() && !code.parentElement.querySelector('.md-code__button'))")


def mount_code_blocks(page) -> None:
    """Bring each shown code block into view, where Material mounts it, wait until every one
    has its copy button, and scroll back."""
    page.evaluate(f"""async () => {{
      const [x, y] = [scrollX, scrollY];
      const frame = () => new Promise((done) => requestAnimationFrame(done));
      for (const code of {UNMOUNTED_CODE}) {{
        code.scrollIntoView({{block: 'center'}});
        await frame(); await frame();
      }}
      scrollTo(x, y);
    }}""")
    page.wait_for_function(f"!{UNMOUNTED_CODE}.length")


def link_state(page) -> dict[str, str]:
    """The values the open page's link holds, read from the page: page.url can lag behind a
    component's history.replaceState."""
    return dict(parse_qsl(urlsplit(page.evaluate("location.href")).query, keep_blank_values=True))


def fits(page, width: int) -> bool:
    """Whether the page, once a resized window has settled (Material's sidebars move for a
    moment), is no wider than the window."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function("width => document.scrollingElement.scrollWidth <= width",
                               arg=width, timeout=2_000)
    except PlaywrightTimeout:
        return False
    return True


def settle(page) -> None:
    """Wait until the transitions and finite animations of what the page draws have run: after
    a resize or a switch of colour scheme, Material fades its colours and navigation in (a
    contrast audit that reads them half-way fails). What is not drawn runs none; at most two
    seconds."""
    page.evaluate("""() => Promise.race([new Promise((done) => setTimeout(done, 2000)),
      Promise.all(document.getAnimations()
        .filter((running) => running.effect?.getTiming().iterations !== Infinity
          && running.effect?.target?.checkVisibility())
        .map((running) => running.finished.catch(() => null)))])""")


# What a component hides under its error (the kit's attempt sets hidden on its view when an
# input is refused) and still shows: a component's own display (.smb .smb-bar{display:flex})
# is as specific as the kit's .ck [hidden] and came later, so lesson 8's bar and figures stayed
# on screen under the error.
HIDDEN_SHOWN = """root => [...root.querySelectorAll('[hidden]')]
  .filter((element) => element.checkVisibility())
  .map((element) => element.className || element.tagName.toLowerCase())"""


def shown(page, name: str) -> dict[str, str] | str:
    """What a component on an open page shows, once it is data-ready: what its [data-key]
    elements show, or "error" when its [role=alert] element shows instead, and "error, still
    showing ..." when what it hid stays on screen."""
    root = f'[data-component="{name}"]'
    ready(page, root)
    if page.locator(f'{root} [role="alert"]').is_visible():
        still = page.locator(root).evaluate(HIDDEN_SHOWN)
        return f"error, still showing {', '.join(still)}" if still else "error"
    return dict(page.eval_on_selector_all(
        f"{root} [data-key]", "elements => elements.map(e => [e.dataset.key, e.textContent])"))


def _skip_media(route):
    # Parity needs the page's HTML and scripts only; fonts, pictures and search only cost time.
    if route.request.url.endswith("/search/search_index.json"):
        return _empty_search_index(route)
    if route.request.resource_type in ("image", "font", "media"):
        return route.abort()
    return route.fallback()  # to a route the test set, or the site


def component_mismatches(page, base: str, site: Path, component, contract,
                         first_only: bool = False) -> list[str]:
    """Each case of a component's parity contract (coursekit/components.py) where the built
    page does not show what the lesson's Python computes (with first_only, the cases up to the
    first batch that has one). One page holding only the component, as the built page has it
    (its HTML, script and style), takes every case in turn: the link's query is set and the
    component's script sets up a fresh copy of its element, as on a page load. (What the
    lesson page itself shows, in Material, test_components.py reads where it opens each lesson
    page.)"""
    path = page_showing(site, component.name)
    if path is None:
        return [f"no built page shows the {component.name} component"]
    cases = contract.cases()
    queries = [urlencode(state) for state in cases]
    bare = _bare_page((site / path.lstrip("/") / "index.html").read_text("utf-8"), component.name)
    bare_path = f"{path}{BARE_PAGE_NAME}"
    serve_bare = functools.partial(_fulfil, bare)
    page.route("**/*", _skip_media)
    page.route(f"**{bare_path}*", serve_bare)
    expected = {query: contract.expected(state) for query, state in zip(queries, cases)}
    mismatches = []
    try:
        page.goto(f"{base}{bare_path}", wait_until="domcontentloaded")
        for start in range(0, len(queries), PARITY_BATCH):
            batch = queries[start:start + PARITY_BATCH]
            found = page.evaluate("queries => window.parityCases(queries)", batch)
            mismatches += [f"{bare_path}?{query}: the page shows {each}, Python computes"
                           f" {expected[query]}" for query, each in zip(batch, found)
                           if each != expected[query]]
            if first_only and mismatches:
                break
    finally:
        page.unroute(f"**{bare_path}*", serve_bare)
        page.unroute("**/*", _skip_media)
    return mismatches


PARITY_BATCH = 10  # cases per call into the page


def component_alone(page, base: str, site: Path, path: str, name: str):
    """Open the component `name` alone: the bare page (see component_mismatches), cut from the
    built page at path (e.g. /en/lessons/kv-cache/) and served beside it. Returns
    open_link(query), which hands the component a fresh link as a page load does, and waits
    until it has computed. A lesson page load costs several times as much CPU: tests of what
    a component does with many links take them here, and open the lesson page for its layout."""
    bare = _bare_page((site / path.strip("/") / "index.html").read_text("utf-8"), name)
    page.route(f"**{path}{BARE_PAGE_NAME}*", functools.partial(_fulfil, bare))
    page.goto(f"{base}{path}{BARE_PAGE_NAME}", wait_until="domcontentloaded")

    def open_link(query: str) -> None:
        page.evaluate("query => openCase(query).then(() => null)", query)

    return open_link


# A name no built page has, beside the lesson page, so that the component's relative URLs hold.
BARE_PAGE_NAME = "component-parity.html"
# Material hands each page to the scripts that subscribe to document$; the bare page keeps them
# and, for each case, hands them a page whose component is a fresh copy of the one it was served
# with (cloned before its script ran: a copied <script> does not run again). What it reads is
# what shown() reads.
_BARE_PAGE = """<!doctype html><html lang="{language}"><head><meta charset="utf-8">
<script>window.document$ = {{scripts: [], subscribe(next) {{ this.scripts.push(next); }}}};</script>
</head><body>{component}
<script>
  // What no reader may be shown, whatever the link: JavaScript's names for broken numbers,
  // or a number too long to be one (the course's numbers are grouped by thousands).
  const UNREADABLE = /NaN|Infinity|undefined|\\d{{20}}/;
  const served = document.querySelector("[data-component]").cloneNode(true);
  const ready = (root) => new Promise((resolve) => {{
    const check = () => root.hasAttribute("data-ready") ? resolve() : setTimeout(check, 5);
    check();
  }});
  window.openCase = async (query) => {{
    history.replaceState(null, "", "?" + query);
    const root = served.cloneNode(true);
    document.querySelector("[data-component]").replaceWith(root);
    document$.scripts.forEach((next) => next(document));
    await ready(root);
    return root;
  }};
  window.parityCases = async (queries) => {{
    const shown = [];
    for (const query of queries) {{
      const root = await openCase(query);
      const alert = root.querySelector('[role="alert"]');
      const unreadable = root.innerText.match(UNREADABLE);
      const still = ({hidden_shown})(root);
      shown.push(unreadable ? "text showing " + unreadable[0]
        : alert && alert.checkVisibility() ? (still.length ? "error, still showing "
          + still.join(", ") : "error") : Object.fromEntries(
          [...root.querySelectorAll("[data-key]")].map((e) => [e.dataset.key, e.textContent])));
    }}
    return shown;
  }};
</script></body></html>"""
# HTML's elements that have no end tag.
VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                 "source", "track", "wbr"}
_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)[^>]*>")


def _bare_page(html: str, name: str) -> str:
    """A page holding only the component's root element, cut out of a built page's HTML."""
    start = html.rindex("<", 0, html.index(f'data-component="{name}"'))
    depth = 0
    for tag in _TAG.finditer(html, start):
        if tag[2].lower() in VOID_ELEMENTS:
            continue
        depth += -1 if tag[1] else 1
        if depth == 0:
            language = re.search(r'<html lang="([^"]+)"', html)
            return _BARE_PAGE.format(language=language[1] if language else "",
                                     component=html[start:tag.end()], hidden_shown=HIDDEN_SHOWN)
    raise ValueError(f"the {name} component's root element is never closed")


def _fulfil(body: str, route):
    route.fulfill(body=body, content_type="text/html; charset=utf-8")


@contextmanager
def reader_tabs(chromium):
    """Yields open_tab(width=1280, scheme="light", search="empty", **options): a new tab, in a
    context of its own (closed at the end), of a given width and colour scheme, that records
    what went wrong: requests that left the machine (tab.off_site), responses of 400 or more
    (tab.failed), and every URL asked for (tab.requested). Its pages build the site's search
    index only if it searches (search="built"); with search="asked" each page still asks the
    site for it, and fails on a 404 (skip_search). options go to Playwright's new_context."""
    contexts = []

    def open_tab(width=1280, scheme="light", search="empty", **options):
        assert search in ("empty", "asked", "built"), f"search={search!r}"
        context = chromium.new_context(viewport={"width": width, "height": 900},
                                       color_scheme=scheme, **options)
        contexts.append(context)
        tab = context.new_page()
        if search != "built":
            skip_search(tab, ask_the_site=search == "asked")
        tab.set_default_timeout(15_000)
        tab.off_site, tab.failed, tab.requested = [], [], []
        tab.on("request", lambda request: tab.requested.append(request.url))
        tab.on("request", lambda request: request.url.startswith(
            ("http://127.0.0.1", "data:", "blob:")) or tab.off_site.append(request.url))
        tab.on("response", lambda response: response.status < 400
               or tab.failed.append(f"{response.status} {response.url}"))
        return tab

    try:
        yield open_tab
    finally:
        for context in contexts:
            context.close()


# Material's name of each colour scheme, on <body data-md-color-scheme>.
MATERIAL_SCHEME = {"light": "default", "dark": "slate"}


def follow_scheme(page, scheme: str) -> None:
    """The reader's system switches to a colour scheme (light or dark); wait until Material,
    which follows it live, has."""
    page.emulate_media(color_scheme=scheme)
    page.wait_for_function("scheme => document.body.getAttribute('data-md-color-scheme')"
                           " === scheme", arg=MATERIAL_SCHEME[scheme])


# Types text into the component's field as a reader does, one input event per keystroke, all
# within one task: no pause can pass (the kit marks a field after 600 ms). Returns what the
# page shows right after, and the summary's height before and after.
TYPE_FAST = """([root, field, text, blur]) => {
  const component = document.querySelector(root);
  const input = component.querySelector(`[name="${field}"]`);
  const summary = component.querySelector('.ck-summary');
  const height = () => summary ? summary.getBoundingClientRect().height : 0;
  const before = height();
  input.focus();
  for (let i = 1; i <= text.length; i += 1) {
    input.value = text.slice(0, i);
    input.dispatchEvent(new Event('input', {bubbles: true}));
  }
  if (blur) input.blur();
  return {before, after: height(), invalid: input.getAttribute('aria-invalid')};
}"""
