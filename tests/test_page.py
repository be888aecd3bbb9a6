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


def test_a_formula_that_is_not_latex_that_can_be_read_is_shown_as_its_source_with_a_warning(tmp_path):
    """One formula costs a warning (an error under --strict), never the page: the rest is built, and
    that formula shows as what the author wrote."""
    from support import empty_course, run_build
    root = empty_course(tmp_path / "course")
    (root / "content/notes.md").write_text("---\ntitle: 公式\n---\n读得出的 $x^2$，读不出的 $\\frac{1}{$，后文照常。\n",
                                           encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert "warning: content/notes.md:4: math $\\frac{1}{$ is not LaTeX that can be read" in result.stderr
    page = (tmp_path / "dist/notes.html").read_text(encoding="utf-8")
    assert '<code class="math-source">$\\frac{1}{$</code>' in page and "<math" in page and "后文照常" in page
    assert run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict").returncode == 1
