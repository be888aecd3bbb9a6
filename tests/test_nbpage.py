"""A notebook in content/ is a page and its lab (sitegen/pages/nbpage.py), built as a teacher would build it:
rich outputs as Jupyter shows them, the notebook's own names quoted, data beside it, edits picked up."""
from __future__ import annotations

import json
import shutil
import time

import pytest

from helpers import Elements
from support import run_build, tiny_site

nbformat = pytest.importorskip("nbformat")
new_code, new_markdown, new_raw = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell, nbformat.v4.new_raw_cell

LESSON = [
    new_raw("---\ndata: [points.csv]\n---"),
    new_markdown("# 线性回归\n\n斜率是 {{ slope | .4f }}，一共 {{ n }} 个点。\n\n下一章：[梯度下降](gradient%20descent.ipynb)。"),
    new_code("import numpy as np\nimport matplotlib.pyplot as plt\n"
             "data = np.loadtxt('points.csv', delimiter=',', skiprows=1)\nn = len(data)\n"
             "slope, icept = np.polyfit(data[:, 0], data[:, 1], 1)\nprint('first')\n"
             "import sys; print('to stderr', file=sys.stderr)\nprint('second')\nslope"),
    new_code("fig, ax = plt.subplots(figsize=(3, 2))\nax.plot(data[:, 0], data[:, 1], 'o')\nfig"),
    new_code("from IPython.display import display, Math, HTML, Markdown\n"
             "display(Math(r'\\hat y = %.3f x' % slope))\ndisplay(Markdown('**粗体** 与 $x^2$'))\n"
             "HTML('<table><tr><th style=\"color:red\">a</th><td onclick=\"steal()\">1</td></tr></table>'\n"
             "     '<script>steal()</script><img src=\"https://tracker.example/p.png\">')"),
    new_code("%timeit -n1 -r1 sum(range(10))\n%precision 3\nget_ipython().__class__.__name__"),
    new_code("_ = plt.plot([1, 2]); plt.show()\nprint('after the figure')"),
]
SEQUEL = [new_markdown("# 梯度下降\n\n回到[线性回归](linreg.ipynb)。"),
          new_code("w = 0.0\nfor _ in range(50):\n    w -= 0.1 * 2 * (w - 3)\nround(w, 6)")]

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
PASTED = new_markdown("# 贴图\n\n![标志](attachment:logo.png)")
PASTED.attachments = {"logo.png": {"image/png": PIXEL}}
# More notebooks of the same site, each showing one part of what Jupyter shows.
OTHERS = {
    "errors": [new_raw("---\nallow_errors: true\n---"),
               new_code("import matplotlib.style\nmatplotlib.style.use('seaborn')"), new_code("print('the rest runs')")],
    "prose": [new_markdown("# 只有文字\n\n$x^2$ 与 `代码`。")],
    # SymPy's way: a LaTeX and a PNG of one result (the page shows one of them; the download keeps both).
    "symbolic": [new_markdown("# 符号"), new_code(
        "import base64\nclass Integral:\n    def _repr_latex_(self):\n        return r'$\\displaystyle \\frac{x^{3}}{3}$'\n"
        f"    def _repr_png_(self):\n        return base64.b64decode('{PIXEL}')\nIntegral()")],
    # Math as Chinese courses write it in Jupyter (each form seen in real notebooks), every one shown as math.
    "math": [new_markdown("# 公式\n\n紧贴中文的$\\alpha$公式，带空格的 $ x + y $，括号 \\(\\beta\\)。\n"
                          "段落中的公式\n$$\n\\sum_{i=1}^n x_i\n$$\n接着写。"),
             new_markdown("\\begin{align}\na &= b + c \\\\\nd &= e\n\\end{align}\n\n方括号：\\[ E = mc^2 \\]\n\n"
                          "代码 `$不是公式$` 与 5 元。")],
    "pasted": [PASTED, new_code("import matplotlib\nmatplotlib.use('nbagg')\nimport matplotlib.pyplot as plt\n"
                                "plt.plot([1, 3])\nprint(matplotlib.get_backend() != 'nbagg')")],
    "again": [new_markdown("# 再存一次"), new_code(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(); ax.plot([1, 2]); fig.savefig('same.png')"),
        new_code("ax.plot([2, 1]); fig.savefig('same.png'); fig")],
    "widgets": [new_markdown("# 部件"), new_code(
        "class Slider:\n    def _repr_mimebundle_(self, include=None, exclude=None):\n"
        "        return {'application/vnd.jupyter.widget-view+json': {'model_id': 'm1', 'version_major': 2,\n"
        "                'version_minor': 0}, 'text/plain': 'IntSlider(value=3)'}\nSlider()"),
        new_code("from IPython.display import Javascript\nJavascript('alert(1)')")],
    "media": [new_markdown("# 媒体"), new_code(
        "%config InlineBackend.figure_format = 'svg'\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])"),
        new_code("open('clip.mp4', 'wb').write(b'not really a video')\nfrom IPython.display import HTML\n"
                 "HTML('<video controls><source src=\"clip.mp4\" type=\"video/mp4\"></video>"
                 "<video src=\"https://elsewhere.example/v.mp4\"></video>')")],
}


def write(path, cells):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = cells
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tiny_site(tmp_path_factory.mktemp("nbpage") / "site")
    (root / "content/lessons").mkdir()
    (root / "content/lessons/points.csv").write_text("x,y\n1,2\n2,4\n3,6.5\n", encoding="utf-8")
    write(root / "content/lessons/linreg.ipynb", LESSON)
    write(root / "content/lessons/gradient descent.ipynb", SEQUEL)
    for name, cells in OTHERS.items():
        write(root / f"content/{name}.ipynb", cells)
    with open(root / "site.yaml", "a", encoding="utf-8") as config:     # notebooks in the menu and reading order
        config.write("nav:\n  - title: 回归\n    page: lessons/linreg.ipynb\n"
                     "sequence:\n  - index.md\n  - lessons/linreg.ipynb\n  - lessons/gradient descent.ipynb\n")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr + result.stdout
    return root


def page(root, name="lessons/linreg.html") -> Elements:
    return Elements((root / "dist" / name).read_text(encoding="utf-8"))


def test_the_notebook_is_a_page_whose_prose_quotes_its_own_names(course):
    found = page(course)
    assert [h[2] for h in found.find("h1")] == ["线性回归"]
    prose = " ".join(p[2] for p in found.find("p"))
    results = json.loads((course / "dist/lessons/linreg/results.json").read_text())
    assert f"斜率是 {results['slope']:.4f}，一共 3 个点" in prose
    assert [a[1]["href"] for a in found.find("a") if a[2] == "梯度下降"] == ["gradient-descent"]
    sequel = page(course, "lessons/gradient-descent.html")
    assert [a[1]["href"] for a in sequel.find("a") if a[2] == "线性回归"] == ["linreg"]
    assert [a[1]["href"] for a in sequel.find("a", rel="prev")] == ["linreg"]          # the reading order
    assert [a[1]["href"] for a in page(course, "index.html").find("a") if a[2] == "回归"] == ["lessons/linreg"]


def test_every_output_is_shown_in_the_order_jupyter_shows_it(course):
    found = page(course)
    first = [e for e in found.find("pre") if "cell-stdout" in e[1].get("class", "")
             or "cell-stderr" in e[1].get("class", "")]
    assert [e[2] for e in first[:3]] == ["first\n", "to stderr\n", "second\n"]
    assert first[1][1]["class"] == "cell-stderr"
    values = [e[2] for e in found.find("pre", **{"class": "cell-value"})]
    assert values[0].startswith("np.float64(2.2")
    assert "'InteractiveShell'" in values                       # get_ipython() is there
    timing = [e[2] for e in found.find("pre", **{"class": "cell-stdout"}) if "per loop" in e[2]]
    assert len(timing) == 1 and "±" in timing[0]               # %timeit measured and printed as IPython does
    assert found.find("math")                                   # display(Math(...)) as MathML
    assert [e[2] for e in found.find("strong")] == ["粗体"]    # display(Markdown(...))
    assert len(found.find("img", alt="单元 2 画出的第 1 张图")) == 1     # `fig` as a last line: the figure
    after = [e for e in found.elements if e[0] == "figure" or e[0] == "pre" and "after the figure" in e[2]
             and e[1].get("class") == "cell-stdout"]
    assert len(after) == 3 and after[-1][0] == "pre"           # plt.show() shows it where it stands


def test_html_outputs_are_reduced_to_what_a_page_may_hold(course):
    found = page(course)
    tables = found.find("div", **{"class": "output-html"})
    assert len(tables) == 1 and tables[0][2].replace("\n", "") == "a1"        # the table, and only it
    assert not [e for e in found.elements if {"onclick", "style"} & set(e[1])]
    assert not [e for e in found.find("script") if "src" not in e[1]]
    assert not [e for e in found.find("img") if "tracker.example" in e[1].get("src", "")]


def test_data_beside_the_notebook_is_read_and_published_and_the_download_keeps_every_output(course):
    assert (course / "dist/lessons/linreg/points.csv").read_bytes() == \
        (course / "content/lessons/points.csv").read_bytes()
    download = nbformat.reads((course / "dist/lessons/linreg/linreg.ipynb").read_text(encoding="utf-8"), 4)
    nbformat.validate(download)
    kinds = [set(out.get("data", {})) | {out["output_type"]} for cell in download.cells if cell.cell_type == "code"
             for out in cell.outputs]
    assert any("image/png" in k for k in kinds) and any("text/latex" in k for k in kinds)
    assert any("text/html" in k for k in kinds) and any("stream" in k for k in kinds)
    markdown = [cell.source for cell in download.cells if cell.cell_type == "markdown"]
    assert "{{" not in "".join(markdown) and "https://example.pages.dev/lessons/gradient-descent" in "".join(markdown)


@pytest.mark.slow      # (several builds in a row)
def test_a_prose_edit_reuses_the_lab_and_a_code_edit_runs_it(course, tmp_path):
    root = tmp_path / "site"
    shutil.copytree(course, root, symlinks=True)
    notebook = root / "content/lessons/linreg.ipynb"
    data = nbformat.read(notebook, 4)
    data.cells[1].source = data.cells[1].source.replace("一共", "总共")
    nbformat.write(data, notebook)
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0 and "computed" not in result.stdout, result.stdout + result.stderr
    assert "总共 3 个点" in (root / "dist/lessons/linreg.html").read_text(encoding="utf-8")
    data.cells[6].source = data.cells[6].source.replace("after the figure", "edited in Jupyter")
    nbformat.write(data, notebook)
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0 and "lessons-linreg computed" in result.stdout, result.stdout
    assert "edited in Jupyter" in (root / "dist/lessons/linreg.html").read_text(encoding="utf-8")
    (root / "content/lessons/points.csv").write_text("x,y\n1,2\n2,4\n3,6.5\n4,8\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert "一共 4 个点" not in (root / "dist/lessons/linreg.html").read_text(encoding="utf-8")
    assert "总共 4 个点" in (root / "dist/lessons/linreg.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("cells, expected", [
    ([new_markdown("# 出错"), new_code("x = 1"), new_code("y = 1\n[1, 2].shape")],
     ":{line}: lab lessons-broken failed: code cell 2: AttributeError: 'list' object has no attribute 'shape'"),
    ([new_code("!ls -l")], ":{line}: lab lessons-broken failed: code cell 1: shell commands (!ls -l) do not run"),
    ([new_code("open('missing.txt').read()")], "it runs in its own folder, as in Jupyter: there is no /"),
    ([new_raw("---\ndata: [../secret.txt]\n---"), new_code("1")], "must be a file inside the notebook's folder"),
    ([new_raw("---\ntimeout: 5\nminutes: many\n---"), new_code("1")],
     "front matter 'minutes' must be a int, not str"),
    ([new_raw("---\ntimeout: 1\n---"), new_code("import time\ntime.sleep(30)")],
     "raise its `timeout:` (seconds) in the notebook's front matter (a raw cell at its top"),
    ([new_markdown("# 缺包"), new_code("%matplotlib inline\nimport nowhere_to_be_found\nimport numpy"),
      new_code("from sklearn_absent.linear_model import Ridge")],
     "content/lessons/broken.ipynb:{line}: code cell 1, line 2: imports nowhere_to_be_found, which is not installed"),
])
def test_a_mistake_in_a_notebook_is_named_at_its_line_in_the_file(tmp_path, cells, expected):
    root = tiny_site(tmp_path / "site")
    write(root / "content/lessons/broken.ipynb", cells)
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    text = (root / "content/lessons/broken.ipynb").read_text(encoding="utf-8").splitlines()
    line = next((n for n, t in enumerate(text, 1) if "[1, 2].shape" in t or "!ls" in t or "nowhere_" in t), 0)
    assert "content/lessons/broken.ipynb" + expected.format(line=line) in result.stderr \
        if expected.startswith(":") else expected.format(line=line) in result.stderr, result.stderr


def test_an_unknown_key_of_a_notebook_s_front_matter_is_left_out_with_a_warning_an_error_under_strict(tmp_path):
    """As MyST and Quarto keys are: another tool's key, or a slip, never costs the page."""
    root = tiny_site(tmp_path / "site")
    write(root / "content/lessons/keys.ipynb", [new_raw("---\ntimeout: 5\ncolour: red\ntimout: 9\n---"), new_code("1")])
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert ("warning: content/lessons/keys.ipynb:10: cell 1 (raw), line 3: unknown front matter key 'colour': left out "
            "(expected one of: aliases, allow_errors, data, description, memory, minutes, nocite, parent, timeout, title, "
            "toc, url)") in result.stderr, result.stderr
    assert "line 4: unknown front matter key 'timout': left out (did you mean 'timeout'?)" in result.stderr
    assert run_build(root, root / "dist", root / ".cache", "--strict").returncode == 1


@pytest.mark.slow      # (several builds in a row)
def test_a_notebook_reads_its_neighbours_as_in_jupyter_and_a_new_one_runs_it_again(tmp_path):
    """Undeclared: read where they are (as Jupyter's working folder has them), recorded, published only in
    the notebook's archive (render/archive.py), at the paths they were read from."""
    root = tiny_site(tmp_path / "site")
    (root / "content/data").mkdir()
    (root / "content/data/shared.txt").write_text("7", encoding="utf-8")
    (root / "content/lessons").mkdir()
    (root / "content/lessons/a.csv").write_text("1", encoding="utf-8")
    write(root / "content/lessons/reads.ipynb", [
        new_code("import os\nshared = int(open('../data/shared.txt').read())\n"
                 "csvs = sorted(p for p in os.listdir('.') if p.endswith('.csv'))\ncsvs"),
        new_code("import matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.savefig('mine.png')"),
        new_code("open('a.csv', 'w').write('written over, as in Jupyter')")])
    assert run_build(root, root / "dist", root / ".cache", "--strict").returncode == 0
    results = json.loads((root / "dist/lessons/reads/results.json").read_text())
    assert (results["shared"], results["csvs"]) == (7, ["a.csv"])
    assert sorted(p.name for p in (root / "dist/lessons/reads").iterdir()) == ["a.csv", "figure-01.png",
                                                                                "reads.ipynb", "reads.zip", "results.json"]
    import zipfile
    assert zipfile.ZipFile(root / "dist/lessons/reads/reads.zip").namelist() == ["data/shared.txt",
                                                                                 "lessons/reads.ipynb"]
    assert (root / "dist/lessons/reads/a.csv").read_text() == "written over, as in Jupyter"
    (root / "content/lessons/b.csv").write_text("2", encoding="utf-8")        # a new file in the folder it listed
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0 and "lessons-reads computed" in result.stdout, result.stdout
    assert json.loads((root / "dist/lessons/reads/results.json").read_text())["csvs"] == ["a.csv", "b.csv"]
    (root / "content/data/shared.txt").write_text("8", encoding="utf-8")      # a file it read, elsewhere
    assert run_build(root, root / "dist", root / ".cache").returncode == 0
    assert json.loads((root / "dist/lessons/reads/results.json").read_text())["shared"] == 8
    assert (root / "content/lessons/a.csv").read_text() == "1" and not (root / "content/lessons/mine.png").exists()


@pytest.mark.slow      # (several builds in a row)
def test_a_link_to_a_notebook_the_site_lacks_is_its_text_with_a_note(tmp_path):
    root = tiny_site(tmp_path / "site")
    write(root / "content/ch1.ipynb", [new_markdown("# 第一章\n\n下一章：[第二章](02%20Next.ipynb)，附录：[附录](appendix.md)"),
                                       new_code("1")])
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert "content/ch1.ipynb:" in result.stderr and "links to 02%20Next.ipynb, which is no page" in result.stderr
    assert "links to appendix.md, which is no page" in result.stderr       # a book's chapter in MyST Markdown too
    assert "下一章：第二章，附录：附录" in [p[2] for p in page(root, "ch1.html").find("p")]
    write(root / "content/02 Next.ipynb", [new_markdown("# 第二章"), new_code("2")])      # they arrive
    (root / "content/appendix.md").write_text("---\ntitle: 附录\n---\n附录。\n", encoding="utf-8")
    assert run_build(root, root / "dist", root / ".cache", "--strict").returncode == 0
    assert [a[1]["href"] for a in page(root, "ch1.html").find("a") if a[2] == "第二章"] == ["02-next"]


def test_what_a_notebook_needs_is_said_at_its_line_and_in_its_download(tmp_path):
    """With packages every fresh install of the requirements has: PyYAML (its module is yaml, another
    name) and IPython, which this site's requirements.txt does not list."""
    root = tiny_site(tmp_path / "site")
    (root / "requirements.txt").write_text("numpy\nmatplotlib\n", encoding="utf-8")
    write(root / "content/needs.ipynb", [new_markdown("# 需要什么"), new_code("import json\nimport numpy as np"),
                                         new_code("x = 1\nimport yaml\nimport IPython.display")])
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    lines = (root / "content/needs.ipynb").read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "import yaml" in text)
    assert f"content/needs.ipynb:{line}: code cell 2, line 2: imports yaml, which requirements.txt does not list: add `PyYAML`" \
        in result.stderr
    assert "add `ipython`" in result.stderr and "`numpy`" not in result.stderr
    note = [li[2] for li in page(root, "needs.html").find("li") if "needs.ipynb" in li[2]]
    assert len(note) == 1 and "numpy、PyYAML、ipython" in note[0]


