"""Numbered formulas and references to them and to sections (sitegen/pages/labels.py), built: in this
site's syntax, MyST's and Quarto's, on a page and in notebooks; an unknown or doubled label is an
error at its line."""
from __future__ import annotations

import json

import pytest
from urllib.parse import unquote

from helpers import Elements
from support import run_build, tiny_site

nbformat = pytest.importorskip("nbformat")

# The same page in each syntax: two labelled formulas, one without a label, a labelled section, and
# references to each (by number, by title, with text of the author's).
PAGES = {
    "site": """## 需求 {#sec-demand}

$$ q = 100 - 10 p $$ {#demand}

$$ a = b $$

$$ q = 10 p $$ {#supply}

由 [](#demand) 与 [](#supply)，见 [](#sec-demand)；[第 %s 式](#supply)。
""",
    "myst": """(sec-demand)=
## 需求

```{math}
:label: demand
q = 100 - 10 p
```

$$ a = b $$

$$
q = 10 p
$$ (supply)

由 {eq}`demand` 与 {eq}`supply`，见 {ref}`sec-demand`；{numref}`第 %s 式 <supply>`。
""",
    "quarto": """## 需求 {#sec-demand}

$$
q = 100 - 10 p
$$ {#eq-demand}

$$ a = b $$

$$ q = 10 p $$ {#eq-supply}

由 @eq-demand 与 @eq-supply，见 @sec-demand；[第 %s 式](#eq-supply)。
""",
}


def page_of(html: str) -> Elements:
    return Elements(html)


