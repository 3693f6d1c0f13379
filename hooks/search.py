"""Chinese search that matches words, not single characters.

Material segments Chinese text with jieba when it builds the search index (words between
U+200B). Its search worker splits a Chinese query again, greedily, into the longest words the
index holds, so that the query agrees with the index; but that loop stops one character short
of the end of the query (`j < query.length`): a query never matches as a whole word. "分页"
becomes "分*" and finds 跑分, 分块 and 分组, "前缀缓存" becomes "前缀*" and loses 缓存, and the
opened page highlights `?h=分`. The worker then joins the words with "* " before adding a "*"
to every word, so each word but the last ends in "**": it is shown as missing ("缺少: 前缀*")
and left out of `?h=`. Material offers no hook into the worker, so this hook corrects these
two spots in the worker the build ships (mkdocs-material 9.8.x,
src/templates/assets/javascripts/integrations/search/query/segment/index.ts and
search/_/index.ts), and fails the build if the code it corrects is no longer there, which an
upgrade of Material must look at.
"""

from pathlib import Path

from mkdocs.exceptions import PluginError

WORKERS = Path("assets", "javascripts", "workers")
# What is corrected, in the minified worker and in the sources its source map keeps.
FIXES = [
    (".min.js", "for(let o=s+1;o<t.length;o++)t.slice(s,o)in e",
     "for(let o=s+1;o<=t.length;o++)t.slice(s,o)in e"),
    (".min.js", 'this.index.invertedIndex)].join("* ")',
     'this.index.invertedIndex)].join(" ")'),
    (".min.js.map", "for (let j = i + 1; j < query.length; j++)",
     "for (let j = i + 1; j <= query.length; j++)"),
    (".min.js.map", 'invertedIndex)]\\n        .join(\\"* \\")',
     'invertedIndex)]\\n        .join(\\" \\")'),
]


def fix_segmenter(site_dir: Path) -> list[Path]:
    """Correct the query segmenter in the built search worker; return the files changed.
    Running it again on a corrected site changes nothing."""
    changed = []
    for suffix, wrong, right in FIXES:
        found = sorted((site_dir / WORKERS).glob(f"search.*{suffix}"))
        if len(found) != 1:
            raise PluginError(f"hooks/search.py: expected one search worker *{suffix} in "
                              f"{site_dir / WORKERS}, found {[p.name for p in found]}")
        path = found[0]
        text = path.read_text("utf-8")
        if text.count(wrong) == 1 and right not in text:
            path.write_text(text.replace(wrong, right), "utf-8")
            changed.append(path)
        elif not (text.count(right) == 1 and wrong not in text):
            raise PluginError(f"hooks/search.py: {path.name} no longer has the code this hook"
                              f" corrects ({wrong!r}); check whether Material still splits"
                              " Chinese queries that way, then update or remove this hook")
    return changed


def on_post_build(config):
    fix_segmenter(Path(config.site_dir))
