"""The 404 page a reader lands on from a stale link (issue 40, point 10): in both languages,
with the way to each language's home page and a hint to search, and every file it asks for
found. GitHub Pages answers any missing path of the project site with the site's 404.html."""

from urllib.parse import urlsplit

from coursekit import ROOT
from coursekit.pages import mkdocs_config


def test_the_404_page_leads_home_in_both_languages_and_asks_for_nothing_missing(
        tabs, course_url):
    tab = tabs(width=390)
    tab.goto(f"{course_url}/404.html", wait_until="networkidle")
    root = urlsplit(mkdocs_config(ROOT).site_url).path
    homes = tab.eval_on_selector_all("article p a", "links => links.map(a => [a.closest('p')"
                                     ".lang, a.getAttribute('href')])")
    text = tab.locator("article").inner_text()
    assert sorted(homes) == [["en", f"{root}en/"], ["zh", root]], homes
    assert "页面不存在" in text and "Page not found" in text, text
    assert "搜索" in text and "search" in text, text
    assert tab.failed == [], tab.failed
    assert tab.off_site == [], tab.off_site
