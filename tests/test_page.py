"""A page as the build holds it (sitegen/pages/page.py): pickled with its blocks packed."""
from __future__ import annotations


def test_a_pickled_page_is_the_same_page_with_its_blocks_unpickled_only_when_read(monkeypatch):
    import pickle

    from sitegen.pages import content, page as pages
    page = content.parse_page("---\ntitle: 页\nlab: tiny\n---\n段落 {{ x }}。\n\n::: cell setup\n\n再一段。\n",
                              "content/p.md", "p.html")
    data = pickle.dumps(page)
    decoded = []
    real = pickle.loads
    monkeypatch.setattr(pages.pickle, "loads", lambda b: decoded.append(b) or real(b))
    copy = real(data)
    assert (copy.title, copy.output, copy.lab) == ("页", "p.html", "tiny") and decoded == []
    assert copy.kinds == ("cell", "prose") and decoded == []      # what kinds of block it has, too
    assert pickle.dumps(copy) == data and decoded == []          # pickled again without decoding
    assert copy == page and len(decoded) == 1                     # its blocks, decoded when read
    assert [b.kind for b in copy.blocks] == ["prose", "cell", "prose"] and len(decoded) == 1
