"""search.json: each page's sections by heading, joined from remembered pieces into the same
bytes as the whole index written at once."""
import json

from sitegen.core.memo import Memo
from sitegen.render.search import page_sections, search_index

PAGES = {
    "course/guide.html": ('导读 "引号" \\ 与 </script>', '<article data-search-body><h2 id="a">第一节</h2><p>正文 "x" 与 \\ 符号</p>'
                                                     '<h2 id="b">第二节</h2><p>更多</p></article>'.encode()),
    "empty.html": ("空页", b"<article data-search-body></article>"),
    "index.html": ("首页", '<article data-search-body><p>欢迎</p></article>'.encode()),
}


def reference(pages) -> bytes:
    entries = []
    for output, (title, html) in sorted(pages.items()):
        if sections := page_sections(html.decode()):
            entries.append({"url": output.removesuffix(".html").removesuffix("index"), "title": title,
                            "sections": sections})
    return json.dumps({"pages": entries}, ensure_ascii=False, separators=(",", ":")).encode()


def test_the_index_is_the_json_of_the_whole_whether_parsed_or_remembered(tmp_path):
    first = search_index(PAGES, Memo(tmp_path / "memo"))
    again = search_index(PAGES, Memo(tmp_path / "memo"))      # every page's sections from the memo
    assert first == again == search_index(PAGES) == reference(PAGES)
    assert [page["title"] for page in json.loads(first)["pages"]] == ['导读 "引号" \\ 与 </script>', "首页"]
