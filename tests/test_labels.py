"""Numbered formulas and references to them and to sections (sitegen/pages/labels.py), built: in this
site's syntax, MyST's and Quarto's, on a page and in notebooks; an unknown or doubled label is an
error at its line."""
from __future__ import annotations

import json

import pytest

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


def test_a_reference_to_no_label_and_a_label_defined_twice_are_errors_at_their_lines(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "content/eqs.md").write_text("---\ntitle: 公式\n---\n$$ x $$ {#one}\n\n$$ y $$ {#one}\n\n"
                                         "见 {eq}`tow`。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "content/eqs.md:6: the label 'one' is defined twice (first at line 4): rename one" in result.stderr
    assert "content/eqs.md:8: [](#tow) refers to no label of this page (its labels: one)" in result.stderr


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

见 @fig-blue 与 @tbl-numbers，[第 %s 张图](#fig-blue)。
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
    assert links == [(f"figs#{fig}", "图 1"), (f"figs#{tbl}", "表 1"), (f"figs#{fig}", "第 1 张图")]


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