def built(tmp_path, name: str, title: str, body: str, *files: tuple[str, bytes]) -> Elements:
    """content/NAME.md of a tiny site, built --strict (with `files` beside it): its page, parsed."""
    root = tiny_site(tmp_path / "site")
    for rel, data in files:
        (root / "content" / rel).write_bytes(data)
    (root / f"content/{name}.md").write_text(f"---\ntitle: {title}\n---\n" + body, encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    return page_of((root / f"dist/{name}.html").read_text(encoding="utf-8"))


@pytest.mark.parametrize("syntax", sorted(PAGES))
def test_labelled_formulas_are_numbered_and_references_show_their_number_or_title(tmp_path, syntax):
    page = built(tmp_path, "eqs", "公式", PAGES[syntax])
    prefix = "eq-" if syntax == "quarto" else ""
    numbered = page.find("div", **{"class": "equation"})
    assert [(e[1]["id"], e[2][-3:]) for e in numbered] == [(f"{prefix}demand", "(1)"), (f"{prefix}supply", "(2)")]
    assert len(page.find("div", **{"class": "math"})) == 3              # the one without a label: no number
    links = [(e[1]["href"], e[2]) for e in page.find("a") if e[1].get("href", "").startswith("eqs#")
             and "heading-anchor" not in e[1].get("class", "")]
    assert links == [(f"eqs#{prefix}demand", "(1)"), (f"eqs#{prefix}supply", "(2)"), ("eqs#sec-demand", "需求"),
                     (f"eqs#{prefix}supply", "第 2 式")]
    assert [e[1]["id"] for e in page.find("h2")] == ["sec-demand"]


def test_a_label_defined_twice_is_an_error_and_a_reference_to_no_label_a_warning_at_their_lines(tmp_path):
    """A reference to no label (a chapter taken without the one it points into) shows the label's name,
    as Sphinx and Quarto show one, and says so; --strict makes that an error."""
    root = tiny_site(tmp_path / "site")
    (root / "content/eqs.md").write_text("---\ntitle: 公式\n---\n$$ x $$ {#one}\n\n$$ y $$ {#one}\n\n"
                                         "见 {eq}`tow`。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "content/eqs.md:6: the label 'one' is defined twice (first at line 4): rename one" in result.stderr
    (root / "content/eqs.md").write_text("---\ntitle: 公式\n---\n$$ x $$ {#one}\n\n见 {eq}`tow`。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    said = "content/eqs.md:6: [](#tow) refers to no label of this page or any other (this page's: one)"
    assert said in result.stderr
    assert [e[2] for e in page_of((root / "dist/eqs.html").read_text(encoding="utf-8")).find("p")] == ["", "见 tow。", "最小站点"]
    result = run_build(root, root / "dist", root / ".cache")
    assert said in result.stderr                                  # said again by a build that reuses everything
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 1 and said in result.stderr


# A chapter that refers to the labels of another, in each syntax: a formula, a figure, a section.
CHAPTER_ONE = """## 需求 {#sec-demand}

$$ a = b $$ {#other}

$$ q = 100 - 10 p $$ {#eq-demand}

![需求曲线](curve.png "需求曲线"){#fig-curve}

![供给曲线](curve.png "供给曲线"){#fig-supply}
"""
REFERRING = {
    "site": "由 [](#eq-demand)，见 [](#fig-curve) 与 [](#sec-demand)；[第 %s 式](ch1.md#eq-demand)。\n",
    "myst": "由 {eq}`eq-demand`，见 {numref}`fig-curve` 与 {ref}`sec-demand`；{numref}`第 %s 式 <eq-demand>`。\n",
    "quarto": "由 @eq-demand，见 @fig-curve 与 @sec-demand；[第 %s 式](ch1.md#eq-demand)。\n",
}


@pytest.mark.parametrize("syntax", sorted(REFERRING))
def test_a_reference_to_another_page_s_label_links_there_and_shows_its_number(tmp_path, syntax):
    root = tiny_site(tmp_path / "site")
    (root / "content/curve.png").write_bytes(PIXEL)
    (root / "content/ch1.md").write_text("---\ntitle: 第一章\n---\n" + CHAPTER_ONE, encoding="utf-8")
    (root / "content/ch2.md").write_text("---\ntitle: 第二章\n---\n" + REFERRING[syntax], encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = page_of((root / "dist/ch2.html").read_text(encoding="utf-8"))
    links = [(e[1]["href"], e[2]) for e in page.find("a") if e[1].get("href", "").startswith("ch1#")]
    assert links == [("ch1#eq-demand", "(2)"), ("ch1#fig-curve", "图 1"), ("ch1#sec-demand", "需求"),
                     ("ch1#eq-demand", "第 2 式")]
    # Its formulas swapped, then its figures, renumber them where they are shown, in an incremental build
    # as in a clean one (the differential test compares every file). Neither changes the math font or
    # the page's ids: the first takes a full build, which reuses the other page unless what it read
    # changed; the second could be patched in, unless what other pages show of it is its face.
    one = CHAPTER_ONE.replace("$$ a = b $$ {#other}", "@").replace("$$ q = 100 - 10 p $$ {#eq-demand}", "$$ a = b $$ {#other}")
    for edited, shown in ((one.replace("@", "$$ q = 100 - 10 p $$ {#eq-demand}"), ("(1)", "第 1 式")),
                          (one.replace("@", "$$ q = 100 - 10 p $$ {#eq-demand}").replace("fig-curve}", "@").replace(
                              "fig-supply}", "fig-curve}").replace("@", "fig-supply}"), ("图 2",))):
        (root / "content/ch1.md").write_text("---\ntitle: 第一章\n---\n" + edited, encoding="utf-8")
        result = run_build(root, root / "dist", root / ".cache", "--strict")
        assert result.returncode == 0, result.stderr
        page = page_of((root / "dist/ch2.html").read_text(encoding="utf-8"))
        links = [e[2] for e in page.find("a") if e[1].get("href", "") in ("ch1#eq-demand", "ch1#fig-curve")]
        assert [text for text in links if text in shown] == list(shown)


def test_a_label_several_pages_define_is_named_with_its_page(tmp_path):
    root = tiny_site(tmp_path / "site")
    for name in ("ch1", "ch2"):
        (root / f"content/{name}.md").write_text(f"---\ntitle: {name}\n---\n$$ x $$ {{#same}}\n", encoding="utf-8")
    (root / "content/ch3.md").write_text("---\ntitle: ch3\n---\n见 [](#same)。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert ("content/ch3.md:4: [](#same) could be the label 'same' of any of these pages: ch1.html, ch2.html: "
            "name the page's source, as [](chapter.md#label)") in result.stderr
    (root / "content/ch3.md").write_text("---\ntitle: ch3\n---\n见 [](ch2.md#same)。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = page_of((root / "dist/ch3.html").read_text(encoding="utf-8"))
    assert [(e[1]["href"], e[2]) for e in page.find("a") if "#same" in e[1].get("href", "")] == [("ch2#same", "(1)")]
    (root / "content/ch2.md").write_text("---\ntitle: ch2\n---\n$$ x $$ {#renamed}\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")      # (its check read that label)
    assert result.returncode == 1 and "content/ch3.md:4: [](ch2.md#same) refers to no label of ch2.md" in result.stderr


def test_a_reference_with_its_own_text_reaches_another_page_s_label_but_not_past_a_heading_of_its_own(tmp_path):
    """{ref}`text <label>` (and [text](#label)) to a label only another page defines links there; a heading
    of the page itself whose id is that name keeps the link on the page."""
    root = tiny_site(tmp_path / "site")
    (root / "content/ch1.md").write_text("---\ntitle: 第一章\n---\n## 需求 {#sec-demand}\n\n正文。\n\n## 别处 {#local}\n\n正文。\n",
                                         encoding="utf-8")
    (root / "content/ch2.md").write_text("---\ntitle: 第二章\n---\n见{ref}`需求一节 <sec-demand>`与[本页一节](#local)。\n\n"
                                         "## Local\n\n正文。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = page_of((root / "dist/ch2.html").read_text(encoding="utf-8"))
    assert [(e[1]["href"], e[2]) for e in page.find("a") if e[2] in ("需求一节", "本页一节")] == [
        ("ch1#sec-demand", "需求一节"), ("ch2#local", "本页一节")]


def test_myst_s_link_to_a_label_named_with_a_colon_reaches_another_page_and_an_inventory_link_is_its_text(tmp_path):
    """As Jupyter Book's chapters write them: [text](content:glue) and [](content:glue) name a label of any
    page (no heading's anchor has a colon), never an address with a scheme no browser opens; one that no
    page defines, and MyST's intersphinx link [text](inv:project#target), show as their text, said."""
    root = tiny_site(tmp_path / "site")
    (root / "content/ch1.md").write_text("---\ntitle: 第一章\n---\n(content:glue)=\n## 粘贴输出\n\n正文。\n",
                                         encoding="utf-8")
    (root / "content/ch2.md").write_text(
        "---\ntitle: 第二章\n---\n见[粘贴](content:glue)与 [](content:glue)；[别处](content:nowhere)；"
        "[替换](inv:myst-parser#syntax/substitutions)；[网页](https://example.org/)。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert "content/ch2.md:4: [](#content:nowhere) refers to no label of this page or any other" in result.stderr
    assert "content/ch2.md:4: [替换](inv:myst-parser#syntax/substitutions) links into another project's " \
           "documentation by its inventory (MyST's intersphinx)" in result.stderr
    page = page_of((root / "dist/ch2.html").read_text(encoding="utf-8"))
    assert [(e[1]["href"], e[2]) for e in page.find("a") if "ch1" in e[1].get("href", "") or ":" in e[1].get("href", "")] \
        == [("ch1#content:glue", "粘贴"), ("ch1#content:glue", "粘贴输出"), ("https://example.org/", "网页")]
    assert "见粘贴与 粘贴输出；别处；替换；网页。" in [e[2] for e in page.find("p")]
    (root / "content/ch1.md").write_text("---\ntitle: 第一章\n---\n(content:glue)=\n## 粘贴\n", encoding="utf-8")
    run_build(root, root / "dist", root / ".cache")     # (what ch2 shows of it was read: it is made again)
    assert "见粘贴与 粘贴；别处；替换；网页。" in [e[2] for e in page_of((root / "dist/ch2.html").read_text(encoding="utf-8")).find("p")]


def test_a_notebook_s_labelled_formulas_are_numbered_and_its_download_numbers_them_as_jupyter_does(tmp_path):
    """In an .ipynb's Markdown cells (MyST's `$$ ... $$ (label)` across lines) and in a MyST Markdown
    notebook's."""
    root = tiny_site(tmp_path / "site")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 公式\n\n$$\nq = 100 - 10 p\n$$ (demand)\n\n见 {eq}`demand`。"),
        nbformat.v4.new_code_cell("x = 1")])
    notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (root / "content/nb.ipynb").write_text(nbformat.writes(notebook), encoding="utf-8")
    (root / "content/text.md").write_text(
        "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n# 文本\n\n```{math}\n:label: demand\n"
        "q = 1\n```\n\n见 {eq}`demand`。\n\n```{code-cell} ipython3\nx = 1\n```\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    for name in ("nb", "text"):
        page = page_of((root / f"dist/{name}.html").read_text(encoding="utf-8"))
        assert [e[1]["id"] for e in page.find("div", **{"class": "equation"})] == ["demand"], name
        assert [e[2] for e in page.find("a", href=f"{name}#demand")] == ["(1)"], name


def test_an_md_page_s_download_numbers_its_formulas_with_tag(tmp_path):
    root = tiny_site(tmp_path / "site")
    index = (root / "content/index.md").read_text(encoding="utf-8")
    (root / "content/index.md").write_text(index + "\n$$ E = mc^2 $$ {#energy}\n\n由 [](#energy) 可知。\n",
                                           encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    downloads = [json.loads(p.read_text(encoding="utf-8")) for p in (root / "dist").rglob("*.ipynb")]
    markdown = ["".join(c["source"]) for nb in downloads for c in nb["cells"] if c["cell_type"] == "markdown"]
    assert any("$$E = mc^2 \\tag{1}$$" in text for text in markdown), markdown
    assert any("[(1)](" in text and "#energy)" in text for text in markdown), markdown


FIGURES = {
    "site": """![蓝色的方块](cat.png "第一张图。"){#blue}

| a | b |
|---|---|
| 1 | 2 |

: 一些数 {#numbers}

见 [](#blue) 与 [](#numbers)，[第 %s 张图](#blue)。
""",
    "myst": """```{figure} cat.png
:name: blue
:alt: 蓝色的方块

第一张图。
```

```{table} 一些数
:name: numbers

| a | b |
|---|---|
| 1 | 2 |
```

见 {numref}`blue` 与 {numref}`numbers`，{numref}`第 %s 张图 <blue>`。
""",
    "quarto": """![第一张图。](cat.png){#fig-blue fig-alt="蓝色的方块"}

| a | b |
|---|---|
| 1 | 2 |

: 一些数 {#tbl-numbers}

见 @fig-blue 与 @tbl-numbers，[第 %s 张图](#fig-blue)，[-@fig-blue]，[Fig. @fig-blue]。
""",
}
PIXEL = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c636060f80f0000010100"
                      "5a4d6e4b0000000049454e44ae426082")


@pytest.mark.parametrize("syntax", sorted(FIGURES))
def test_labelled_figures_and_tables_are_numbered_and_references_show_their_number(tmp_path, syntax):
    page = built(tmp_path, "figs", "图表", FIGURES[syntax], ("cat.png", PIXEL))
    fig, tbl = ("fig-blue", "tbl-numbers") if syntax == "quarto" else ("blue", "numbers")
    figures = page.find("figure", id=fig)
    assert len(figures) == 1 and "图 1 · 第一张图。" in figures[0][2]
    assert [e[1]["alt"] for e in page.find("img") if e[1].get("src") == "cat.png"] == ["蓝色的方块"]
    assert [e[2] for e in page.find("p", **{"class": "table-caption"})] == ["表 1 · 一些数"]
    links = [(e[1]["href"], e[2]) for e in page.find("a") if e[1].get("href", "").startswith("figs#")]
    assert links == [(f"figs#{fig}", "图 1"), (f"figs#{tbl}", "表 1"), (f"figs#{fig}", "第 1 张图")] + (
        [(f"figs#{fig}", "1"), (f"figs#{fig}", "Fig. 1")] if syntax == "quarto" else [])    # ([-@x], [Fig. @x])


def test_a_figure_a_cell_draws_takes_its_caption_and_number_from_the_cell_s_options(tmp_path):
    """myst-nb's `mystnb: figure: {caption, name}` cell metadata, in a MyST Markdown notebook, and Quarto's
    `#| label: fig-...` with `#| fig-cap:` and `#| fig-alt:`, in an .ipynb: a numbered figure, referred to."""
    root = tiny_site(tmp_path / "site")
    (root / "content/text.md").write_text("""---
kernelspec:
  name: python3
  display_name: Python 3
---
# 图

```{code-cell} ipython3
---
mystnb:
  figure:
    caption: Prices over time
    name: prices
---
import matplotlib.pyplot as plt
plt.plot([1, 3, 2])
```

As {numref}`prices` shows.
""", encoding="utf-8")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 图二"),
        nbformat.v4.new_code_cell("#| label: fig-line\n#| fig-cap: A Line\n#| fig-alt: a rising line\n"
                                  "import matplotlib.pyplot as plt\nplt.plot([1, 2])"),
        nbformat.v4.new_markdown_cell("See @fig-line.")])
    notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (root / "content/nb.ipynb").write_text(nbformat.writes(notebook), encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    for name, label, caption, alt in (("text", "prices", "图 1 · Prices over time", "Prices over time"),
                                      ("nb", "fig-line", "图 1 · A Line", "a rising line")):
        page = page_of((root / f"dist/{name}.html").read_text(encoding="utf-8"))
        figures = page.find("figure", id=label)
        assert len(figures) == 1 and caption in figures[0][2], (name, page.find("figure"))
        assert len(page.find("figure")) == 1                  # (shown once: not in the cell's output too)
        assert [e[1]["alt"] for e in page.find("img") if "figure" not in e[1].get("class", "")][-1] == alt
        assert [e[2] for e in page.find("a", href=f"{name}#{label}")] == ["图 1"]


STATEMENTS = {
    "site": """::: definition title=线性方程组 label=def-linear
线性方程组。
::: end

::: theorem title=存在性 label=thm-exist
$\\det A \\neq 0$ 时有解。
::: end

::: proof
求逆即可。
::: end

::: theorem
另一条。
::: end

见 [](#thm-exist) 与 [](#def-linear)。
""",
    "myst": """```{prf:definition} 线性方程组
:label: def-linear
线性方程组。
```

```{prf:theorem} 存在性
:label: thm-exist
$\\det A \\neq 0$ 时有解。
```

```{prf:proof}
求逆即可。
```

```{prf:theorem}
另一条。
```

见 {prf:ref}`thm-exist` 与 {ref}`def-linear`。
""",
}


@pytest.mark.parametrize("syntax", sorted(STATEMENTS))
def test_theorems_definitions_and_proofs_are_numbered_per_kind_and_referred_to(tmp_path, syntax):
    page = built(tmp_path, "prf", "命题", STATEMENTS[syntax])
    boxes = page.find("aside", **{"class": "callout-statement"})
    assert [e[1]["id"] for e in boxes] == ["def-linear", "thm-exist", "proof-1", "theorem-2"]
    assert [e[2] for e in page.find("span", **{"class": "callout-kind"})] == ["定义 1", "定理 1", "证明", "定理 2"]
    assert [(e[1]["href"], e[2]) for e in page.find("a") if e[1].get("href", "").startswith("prf#")] == [
        ("prf#thm-exist", "定理 1"), ("prf#def-linear", "定义 1")]


GLOSSARIES = {
    "site": "注意力 {#term-注意力}\n:   一种加权平均。\n\n    第二段。\n\nPatch embedding {#term-patch-embedding}\n:   图像切块。\n",
    "myst": "```{glossary}\n注意力\n  一种加权平均。\n\n  第二段。\n\nPatch embedding\n  图像切块。\n```\n",
}


@pytest.mark.parametrize("syntax", sorted(GLOSSARIES))
def test_a_glossary_s_terms_are_defined_once_and_referred_to_from_any_page(tmp_path, syntax):
    """MyST's {glossary} and {term} roles, and this site's definition list with labelled terms: a term
    links to its definition, with the term's words or the author's."""
    root = tiny_site(tmp_path / "site")
    (root / "content/glossary.md").write_text("---\ntitle: 术语表\n---\n" + GLOSSARIES[syntax], encoding="utf-8")
    (root / "content/uses.md").write_text("---\ntitle: 用术语\n---\n见 {term}`注意力` 与 {term}`切块 <Patch embedding>`，"
                                          "又见 [](#term-patch-embedding)。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    glossary = page_of((root / "dist/glossary.html").read_text(encoding="utf-8"))
    assert [(e[1]["id"], e[2]) for e in glossary.find("dt")] == [("term-注意力", "注意力"),
                                                                  ("term-patch-embedding", "Patch embedding")]
    assert [e[2].strip() for e in glossary.find("dd")][1] == "图像切块。"
    uses = page_of((root / "dist/uses.html").read_text(encoding="utf-8"))
    assert [(unquote(e[1]["href"]), e[2]) for e in uses.find("a") if "#term-" in e[1].get("href", "")] == [
        ("glossary#term-注意力", "注意力"), ("glossary#term-patch-embedding", "切块"),
        ("glossary#term-patch-embedding", "Patch embedding")]


def test_a_page_s_first_heading_is_its_title_and_a_link_to_a_page_without_text_shows_its_title(tmp_path):
    """A Jupyter Book page has no front matter: its `# heading` is its title (shown once, its label the
    title's); MyST's {doc} and an empty link to a page's source show that page's title, a notebook's too,
    by a path relative to the page or from content/ (`/`), with or without its suffix; one naming no page
    is a warning that shows the path."""
    from support import write_notebook
    root = tiny_site(tmp_path / "site")
    (root / "content/book").mkdir()
    (root / "content/book/intro.md").write_text("(start)=\n# Welcome to the book\n\nIts prose.\n", encoding="utf-8")
    write_notebook(root / "content/book/numbers.ipynb", "Numbers")
    (root / "content/book/uses.md").write_text(
        "# Uses\n\nSee {doc}`intro`, {doc}`the notebook <numbers>`, {doc}`/book/intro.md`, [](numbers.ipynb), "
        "{ref}`start` and [](intro.md).\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    intro = page_of((root / "dist/book/intro.html").read_text(encoding="utf-8"))
    assert [(e[1].get("id"), e[2]) for e in intro.find("h1")] == [("start", "Welcome to the book")]
    uses = page_of((root / "dist/book/uses.html").read_text(encoding="utf-8"))
    assert [e[2] for e in uses.find("h1")] == ["Uses"]
    assert [(e[1]["href"], e[2]) for e in uses.find("a") if e[1].get("href", "").startswith(("intro", "numbers"))] == [
        ("intro", "Welcome to the book"), ("numbers", "the notebook"), ("intro", "Welcome to the book"),
        ("numbers", "Numbers"), ("intro#start", "Welcome to the book"), ("intro", "Welcome to the book")]
    (root / "content/book/uses.md").write_text("# Uses\n\nSee {doc}`outro`.\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert "content/book/uses.md:3: [](outro.md) names no page of the site: it shows as 'outro.md'" in result.stderr


def test_a_glossary_term_written_as_a_link_is_named_and_shown_by_its_text(tmp_path):
    """Jupyter Book's own glossary writes its terms as links to their projects: {term}`Sphinx` names the
    term by its text, and shows that text (never a link inside a link)."""
    root = tiny_site(tmp_path / "site")
    (root / "content/glossary.md").write_text("# Glossary\n\n```{glossary}\n[Sphinx](https://www.sphinx-doc.org/)\n"
                                              "    A documentation engine.\n```\n", encoding="utf-8")
    (root / "content/uses.md").write_text("# Uses\n\nBuilt with {term}`Sphinx`.\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    glossary = page_of((root / "dist/glossary.html").read_text(encoding="utf-8"))
    assert [(e[1]["id"], e[2]) for e in glossary.find("dt")] == [("term-sphinx", "Sphinx")]
    uses = page_of((root / "dist/uses.html").read_text(encoding="utf-8"))
    assert [(unquote(e[1]["href"]), e[2]) for e in uses.find("a") if "#term-" in e[1].get("href", "")] == [
        ("glossary#term-sphinx", "Sphinx")]
