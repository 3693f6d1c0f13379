"""The search index downloads when a reader opens search, not with every page.

Material's bundle asks for search/search_index.json as soon as a page loads, from two places:
the search worker's set-up, which waits for the search dialog to open only on `file:` pages
(src/templates/assets/javascripts/integrations/search/worker/_/index.ts), and the highlighter
of a result's words (components/search/highlight/index.ts), which subscribes to the index even
on a page opened without `?h=`. This hook makes both wait, in the bundle the build ships
(mkdocs-material 9.8.x): the worker for the dialog to open (clicking the field or the search
icon, the `/`, `s` or `f` keys, or a `?q=` link, all of which open it), the highlighter for a
page opened with `?h=`. Nothing else waits on the index, so the colour scheme, tooltips and
copy buttons work as before. The build fails if the code it changes is no longer there, which
an upgrade of Material must look at.
"""

from pathlib import Path

from mkdocs.exceptions import PluginError

JAVASCRIPTS = Path("assets", "javascripts")
FIXES = [
    # setupSearchWorker: merge(of(location.protocol !== "file:"), watchToggle("search"))
    ('L($(location.protocol!=="file:"),Je("search")).pipe(Re(o=>o),b(()=>t))',
     'L($(!1),Je("search")).pipe(Re(o=>o),b(()=>t))'),
    # mountSearchHighlight: combineLatest([index$, location$ with ?h=]) -> index$ once ?h= is seen
    ('z([t,r.pipe(Q(we()),g(o=>!!o.searchParams.get("h")))])',
     'r.pipe(Q(we()),g(o=>!!o.searchParams.get("h")),b(o=>t.pipe(m(n=>[n,o]))))'),
]


def defer_index(site_dir: Path) -> list[Path]:
    """Make the built bundle ask for the search index on demand; return the files changed.
    Running it again on a changed site changes nothing."""
    found = sorted((site_dir / JAVASCRIPTS).glob("bundle.*.min.js"))
    if len(found) != 1:
        raise PluginError(f"hooks/search_on_demand.py: expected one bundle.*.min.js in "
                          f"{site_dir / JAVASCRIPTS}, found {[p.name for p in found]}")
    path = found[0]
    text = original = path.read_text("utf-8")
    for wrong, right in FIXES:
        if text.count(wrong) == 1 and right not in text:
            text = text.replace(wrong, right)
        elif not (text.count(right) == 1 and wrong not in text):
            raise PluginError(f"hooks/search_on_demand.py: {path.name} no longer has the code"
                              f" this hook changes ({wrong!r}); check when Material now asks"
                              " for the search index, then update or remove this hook")
    if text != original:
        path.write_text(text, "utf-8")
        return [path]
    return []


def on_post_build(config):
    defer_index(Path(config.site_dir))
