"""python build.py import: a teacher's notebook becomes a computed lab page, tried as a teacher would."""
from __future__ import annotations

import base64
import html
import json
import re
import subprocess
import sys

import pytest

from support import REPO, run_build, tiny_site

PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def markdown(text: str, **extra) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text, **extra}


def code(text: str, outputs=(), **metadata) -> dict:
    return {"cell_type": "code", "metadata": metadata, "source": text, "outputs": list(outputs),
            "execution_count": None}


def notebook(cells: list[dict], title: str | None = None) -> str:
    metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"}}
    if title:
        metadata["title"] = title
    cells = [{"id": f"c{number}", **cell} for number, cell in enumerate(cells)]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": cells}, ensure_ascii=False)


# What real notebooks hold: a heading, prose, a last expression, two figures in one cell, magics,
# an error shown on purpose (its stored output), a pasted "saved output", a linked image, a link
# to another notebook, and a results.json the page reads.
LESSON = [
    markdown("# 平方与求和\n\n先看五个点。"),
    code("%matplotlib inline\nimport json\nimport numpy as np\nx = np.linspace(0, 1, 5)\nprint('x =', x)\nx ** 2"),
    markdown("**保存输出 · 2026-09-18**\n\n```text\nx = [0.   0.25 0.5  0.75 1.  ]\n```"),
    markdown("两张图画在同一个单元里，第二张之后才 `plt.show()`：\n\n![草图](images/sketch.png)"),
    code("import matplotlib.pyplot as plt\nplt.figure(); plt.plot(x, x ** 2)\n"
         "fig, ax = plt.subplots(); ax.bar(range(5), x); plt.show()"),
    markdown("下面这个单元有意出错：列表没有 `shape`。"),
    code("[1, 2].shape", outputs=[{"output_type": "error", "ename": "AttributeError",
                                   "evalue": "'list' object has no attribute 'shape'", "traceback": []}]),
    code("%time total = float((x ** 2).sum())\n"
         "json.dump({'total': total, 'x': x.tolist()}, open('results.json', 'w'))\n{'total': total}"),
    markdown("总和是 {{ total }}。下一步见[第二本](second.ipynb#start)。"),
]
SECOND = [markdown("# 第二本\n\n## 开始 {#start}\n\n接着算。"),
          code("import json\njson.dump({'n': 2}, open('results.json', 'w'))\nprint('n = 2')")]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The lesson and its sequel imported together into a small site, then built strictly."""
    tmp = tmp_path_factory.mktemp("import")
    root = tiny_site(tmp / "site")
    books = tmp / "notebooks"
    (books / "images").mkdir(parents=True)
    (books / "images/sketch.png").write_bytes(PIXEL)
    (books / "lesson.ipynb").write_text(notebook(LESSON), encoding="utf-8")
    (books / "second.ipynb").write_text(notebook(SECOND, title="第二本"), encoding="utf-8")
    done = run_import(root, books / "lesson.ipynb", books / "second.ipynb", "--cache", str(tmp / "cache"))
    assert done.returncode == 0, done.stderr
    built = run_build(root, tmp / "dist", tmp / "cache", "--strict")
    assert built.returncode == 0, built.stderr
    return root, tmp / "dist", done, built


def run_import(root, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "build.py"), "import", *map(str, args), "--root", str(root)],
                          capture_output=True, text=True, timeout=120)


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_import_writes_a_script_a_page_and_an_entry_and_computes_at_once(imported):
    root, dist, done, built = imported
    assert done.stdout.startswith("wrote compute/lesson.py, content/lesson.md, content/images/sketch.png, "
                                  "compute/second.py, content/second.md, site.yaml; computed")
    assert "lesson cached" in built.stdout and "second cached" in built.stdout     # computed by the import
    page = (root / "content/lesson.md").read_text(encoding="utf-8").splitlines()
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: content/")]
    assert [page[int(n.split(":")[2]) - 1] for n in notes] == [
        "![单元 c4 画出的第 1 张图](figure:c4-1.png)", "![单元 c4 画出的第 2 张图](figure:c4-2.png)"]
    from sitegen.project.cells import read_cells
    cells = read_cells(root / "compute/lesson.py", root)
    assert [c.name for c in cells] == ["c1", "c4", "c6", "c7"]         # named by their Jupyter ids: stable
    assert cells[2].raises                                     # its stored output was an error
    assert cells[0].source.startswith("# %matplotlib inline  (IPython only")
    assert "total = float((x ** 2).sum())  # was %time" in cells[3].source
    from sitegen.project.config import load_config
    lab = load_config(root).lab("lesson")
    assert (lab.display, lab.title, lab.notebook) == ("jupyter", "平方与求和", "lesson/materials/lesson.ipynb")


def test_the_page_shows_the_prose_in_order_and_what_was_computed(imported):
    root, dist, _, _ = imported
    page = (dist / "lesson.html").read_text(encoding="utf-8")
    text = text_of(page)
    order = ["先看五个点", "x = [0.   0.25 0.5  0.75 1.  ]", "array([0.    , 0.0625, 0.25  , 0.5625, 1.    ])",
             "两张图画在同一个单元里", "下面这个单元有意出错", "AttributeError: 'list' object has no attribute 'shape'",
             "{'total': 1.875}", "总和是 1.8750"]
    positions = [text.find(s) for s in order]
    assert -1 not in positions and positions == sorted(positions), dict(zip(order, positions))
    assert text.count("x = [0.   0.25") == 1                 # the pasted output is gone: only the computed one
    assert "保存输出 · 2026-09-18" not in text
    figures = re.findall(r'src="(lesson/images/figure-\d+\.png)"', page)
    assert figures == ["lesson/images/figure-01.png", "lesson/images/figure-02.png"]     # two, under their cell
    assert all((dist / f).stat().st_size > 1000 for f in figures)
    assert '<img src="images/sketch.png" alt="草图"' in page and (dist / "images/sketch.png").read_bytes() == PIXEL
    assert 'href="second#start"' in page                         # the other notebook's page


def test_the_notebook_download_holds_jupyter_s_outputs(imported):
    _, dist, _, _ = imported
    import nbformat
    book = nbformat.read(dist / "lesson/materials/lesson.ipynb", as_version=4)
    nbformat.validate(book)
    code_cells = [c for c in book.cells if c.cell_type == "code"]
    kinds = [[o.output_type for o in c.outputs] for c in code_cells]
    assert kinds == [["stream", "execute_result"], ["display_data", "display_data"], ["error"], ["execute_result"]]
    assert code_cells[2].metadata.tags == ["raises-exception"]
    assert code_cells[3].outputs[0].data["text/plain"] == "{'total': 1.875}"


@pytest.mark.slow
def test_the_page_shows_what_a_jupyter_kernel_shows(imported):
    """The imported notebook, run by a real kernel: the same values, as many figures per cell, the same error."""
    import nbformat
    from nbclient import NotebookClient
    root, dist, _, _ = imported
    book = nbformat.reads(notebook(LESSON), as_version=4)
    for cell in book.cells:
        if cell.cell_type == "code":
            cell.metadata["tags"] = ["raises-exception"] if cell.outputs else []
    NotebookClient(book, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(dist.parent)}}).execute()
    ours = nbformat.read(dist / "lesson/materials/lesson.ipynb", as_version=4)
    for kernel, built in zip([c for c in book.cells if c.cell_type == "code"],
                             [c for c in ours.cells if c.cell_type == "code"]):
        def shown(cell, kind):
            return [o.get("data", {}).get("text/plain") if kind == "execute_result" else o.get("ename")
                    for o in cell.outputs if o.output_type == kind]
        assert shown(built, "execute_result") == shown(kernel, "execute_result")
        assert shown(built, "error") == shown(kernel, "error")
        assert len(shown(built, "display_data")) == len(shown(kernel, "display_data"))


def test_ipython_syntax_is_converted_where_python_has_a_meaning():
    from sitegen.core.errors import Collector
    from sitegen.commands.importer import _python
    problems = Collector()
    source = "%pip install numpy\nlen?\n%timeit -n 10 sum(range(9))\nif True:\n    %config InlineBackend.figure_format = 'svg'"
    assert _python(source, 3, "nb.ipynb", problems).splitlines() == [
        "# %pip install numpy  (the build installs nothing: list the package in requirements.txt)",
        "help(len)", "import timeit; print('%.3g s per loop' % (lambda n, s: s / n)(*timeit.Timer('sum(range(9))', "
                     "globals=dict(globals())).autorange()))  # was %timeit",
        "if True:", "    pass  # %config InlineBackend.figure_format = 'svg'  (IPython only: not needed here)"]
    assert not problems.problems
    _python("files = !ls\n%cd /tmp", 4, "nb.ipynb", problems)
    assert [str(p) for p in problems.problems] == [
        "nb.ipynb: cell 4, line 1: `files = !ls` is IPython syntax with no plain-Python meaning (a magic or a "
        "shell command): write it in Python, or delete it, and import again",
        "nb.ipynb: cell 4, line 2: `%cd /tmp` is IPython syntax with no plain-Python meaning (a magic or a "
        "shell command): write it in Python, or delete it, and import again"]


def test_timeit_times_in_a_namespace_of_its_own_and_no_block_is_left_empty():
    """As IPython does: `%timeit a, b = ...` assigns nothing of the notebook's (PDSH 02.07 uses the names
    after), `%%timeit` never writes a '# %%' line (a cell marker of the percent script), and a shell
    escape inside a block leaves a statement there."""
    import contextlib
    import io
    from sitegen.core.errors import Collector
    from sitegen.commands.importer import _python
    problems = Collector()
    cells = ["counts = 'the notebook s'\n%timeit -n 10 counts, edges = divmod(7, 2)", "%%timeit -n1 -r1 x = 3\ny = x * 2",
             "if False:\n    !pip install foo\n    %matplotlib inline\ndone = True"]
    script = "\n".join(_python(cell, k, "nb.ipynb", problems) for k, cell in enumerate(cells, 1))
    assert "# %%" not in script and not problems.problems
    names, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(script, "lab.py", "exec"), names)
    assert names["counts"] == "the notebook s" and "edges" not in names and "y" not in names and names["done"]
    assert [line.split()[1:] for line in printed.getvalue().splitlines()] == [["s", "per", "loop"]] * 2


@pytest.mark.parametrize("cells, expected", [
    ([code("x = 1\n%cd /tmp")], "nb.ipynb: cell 1, line 2: `%cd /tmp` is IPython syntax"),
    ([code("x = 1"), markdown("见[另一本](other.ipynb)。")],
     "nb.ipynb: cell 2: links to other.ipynb, which is not imported with it: import them together"),
    ([code("x = 1"), markdown("见[部件](Widget%20List.ipynb)。")],      # a command that runs as written
     "nb.ipynb: cell 2: links to Widget List.ipynb, which is not imported with it: import them together "
     "(python build.py import nb.ipynb 'Widget List.ipynb')"),
    ([markdown("![远处的图](https://example.com/a.png)"), code("x = 1")],
     "nb.ipynb: cell 1: the image https://example.com/a.png is loaded from another site"),
    ([markdown("![主机名](/etc/hostname)"), code("x = 1")],
     "nb.ipynb: cell 1: the image /etc/hostname is outside the notebook's folder"),
    ([markdown("![秘密](../secret.png)"), code("x = 1")],
     "nb.ipynb: cell 1: the image ../secret.png is outside the notebook's folder"),
    ([code("import json\njson.dump({}, open('results.json', 'w'))"), code("y = 1\nz = 1 / 0")],
     "nb.ipynb: cell 2, line 2: lab nb failed: ZeroDivisionError: division by zero (nothing was written)"),
])
def test_a_notebook_that_cannot_be_a_lab_names_its_cell_and_nothing_is_written(tmp_path, cells, expected):
    root = tiny_site(tmp_path / "site")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    (tmp_path / "nb.ipynb").write_text(notebook(cells), encoding="utf-8")
    done = run_import(root, tmp_path / "nb.ipynb", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    message = done.stderr.replace(str(tmp_path) + "/", "")
    assert message.startswith("error: " + expected), message
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in (root / "content").iterdir()) == ["404.md", "index.md"]   # no folder left


def test_a_file_that_is_not_a_notebook_is_named(tmp_path):
    root = tiny_site(tmp_path / "site")
    (tmp_path / "nb.ipynb").write_text('{"cells": [\n  oops\n]}', encoding="utf-8")
    done = run_import(root, tmp_path / "nb.ipynb")
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {tmp_path}/nb.ipynb:2: not a notebook: invalid JSON"), done.stderr


def test_a_notebook_named_as_people_name_files_still_imports(tmp_path):
    """`Week 1_final.ipynb`: the lab's id and the download's name are made plain; a bad --id is named."""
    root = tiny_site(tmp_path / "site")
    cells = [code("import json\njson.dump({'n': 1}, open('results.json', 'w'))")]
    (tmp_path / "Week 1_final.ipynb").write_text(notebook(cells), encoding="utf-8")
    bad = run_import(root, tmp_path / "Week 1_final.ipynb", "--id", "Week_1", "--cache", str(tmp_path / "cache"))
    assert bad.returncode == 1 and bad.stderr.startswith("error: site.yaml: a lab id is lowercase ASCII"), bad.stderr
    done = run_import(root, tmp_path / "Week 1_final.ipynb", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    from sitegen.project.config import load_config
    lab = load_config(root).lab("week-1-final")
    assert (lab.notebook, lab.page) == ("week-1-final/materials/week-1-final.ipynb", "week-1-final.md")


def test_a_notebook_that_writes_no_results_json_imports_and_its_page_quotes_its_own_names(tmp_path):
    """As real notebooks are: no results.json. Its top-level values are the lab's results."""
    root = tiny_site(tmp_path / "site")
    cells = [markdown("# 线性回归\n\n最后的损失是 {{ loss | .3f }}，共 {{ steps }} 步。"),
             code("import numpy as np\nsteps = 40\nw = np.array([0.5, 2.0])\nloss = float(np.mean((w - 1) ** 2))\nloss")]
    (tmp_path / "linreg.ipynb").write_text(notebook(cells), encoding="utf-8")
    done = run_import(root, tmp_path / "linreg.ipynb", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    built = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert built.returncode == 0, built.stderr
    page = text_of((tmp_path / "dist/linreg.html").read_text(encoding="utf-8"))
    assert "最后的损失是 0.625，共 40 步。" in page
    results = json.loads((tmp_path / "dist/linreg/materials/results.json").read_text(encoding="utf-8"))
    assert {k: results[k] for k in ("steps", "w", "loss")} == {"steps": 40, "w": [0.5, 2.0], "loss": 0.625}


def test_a_notebook_named_like_a_package_is_refused_and_chinese_names_get_ids_of_their_own(tmp_path):
    root = tiny_site(tmp_path / "site")
    cells = [code("x = 1")]
    for name in ("sympy.ipynb", "json.ipynb", "线性回归.ipynb", "梯度下降.ipynb"):
        (tmp_path / name).write_text(notebook(cells), encoding="utf-8")
    for shadowing in ("json", "sympy" if __import__("importlib.util").util.find_spec("sympy") else "json"):
        done = run_import(root, tmp_path / f"{shadowing}.ipynb", "--cache", str(tmp_path / "cache"))
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert (f"error: site.yaml: lab id '{shadowing}' would make compute/{shadowing}.py, which every lab "
                f"would import instead of the module '{shadowing}'") in done.stderr
    done = run_import(root, tmp_path / "线性回归.ipynb", tmp_path / "梯度下降.ipynb", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    from sitegen.project.config import load_config
    ids = [lab.id for lab in load_config(root).labs if lab.id != "tiny"]
    assert len(ids) == 2 and len(set(ids)) == 2 and all(i.startswith("nb-") for i in ids)


def test_what_a_notebook_imports_that_requirements_txt_does_not_list_is_said_with_the_line_to_add(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "requirements.txt").write_text("numpy>=2\nmatplotlib  # figures\n", encoding="utf-8")
    cells = [code("import json\nimport numpy as np\nimport yaml\nfrom matplotlib import pyplot\nx = 1")]
    (tmp_path / "needs.ipynb").write_text(notebook(cells), encoding="utf-8")
    done = run_import(root, tmp_path / "needs.ipynb", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "requirements.txt" in line]
    assert len(notes) == 1 and notes[0].startswith("note: compute/needs.py:")
    assert "imports yaml, which requirements.txt does not list: add `PyYAML` to requirements.txt" in notes[0]


def test_a_notebook_that_imports_what_is_not_installed_says_what_to_do(tmp_path):
    root = tiny_site(tmp_path / "site")
    (tmp_path / "nb.ipynb").write_text(notebook([code("import no_such_package_here\nx = 1")]), encoding="utf-8")
    done = run_import(root, tmp_path / "nb.ipynb", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "nb.ipynb: cell 1, line 1: imports no_such_package_here, which is not installed here" in done.stderr
    assert "install what the labs import: pip install no_such_package_here" in done.stderr


@pytest.mark.slow      # (three imports and a build)
def test_importing_again_updates_the_lab_in_place_and_keeps_the_teacher_s_page(tmp_path):
    root = tiny_site(tmp_path / "site")
    lesson = tmp_path / "lesson.ipynb"
    cells = [markdown("# 课", id="intro"), code("x = 1\nprint(x)"), code("1 / 0", outputs=[
        {"output_type": "error", "ename": "E", "evalue": "", "traceback": []}])]
    cells[1]["id"], cells[2]["id"] = "first", "divide"          # Jupyter's ids: they stay as cells come and go
    lesson.write_text(notebook(cells), encoding="utf-8")
    done = run_import(root, lesson)
    # Its saved error is no longer what it does? It was: 1 / 0 still raises, so the tag stays.
    assert done.returncode == 0, done.stderr
    page = root / "content/lesson.md"
    page.write_text(page.read_text(encoding="utf-8").replace("::: downloads", "我的讲解。\n\n::: downloads"), encoding="utf-8")
    cells[1] = {**code("x = 2\nprint(x)"), "id": "first"}
    cells[2] = {**code("0 / 1", outputs=cells[2]["outputs"]), "id": "divide"}   # fixed since: its saved error is stale
    cells.insert(2, {**code("y = x * 3"), "id": "triple"})
    lesson.write_text(notebook(cells), encoding="utf-8")
    again = run_import(root, lesson)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("wrote compute/lesson.py; computed")
    assert "我的讲解。" in page.read_text(encoding="utf-8")              # the page is the teacher's
    assert "content/lesson.md: the notebook has a new cell triple: add `::: cell triple` where it belongs" in again.stderr
    assert "cell 4: its saved output is an error that it no longer raises" in again.stderr
    assert "x = 2" in (root / "compute/lesson.py").read_text(encoding="utf-8")
    assert run_build(root, tmp_path / "dist", root / ".cache", "--strict").returncode == 0
    script = root / "compute/lesson.py"
    script.write_text(script.read_text(encoding="utf-8").replace("y = x * 3", "y = x * 4"), encoding="utf-8")
    refused = run_import(root, lesson)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "compute/lesson.py:" in refused.stderr and "changed since it was imported from lesson.ipynb" in refused.stderr
    assert "y = x * 4" in script.read_text(encoding="utf-8")            # nothing was written