def test_html_from_elsewhere_in_markdown_cells_is_left_out_with_a_note(tmp_path):
    root = tiny_site(tmp_path / "site")
    write(root / "content/badges.ipynb", [
        new_markdown('# 徽章\n\n<a href="https://colab.research.google.com/x"><img src="https://colab.research.google.com/'
                     'assets/colab-badge.svg" alt="Open In Colab"/></a>\n\n![logo](https://example.com/logo.png)\n\n'
                     '<p style="color: red">红字</p>'),
        new_code("1")])
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("content/badges.ipynb:") == 3 and "loaded from another site" in result.stderr
    found = page(root, "badges.html")
    assert not [i for i in found.find("img") if "example.com" in i[1].get("src", "") or "colab" in i[1].get("src", "")]
    assert [p for p in found.find("p") if p[2] == "红字" and "style" not in p[1]]


def test_a_malformed_notebook_page_is_named_as_the_author_s_mistake(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "content/bad.ipynb").write_text('{"nbformat": 4, "metadata": [], "cells": [42, {"cell_type": "code", '
                                            '"source": "x", "outputs": "oops"}]}', encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr and "internal error" not in result.stderr
    for said in ("content/bad.ipynb: metadata is list", "content/bad.ipynb: cell 1: a cell is an object",
                 "content/bad.ipynb: cell 2: outputs is 'oops'"):
        assert said in result.stderr, result.stderr


def test_allow_errors_shows_the_error_as_jupyter_does_and_runs_on(course):
    found = page(course, "errors.html")
    errors = found.find("pre", **{"class": "cell-error"})
    assert len(errors) == 1 and "OSError" in errors[0][2] and "seaborn" in errors[0][2]
    assert "the rest runs\n" in [e[2] for e in found.find("pre", **{"class": "cell-stdout"})]


def test_a_notebook_of_prose_only_is_a_page_without_a_lab(course):
    found = page(course, "prose.html")
    assert [h[2] for h in found.find("h1")] == ["只有文字"] and found.find("math") and not found.find("section")
    assert not (course / "dist/prose").exists()


def test_math_in_markdown_cells_is_shown_as_jupyter_shows_it_and_none_left_raw(course):
    found = page(course, "math.html")
    formulas = found.find("math")
    assert [m[1].get("display", "inline") for m in formulas] == [
        "inline", "inline", "inline", "block", "block", "block"]
    text = " ".join(p[2] for p in found.find("p") if not any(p[2] == m[2] for m in formulas))
    raw = [mark for mark in ("$", "\\(", "\\[", "\\begin", "\\alpha") if mark in text.replace("$不是公式$", "")]
    assert not raw, text
    assert [c[2] for c in found.find("code")] == ["$不是公式$"]


def test_an_output_with_latex_and_a_png_is_shown_once_as_math_and_its_png_is_not_made(course):
    """(SymPy's PNG of each formula, which neither the page nor Jupyter opening the download shows, was a
    third of a SymPy notebook's run.)"""
    found = page(course, "symbolic.html")
    assert len(found.find("math")) == 1 and not found.find("img")
    assert sorted(p.name for p in (course / "dist/symbolic").iterdir()) == ["results.json", "symbolic.ipynb"]
    download = json.loads((course / "dist/symbolic/symbolic.ipynb").read_text(encoding="utf-8"))
    data = download["cells"][1]["outputs"][0]["data"]
    assert sorted(data) == ["text/latex", "text/plain"]


def test_a_notebook_cell_is_named_by_its_number_and_its_stamp_is_one_short_line(course):
    """Not by its Jupyter id (a hex string to a reader, once a 32-digit one on every cell)."""
    found = page(course)
    sources = [p[2] for p in found.find("p", **{"class": "cell-source"})]
    assert sources == [f"linreg.ipynb 的第 {n} 个代码单元" for n in range(1, len(sources) + 1)] and len(sources) == 5
    assert [s[1]["aria-label"] for s in found.find("section", **{"class": "cell"})][:2] == ["代码单元 1", "代码单元 2"]
    stamps = {p[2] for p in found.find("p", **{"class": "stamp"})}
    assert len(stamps) == 1 and stamps.pop().startswith("运行结果 · ") and len(stamps) == 0


def test_pasted_images_and_an_interactive_backend_are_shown_as_jupyter_shows_them(course):
    import base64
    found = page(course, "pasted.html")
    assert [i[1]["src"] for i in found.find("img", alt="标志")] == [f"data:image/png;base64,{PIXEL}"]
    assert base64.b64decode(PIXEL).startswith(b"\x89PNG")
    assert len(found.find("figure")) == 1 and "True\n" in [e[2] for e in found.find("pre")]


def test_a_file_a_notebook_saves_again_in_a_later_cell_is_one_figure(course):
    # same.png once (as the first cell saved and showed it), and the second cell's `fig`, as Jupyter shows it
    assert sorted(p.name for p in (course / "dist/again").glob("*.png")) == ["figure-01.png", "figure-02.png"]


def test_figures_as_svg_and_a_video_the_notebook_made_are_shown_as_jupyter_shows_them(course):
    found = page(course, "media.html")
    images = [i[1]["src"] for i in found.find("img", **{"class": "output-image"})]
    assert len(images) == 1 and images[0].endswith(".svg")
    assert (course / "dist" / images[0]).read_bytes().startswith(b"<?xml")
    assert [s[1]["src"] for s in found.find("source")] == ["media/clip.mp4"]
    assert (course / "dist/media/clip.mp4").is_file()
    assert not [v for v in found.find("video") if "elsewhere" in v[1].get("src", "")]


def test_a_widget_and_a_script_have_their_text_with_a_note_saying_they_do_not_run_here(course):
    found = page(course, "widgets.html")
    notes = [p[2] for p in found.find("p", **{"class": "output-note"})]
    assert len(notes) == 2 and all("静态网页上无法运行" in note for note in notes)
    assert "IntSlider(value=3)" in [e[2] for e in found.find("pre", **{"class": "cell-value"})]
    assert not [e for e in found.find("script") if "src" not in e[1]]
    download = nbformat.reads((course / "dist/widgets/widgets.ipynb").read_text(encoding="utf-8"), 4)
    kept = [set(out.data) for cell in download.cells if cell.cell_type == "code" for out in cell.outputs]
    assert "application/vnd.jupyter.widget-view+json" in kept[0] and "application/javascript" in kept[1]


@pytest.mark.parametrize("line, said", [
    ("files = !ls", "shell commands (!ls) do not run in the build"),
    ("!conda install pandas", "shell commands (!conda install pandas) do not run in the build"),
])
def test_shell_escapes_are_refused_naming_the_cell_and_what_to_write_instead(tmp_path, line, said):
    root = tiny_site(tmp_path / "site")
    write(root / "content/shell.ipynb", [new_markdown("# 外壳"), new_code("x = 1"), new_code(line)])
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "lab shell failed: code cell 2: " + said in result.stderr, result.stderr      # (as the page counts)


@pytest.mark.slow      # (two builds that run a notebook)
def test_an_error_and_a_warning_name_files_as_the_notebook_sees_them_the_same_wherever_it_is_built(tmp_path):
    """A traceback and a warning show the notebook's helper as helper.py and a library's file as
    pandas/... or matplotlib/..., never the building machine's folders (the teacher's home, the
    virtualenv, the generator's own code): the same course built in two folders is the same site."""
    import sys
    from support import REPO
    root = tiny_site(tmp_path / "one/site")
    (root / "content/nb").mkdir()
    (root / "content/nb/helper.py").write_text(
        "import warnings\n\n\ndef boom():\n    warnings.warn('careful')\n    raise ValueError('from the helper')\n",
        encoding="utf-8")
    write(root / "content/nb/paths.ipynb", [
        new_raw("---\nallow_errors: true\n---"), new_markdown("# 路径"), new_code("import helper\nhelper.boom()"),
        new_code("import matplotlib.style\nmatplotlib.style.use('seaborn')"), new_code("!ls")])
    sites = [root, shutil.copytree(root, tmp_path / "two/elsewhere")]
    for root in sites:
        result = run_build(root, root / "dist", root / ".cache")
        assert result.returncode == 0, result.stderr
    download = nbformat.reads((sites[0] / "dist/nb/paths/paths.ipynb").read_text(encoding="utf-8"), 4)
    shown = ["\n".join(out.get("traceback", [])) + out.get("text", "")
             for cell in download.cells if cell.cell_type == "code" for out in cell.outputs]
    assert "File helper.py:6, in boom()" in shown[1] and "helper.py:5: UserWarning: careful" in shown[0], shown
    assert "File matplotlib/style/__init__.py:" in shown[2], shown[2]
    assert "File " not in shown[3] and "shell commands (!ls) do not run in the build" in shown[3], shown[3]
    machine = [str(tmp_path), str(REPO), sys.prefix, sys.base_prefix]
    for path in (p for p in sites[0].joinpath("dist").rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", "replace")
        assert not [folder for folder in machine if folder in text], path
        assert path.read_bytes() == (sites[1] / "dist" / path.relative_to(sites[0] / "dist")).read_bytes(), path


def test_a_package_added_to_requirements_txt_alone_clears_its_note(tmp_path):
    """requirements.txt is read by the build (what a notebook imports that it does not list): an edit to
    it alone is a change, not "nothing changed" with the note of before."""
    root = tiny_site(tmp_path / "site")
    (root / "requirements.txt").write_text("numpy\nmatplotlib\n", encoding="utf-8")
    write(root / "content/needs.ipynb", [new_markdown("# 需要什么"), new_code("import yaml")])
    first = run_build(root, root / "dist", root / ".cache")
    assert first.returncode == 0 and "add `PyYAML`" in first.stderr, first.stderr
    time.sleep(0.3)                                 # (settled: the next build may take states for bytes)
    assert "[nothing changed]" in run_build(root, root / "dist", root / ".cache").stdout
    (root / "requirements.txt").write_text("numpy\nmatplotlib\nPyYAML\n", encoding="utf-8")
    again = run_build(root, root / "dist", root / ".cache")
    assert again.returncode == 0 and "nothing changed" not in again.stdout and "PyYAML" not in again.stderr, \
        (again.stdout, again.stderr)


def test_a_requirements_file_included_with_r_is_what_the_build_read_too(tmp_path):
    """No list names it: the build's own process records what it opened of the project besides its
    sources (labreads.BuildRecorder), and an edit to it alone builds again."""
    root = tiny_site(tmp_path / "site")
    (root / "requirements.txt").write_text("-r more.txt\n", encoding="utf-8")
    (root / "more.txt").write_text("numpy\nmatplotlib\n", encoding="utf-8")
    write(root / "content/needs.ipynb", [new_markdown("# 需要什么"), new_code("import yaml")])
    first = run_build(root, root / "dist", root / ".cache")
    assert first.returncode == 0 and "add `PyYAML`" in first.stderr, first.stderr
    time.sleep(0.3)
    assert "[nothing changed]" in run_build(root, root / "dist", root / ".cache").stdout
    (root / "more.txt").write_text("numpy\nmatplotlib\nPyYAML\n", encoding="utf-8")
    again = run_build(root, root / "dist", root / ".cache")
    assert again.returncode == 0 and "nothing changed" not in again.stdout and "PyYAML" not in again.stderr, \
        (again.stdout, again.stderr)


def test_another_distribution_providing_a_module_is_said_after_the_swap(tmp_path, monkeypatch):
    """As `pip uninstall opencv-python; pip install opencv-python-headless`: cv2 is the same module,
    from another distribution. What the note says follows from what is installed, not only from the
    code: the build after the swap says the new name, though no file of the project changed."""
    packages = tmp_path / "packages"
    (packages / "fakecv").mkdir(parents=True)
    (packages / "fakecv/__init__.py").write_text("", encoding="utf-8")

    def provided_by(name: str) -> None:
        for old in packages.glob("*.dist-info"):
            shutil.rmtree(old)
        info = packages / f"{name.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
        (info / "top_level.txt").write_text("fakecv\n", encoding="utf-8")
    provided_by("fakecv-python")
    monkeypatch.setenv("PYTHONPATH", str(packages))
    root = tiny_site(tmp_path / "site")
    (root / "requirements.txt").write_text("numpy\nmatplotlib\n", encoding="utf-8")
    write(root / "content/cv.ipynb", [new_markdown("# 图像"), new_code("import fakecv")])
    first = run_build(root, root / "dist", root / ".cache")
    assert first.returncode == 0 and "add `fakecv-python`" in first.stderr, first.stderr
    time.sleep(0.3)                                 # (settled: the next build may take states for bytes)
    provided_by("fakecv-python-headless")
    again = run_build(root, root / "dist", root / ".cache")
    assert again.returncode == 0 and "add `fakecv-python-headless`" in again.stderr, (again.stdout, again.stderr)


# Each way Jupyter Book (cell tags) and Quarto (#| options) say what a cell shows of itself.
SHOWN = [  # (tags, source): its code and output on the page: shown, folded/collapsed, or absent
    ((), "#| echo: false\nprint('OUT-ECHO')", ("absent", "shown")),
    (("remove-input",), "print('OUT-REMOVE-INPUT')", ("absent", "shown")),
    (("hide-input",), "print('OUT-HIDE-INPUT')", ("folded", "shown")),
    ((), "#| code-fold: true\nprint('OUT-FOLD')", ("folded", "shown")),
    ((), "#| output: false\nprint('OUT-OUTPUT-FALSE')", ("shown", "absent")),
    (("remove-output",), "print('OUT-REMOVE-OUTPUT')", ("shown", "absent")),
    (("hide-output",), "print('OUT-HIDE-OUTPUT')", ("shown", "collapsed")),
    (("hide-cell",), "print('OUT-HIDE-CELL')", ("folded", "collapsed")),
    (("remove-cell",), "removed = 41\nprint('OUT-REMOVE-CELL')", ("absent", "absent")),
    ((), "#| include: false\nincluded = 1\nprint('OUT-INCLUDE')", ("absent", "absent")),
    ((), "print('OUT-PLAIN', removed + included)", ("shown", "shown")),
]


def test_a_cell_shows_what_its_tags_or_quarto_options_say_and_still_runs(tmp_path):
    import re
    root = tiny_site(tmp_path / "site")
    cells = [nbformat.v4.new_markdown_cell("# 可见性")]
    for tags, source, _ in SHOWN:
        cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {}))
    cells.append(nbformat.v4.new_markdown_cell("教师笔记：答案是 42。", metadata={"tags": ["remove-cell"]}))
    write(root / "content/shown.ipynb", cells)
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "dist/shown.html").read_text(encoding="utf-8")
    sections = re.findall(r'<section class="cell".*?</section>', html, re.S)
    assert "#|" not in html and "教师笔记" not in html         # (a Markdown cell removed, as Jupyter Book removes it)
    assert "OUT-PLAIN 42" in html                      # the removed cells ran: their names are there
    found = []
    for tags, source, expected in SHOWN:
        marker = re.search(r"OUT-[A-Z-]+", source)[0]
        [section] = [s for s in sections if marker in s] or [""]
        code = ("absent" if "print" not in section else
                "folded" if re.search(r'<details class="cell-code">\s*<summary>显示代码</summary>.*print', section, re.S)
                else "shown")
        output = ("absent" if f"{marker}\n" not in section and f"{marker} 42" not in section else
                  "collapsed" if '<details class="cell-output">' in section else "shown")
        found.append((code, output))
    assert found == [expected for _, _, expected in SHOWN]


