"""A MyST Markdown notebook (sitegen/project/textnb.py) is a notebook page, as Jupyter Book courses keep
their chapters: `content/x.md` whose front matter names a kernel, read by jupytext, its cells run by the
build, its problems at the .md file's own lines, its download an .ipynb with this build's outputs."""
from __future__ import annotations

import json

import pytest

from helpers import Elements
from support import run_build, tiny_site

nbformat = pytest.importorskip("nbformat")

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
authors:
  - name: A. Teacher
---
"""
CHAPTER = HEADER + """
# Linear equations

The determinant is {{ det | .1f }}.

```{note}
Solve, do not invert.
```

```{code-cell} ipython3
:tags: [remove-cell]
!pip install --quiet numpy
```

```{code-cell} ipython3
import numpy as np
A = np.array([[2.0, 1.0], [1.0, 3.0]])
det = float(np.linalg.det(A))
print("solved")
```

+++

```{code-cell} ipython3
---
tags: [hide-input]
---
A.sum()
```
"""


def build(tmp_path, text: str, name: str = "chapter.md", *args: str):
    root = tiny_site(tmp_path / "site")
    (root / "requirements.txt").write_text("numpy\nmatplotlib\n", encoding="utf-8")
    (root / f"content/{name}").write_text(text, encoding="utf-8")
    return root, run_build(root, root / "dist", root / ".cache", *args)


def test_a_myst_markdown_notebook_is_a_notebook_page_whose_cells_run_and_whose_download_is_an_ipynb(tmp_path):
    root, result = build(tmp_path, CHAPTER)
    assert result.returncode == 0, result.stderr
    page = Elements((root / "dist/chapter.html").read_text(encoding="utf-8"))
    text = page.find("main")[0][2]
    assert "The determinant is 5.0." in text                  # a value its code computed
    assert "solved" in text and "np.float64(7.0)" in text     # what its cells printed and showed
    assert [e[2] for e in page.find("aside", **{"class": "callout"})] and "Solve, do not invert." in \
        page.find("aside", **{"class": "callout"})[0][2], "the {note} is a callout"
    assert "!pip install" not in text                         # remove-cell: not shown (and not run)
    assert ["A.sum()" in e[2] for e in page.find("details", **{"class": "cell-code"})] == [True]   # hide-input: folded
    assert "{code-cell}" not in text and "jupytext" not in text and "A. Teacher" not in text
    # Its front matter's authors (MyST's) is named in a warning, at its line; the pip line, listed, is not.
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: content/chapter.md:11: front matter 'authors' is MyST's; this site does not "
                        "read it: left out (delete it, or keep it for that tool)"], warnings
    download = nbformat.reads((root / "dist/chapter/chapter.ipynb").read_text(encoding="utf-8"), 4)
    nbformat.validate(download)
    code = [cell for cell in download.cells if cell.cell_type == "code" and cell.source.strip()]
    assert [cell.source.splitlines()[0] for cell in code] == ["!pip install --quiet numpy", "import numpy as np", "A.sum()"]
    assert code[1].outputs[0]["text"] == "solved\n" and code[2].outputs[0]["data"]["text/plain"] == "np.float64(7.0)"
    assert "jupytext" not in download.metadata and download.metadata.kernelspec.name == "python3"


def test_a_myst_notebooks_problems_name_its_own_lines(tmp_path):
    broken = CHAPTER.replace("A.sum()", "B.sum()").replace("{{ det | .1f }}", "{{ nothing }}")
    lines = broken.split("\n")
    _, result = build(tmp_path, broken)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    at = lines.index("B.sum()") + 1
    assert f"content/chapter.md:{at}: lab chapter failed: code cell 3: NameError: name 'B' is not defined" \
        in result.stderr, result.stderr
    fixed = broken.replace("B.sum()", "A.sum()")
    _, result = build(tmp_path / "again", fixed)
    at = lines.index("The determinant is {{ nothing }}.") + 1
    assert f"content/chapter.md:{at}: value {{{{ nothing }}}}: no 'nothing'" in result.stderr, result.stderr


def test_a_pip_install_the_course_does_not_list_is_skipped_and_named(tmp_path):
    text = CHAPTER.replace("!pip install --quiet numpy", "%pip install -U numpy\n!pip install 'seaborn>=0.13'")
    root, result = build(tmp_path, text)
    assert result.returncode == 0, result.stderr
    at = text.split("\n").index("!pip install 'seaborn>=0.13'") + 1
    assert f"warning: content/chapter.md:{at}: installs seaborn with pip, which the build never does (it skips " \
           "the line), and requirements.txt does not list it: add `seaborn` to requirements.txt" in result.stderr
    assert "installs numpy" not in result.stderr
    _, strict = build(tmp_path / "strict", text, "chapter.md", "--strict")
    assert strict.returncode == 1 and "installs seaborn" in strict.stderr


@pytest.mark.parametrize("header", ["---\ntitle: 只是文字\n---\n", "---\ntitle: 只是文字\nmyst:\n  enable_extensions: [colon_fence]\n---\n"])
def test_a_markdown_page_without_a_kernel_stays_a_page(tmp_path, header):
    """Only a front matter that names a kernel (or jupytext's header) makes an .md a notebook: a page that
    shows a {code-cell} as an example is still a page, its directive named in a warning, nothing run."""
    body = "# 只是文字\n\n```{code-cell} ipython3\nraise SystemExit('ran')\n```\n"
    root, result = build(tmp_path, header + body, "plain.md")
    assert result.returncode == 0 and "ran" not in result.stdout, result.stderr
    assert "content/plain.md:" in result.stderr and "{code-cell}" in result.stderr
    assert not (root / "dist/plain").exists()


def test_jupytexts_plain_markdown_format_is_read_as_such(tmp_path):
    text = HEADER.replace("format_name: myst", "format_name: markdown").replace("authors:\n  - name: A. Teacher\n", "") \
        + "\n# 平常格式\n\n值是 {{ x }}。\n\n```python\nx = 6 * 7\n```\n"
    root, result = build(tmp_path, text)
    assert result.returncode == 0, result.stderr
    assert "值是 42。" in Elements((root / "dist/chapter.html").read_text(encoding="utf-8")).find("main")[0][2]
    assert json.loads((root / "dist/chapter/results.json").read_text(encoding="utf-8"))


def test_a_header_that_is_not_yaml_is_said_at_its_line(tmp_path):
    text = CHAPTER.replace("  display_name: Python 3 (ipykernel)", "  display_name: [Python 3")
    _, result = build(tmp_path, text)
    at = text.split("\n").index("  display_name: [Python 3") + 1
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith((f"error: content/chapter.md:{at}: YAML syntax error",     # (or where YAML
                                     f"error: content/chapter.md:{at + 1}: YAML syntax error")), result.stderr  # finds it)


GLUED = HEADER.replace("authors:\n  - name: A. Teacher\n", "") + """
# Glued

```{code-cell} ipython3
from myst_nb import glue
import matplotlib.pyplot as plt
mean = 2.0
glue("mean_value", mean * 1.25)
glue("mean-half", mean / 2)
figure, axes = plt.subplots()
axes.plot([0, 1], [0, 1])
glue("line_fig", figure, display=False)
```

The mean is {glue:}`mean_value`, to one place {glue:text}`mean_value:.1f`; half of it {glue:}`mean-half`.

```{glue:figure} line_fig
:name: fig-line
A straight line.
```

See {numref}`fig-line`; in a sentence, {glue:}`line_fig`.
"""


@pytest.mark.parametrize("preamble", [False, True, "installed"])
def test_myst_nb_s_glue_quotes_a_value_and_shows_a_figure_with_or_without_myst_nb_installed(tmp_path, preamble):
    """`from myst_nb import glue` works in a build that has no myst-nb (sitegen/labs/glue.py), in a cell or
    in a module beside the notebook that a cell imports (a book's preamble), and in one that has it (as
    every Jupyter Book user has: here a package of that name the lab imports, whose glue only displays, as
    myst-nb's does); the {glue} roles are values of the notebook and {glue:figure} its figure, numbered."""
    text = GLUED.replace("from myst_nb import glue", "from preamble import *") if preamble is True else GLUED
    if preamble:
        (tmp_path / "site/content").mkdir(parents=True)
        (tmp_path / "site/content/preamble.py").write_text("from myst_nb import glue\n", encoding="utf-8")
    if preamble == "installed":
        (tmp_path / "site/content/myst_nb").mkdir()
        (tmp_path / "site/content/myst_nb/__init__.py").write_text(
            "__version__ = '1.1.2'\n\ndef glue(name, variable, display=True):\n"
            "    from IPython.display import display as show\n    if display:\n        show(variable)\n", encoding="utf-8")
    root, result = build(tmp_path, text, "glued.md", "--strict")
    assert result.returncode == 0, result.stderr
    page = Elements((root / "dist/glued.html").read_text(encoding="utf-8"))
    assert "The mean is 2.5000, to one place 2.5; half of it 1.0000." in [e[2] for e in page.find("p")]
    figures = [e for e in page.find("figure") if e[1].get("id") == "fig-line"]
    assert len(figures) == 1 and "图 1 · A straight line." in figures[0][2]
    assert [e[2] for e in page.find("a") if e[1].get("href", "").endswith("#fig-line")] == ["图 1"]
    inline = [e for e in page.find("img") if e[1].get("alt") == "line_fig"]       # (the figure, in the sentence)
    drawn = [e[1]["src"] for e in page.find("img") if e[1].get("alt") != "line_fig"]
    assert len(inline) == 1 and {inline[0][1]["src"]} == set(drawn)


QUARTO = """---
title: "Linear functions"
format: html
jupyter: python3
---

## Slope {#sec-slope}

::: {.callout-note}
The slope is $m$.
:::

See @fig-line and @eq-line.

$$
y = m x + b
$$ {#eq-line}

```{python}
#| label: fig-line
#| fig-cap: "A line"
#| echo: false
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([0, 1], [1, 3])
plt.show()
```

Quarto's syntax, shown:

````markdown
```{python}
print("shown, not run")
```
````

```{python}
m = (3 - 1) / (1 - 0)
print(m)
```

So m is `{python} m`, as its inline expression says.

::: aside
A margin note.
:::

```{python}
#| eval: false
answer = input("Your answer: ")
```

```{python}
#| error: true
[1, 2][5]
```

```{python echo=FALSE}
print("its code hidden")
```
"""


def test_a_quarto_document_is_a_notebook_page_whose_python_chunks_run(tmp_path):
    """A .qmd, as Quarto reads one for Jupyter: its ```{python} chunks are cells that run with their `#|`
    options, a chunk inside a fence is shown, not run; its callouts, labelled figure and equation and
    references are read; a page links to it by its source; its download is an .ipynb of its cells."""
    root, result = build(tmp_path, QUARTO, "chapter.qmd")
    assert result.returncode == 0, result.stderr
    (root / "content/next.md").write_text("---\ntitle: Next\n---\nBack to [](chapter.qmd).\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 1 and "front matter 'format' is Quarto's" in result.stderr      # (said: not read)
    (root / "content/chapter.qmd").write_text(QUARTO.replace("format: html\n", ""), encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = Elements((root / "dist/chapter.html").read_text(encoding="utf-8"))
    text = page.find("main")[0][2]
    assert [e[2] for e in page.find("h1")] == ["Linear functions"]
    assert "The slope is" in page.find("aside", **{"class": "callout"})[0][2]
    assert [(e[1]["href"], e[2]) for e in page.find("a") if e[1].get("href", "").startswith("chapter#")] == [
        ("chapter#fig-line", "图 1"), ("chapter#eq-line", "(1)")]
    assert page.find("figcaption")[0][2].startswith("图 1 · A line")
    assert "plt.plot" not in text and "2.0" in text                 # echo: false; what the last chunk printed
    assert "So m is 2.0000, as its inline expression says." in text             # (a value, quoted as every value is)
    assert 'print("shown, not run")' in text and "shown, not run\n" not in text and "{python}" in text
    assert "#| label" not in text and "#| eval" not in text and "jupyter" not in text
    assert "A margin note." in page.find("aside", **{"class": "callout-margin"})[0][2]
    assert 'input("Your answer: ")' in text and "EOFError" not in text          # eval: false: shown, not run
    assert "IndexError" in text                                                # error: true: its error shown
    assert "chapter.ipynb 的第 4 个代码单元" in text      # (numbered as the notebook's, the one that did not run too)
    assert "its code hidden" in text and 'print("its code hidden")' not in text     # {python echo=FALSE}
    assert [(e[1]["href"], e[2]) for e in Elements((root / "dist/next.html").read_text(encoding="utf-8")).find("a")
            if e[1].get("href") == "chapter"] == [("chapter", "Linear functions")]
    download = nbformat.reads((root / "dist/chapter/chapter.ipynb").read_text(encoding="utf-8"), 4)
    nbformat.validate(download)
    code = [cell for cell in download.cells if cell.cell_type == "code"]
    assert [cell.source.splitlines()[0] for cell in code] == ["#| label: fig-line", "m = (3 - 1) / (1 - 0)",
                                                              "#| eval: false", "#| error: true", "#| echo: FALSE"]
    assert code[1].outputs[0]["text"] == "2.0\n" and download.metadata.kernelspec.name == "python3"
    assert not code[2].outputs and code[3].outputs[0]["ename"] == "IndexError"


@pytest.mark.parametrize("change, line, message", [
    (("```{python}\nm =", "```{r}\nm ="), 38, "a chunk of r: notebook pages run Python"),
    (("```{python}\nm =", "```{python .hidden}\nm ="), 38, "the chunk's attributes '.hidden' are not key=value pairs"),
    (("jupyter: python3", "engine: knitr"), 2, "its engine is knitr: notebook pages run Python"),
    (("jupyter: python3", "jupyter: julia-1.9"), 2, "its Jupyter kernel is julia-1.9: notebook pages run Python"),
])
def test_a_quarto_document_that_runs_no_python_is_named_at_its_line(tmp_path, change, line, message):
    _, result = build(tmp_path, QUARTO.replace(*change), "chapter.qmd")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"content/chapter.qmd:{line}: {message}" in result.stderr, result.stderr


@pytest.mark.parametrize("header", ["jupyter:\n  kernelspec: python3\n", "jupyter:\n  kernelspec:\n    name: python3\n",
                                    "jupyter: [python3]\n", "engine: jupyter\n"])
def test_a_quarto_document_s_kernel_is_read_however_its_header_names_it(tmp_path, header):
    _, result = build(tmp_path, f"---\ntitle: K\n{header}---\n\n```{{python}}\nprint(6 * 7)\n```\n", "chapter.qmd")
    assert result.returncode == (1 if "[" in header else 0), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("text", ["# Linear functions {#sec-linear}\n\nThe answer:\n\n```{python}\nprint(6 * 7)\n```\n",
                                  "```{python}\nprint(6 * 7)\n```\n"])
def test_a_quarto_document_without_front_matter_is_a_notebook_page(tmp_path, text):
    """Half of the real Quarto chapters tried begin with their heading, not with front matter: Quarto
    runs their Python chunks all the same (its default engine for them is Jupyter's)."""
    root, result = build(tmp_path, text + "\nSee [](#sec-linear).\n" * ("sec-linear" in text), "chapter.qmd",
                         "--strict")
    assert result.returncode == 0 and "internal error" not in result.stderr, result.stderr
    page = Elements((root / "dist/chapter.html").read_text(encoding="utf-8"))
    assert "42" in page.find("main")[0][2]
    if "sec-linear" in text:          # its title is the heading's, and the heading's label the title's
        assert [(e[1].get("id"), e[2]) for e in page.find("h1")] == [("sec-linear", "Linear functions")]
        assert "{#" not in (root / "dist/chapter.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("options, shown", [
    ('.content-visible when-format="pdf"', False), ('.content-hidden when-format="pdf"', True),
    ('.content-visible when-format="html"', True), ('.content-hidden unless-format="html"', True),
    (".content-hidden", False), ("echo=false", True),
])
def test_a_chunk_for_another_format_runs_and_shows_nothing_as_quarto_s_html_shows_it(options, shown):
    from sitegen.project.textnb import _quarto
    notebook = _quarto(f"```{{python {options}}}\nx = 1\n```\n", "content/c.qmd", {})
    [cell] = notebook["cells"]
    assert ("#| include: false" in cell["source"]) is not shown and cell["source"].endswith("x = 1")
    assert "format" not in cell["source"]


def test_jupytext_s_warnings_do_not_reach_the_author_s_terminal_raw():
    """QuantEcon's lectures mix `{code-cell} ipython` and `{code-cell} ipython3`: jupytext warns that all code
    cells must have the same language, a line from inside a library, not the author's to act on."""
    import warnings
    from sitegen.project.textnb import notebook_of
    text = ("---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n# 标题\n\n```{code-cell} ipython\nx = 1\n```\n\n"
            "```{code-cell} ipython3\ny = 2\n```\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        notebook = notebook_of(text.encode(), "content/mixed.md")
    assert [c["source"] for c in notebook["cells"] if c["cell_type"] == "code"] == ["x = 1", "y = 2"]
    assert [str(w.message) for w in caught] == []