def test_a_quarto_option_this_site_does_not_support_is_named_at_its_line(tmp_path):
    root = tiny_site(tmp_path / "site")
    write(root / "content/caps.ipynb", [nbformat.v4.new_markdown_cell("# 图"),
                                        nbformat.v4.new_code_cell("#| tbl-cap: 一张表\nprint(1)")])
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    text = (root / "content/caps.ipynb").read_text(encoding="utf-8").splitlines()
    line = next(n for n, t in enumerate(text, 1) if "tbl-cap" in t)
    assert f"content/caps.ipynb:{line}:" in result.stderr
    assert "the cell option #| tbl-cap: 一张表 is not supported here" in result.stderr


def test_a_figure_caption_on_a_cell_that_draws_none_is_said_in_the_cell_s_terms(tmp_path):
    """A caption alone shows nothing, as in Quarto and myst-nb (a real chapter has several): a warning,
    an error under --strict. A label may be referenced: an error."""
    root = tiny_site(tmp_path / "site")
    write(root / "content/caps.ipynb", [nbformat.v4.new_markdown_cell("# 图"),
                                        nbformat.v4.new_code_cell("#| fig-cap: 一张图\nprint('printed')")])
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "cell 2 (code)" in result.stderr or "code cell 1" in result.stderr, result.stderr
    assert "this cell's figure has a caption (#| fig-cap, or myst-nb's figure options), but the cell drew no figure: " \
           "the caption is not shown" in result.stderr and "-1.png" not in result.stderr
    page = Elements((tmp_path / "dist/caps.html").read_text(encoding="utf-8"))
    assert not page.find("figure") and "一张图" not in "".join(text for _, _, text in page.find("main"))
    assert "printed" in "".join(text for _, _, text in page.find("pre"))
    assert run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict").returncode == 1
    write(root / "content/caps.ipynb", [nbformat.v4.new_markdown_cell("# 图\n\n见 @fig-one。"),
                                        nbformat.v4.new_code_cell("#| label: fig-one\n#| fig-cap: 一张图\nprint(1)")])
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "this cell's figure has a label (#| label, or myst-nb's figure options), but the cell drew no figure: " \
           "draw one in it, or remove them" in result.stderr, result.stderr


def test_a_fence_a_markdown_cell_leaves_open_ends_with_its_cell_as_jupyter_renders_each_cell(tmp_path):
    """Not the rest of the page as code: the next cells, and their headings, shown as they are."""
    root = tiny_site(tmp_path / "site")
    write(root / "content/open.ipynb", [nbformat.v4.new_markdown_cell("# 开着\n\n- 一项：\n\n  ```python\n  x = 1"),
                                        nbformat.v4.new_code_cell("print('RAN')"),
                                        nbformat.v4.new_markdown_cell("## 下一节\n\n之后。")])
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "dist/open.html").read_text(encoding="utf-8")
    assert '<h2 id="下一节">' in html and "<p>之后。</p>" in html and 'class="cell-stdout"' in html


def test_a_latex_output_of_words_with_formulas_in_them_is_words_and_formulas_as_mathjax_shows_them(tmp_path):
    root = tiny_site(tmp_path / "site")
    write(root / "content/words.ipynb", [nbformat.v4.new_code_cell(
        "from IPython.display import Latex, display\ndisplay(Latex(r'The value $\\alpha=1$ is small'))")])
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "dist/words.html").read_text(encoding="utf-8")
    output = html.split('class="cell-output"')[1]
    assert "<p>The value <math" in output and "</math> is small</p>" in output and "$" not in output
