"""Exercises (hints, a solution) and self-checks on the generator's fixture site: folded for a reader,
all shown in an instructor's build, solutions left out of a student's build, and nothing else differs."""
from __future__ import annotations

import json
import re

import pytest

from support import run_build, tiny_site, tree_bytes

PRACTICE = """
::: exercise title="平方和"
五个 y 加起来是多少？
::: hint
先看表的第 1 列。
::: hint
SOLUTION-FREE-HINT 逐个相加。
::: solution
SECRET-ANSWER 总和是 {{ total }}。
::: note
SECRET-NOTE 一个解答里的注意框：它的 end 不结束练习。
::: end
SECRET-AFTER-NOTE 解答的最后一句。
::: end

::: check total tolerance=0.001 prompt="五个 y 的总和是多少？"
"""

# A notebook page whose solution spans cells: its text, a code cell (its output, a figure, a name only it
# binds), and more text before the exercise's end.
DRILL = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
    "name": "python3", "display_name": "Python 3", "language": "python"}}, "cells": [
    {"cell_type": "markdown", "id": "a", "metadata": {}, "source":
     "# 练习页\n\n::: exercise title=\"求和\"\n\n求 1 到 10 的和。\n\n::: solution\n\nNB-SECRET-TEXT 用公式。\n\n"
     "::: tip\nNB-SECRET-TIP 它的 end 不结束练习。\n::: end\n\nNB-SECRET-AFTER-TIP 还在解答里。"},
    {"cell_type": "code", "id": "b", "metadata": {}, "execution_count": None, "outputs": [], "source":
     "import matplotlib.pyplot as plt\nnb_secret_value = sum(range(11))\nprint('NB-SECRET-OUT', nb_secret_value)\n"
     "plt.plot([5, 1, 4])"},
    {"cell_type": "markdown", "id": "c", "metadata": {}, "source": "NB-SECRET-TAIL 就是这样。\n\n::: end\n\n下一题。"},
    {"cell_type": "code", "id": "d", "metadata": {}, "execution_count": None, "outputs": [], "source":
     "shown_value = 3\nprint('NB-SHOWN-OUT', shown_value)"}]}
# The same in sphinx-exercise's syntax, in a MyST Markdown notebook: a {solution} right after its
# {exercise}, and a gated one whose {solution-start} ... {solution-end} spans a code cell.
MYST_DRILL = """---
kernelspec:
  name: python3
  display_name: Python 3
---
# 另一种写法

```{exercise} 求积
:label: product
求 1 到 5 的积。
```

```{solution} product
:class: dropdown
MYST-SECRET-TEXT 逐个相乘。

````{prf:proof}
MYST-SECRET-PROOF 归纳即得。
````

MYST-SECRET-AFTER-PROOF 证明之后还在解答里。
```

```{exercise-start}
:label: squares
```
求平方和。
```{exercise-end}
```

```{solution-start} squares
```
MYST-SECRET-GATED 用循环。

```{code-cell} ipython3
myst_secret_value = sum(k * k for k in range(4))
print('MYST-SECRET-OUT', myst_secret_value)
```

MYST-SECRET-TAIL 就是这样。
```{solution-end}
```

下一题之后的文字。
"""
SECRETS = [b"MYST-SECRET-PROOF", b"MYST-SECRET-AFTER-PROOF", b"MYST-SECRET-TEXT", b"MYST-SECRET-GATED", b"MYST-SECRET-OUT", b"MYST-SECRET-TAIL", b"myst_secret_value",
           b"SECRET-ANSWER", b"SECRET-NOTE", b"SECRET-AFTER-NOTE", b"NB-SECRET-TEXT", b"NB-SECRET-TIP",
           b"NB-SECRET-AFTER-TIP", b"NB-SECRET-TAIL", b"NB-SECRET-OUT", b"nb_secret_value"]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """The fixture site with an exercise and a check on its lab page, built three ways."""
    tmp = tmp_path_factory.mktemp("practice")
    root = tiny_site(tmp / "site")
    page = root / "content/index.md"
    page.write_text(page.read_text(encoding="utf-8") + PRACTICE, encoding="utf-8")
    (root / "content/drill.ipynb").write_text(json.dumps(DRILL, ensure_ascii=False), encoding="utf-8")
    (root / "content/myst-drill.md").write_text(MYST_DRILL, encoding="utf-8")
    built = {}
    for mode, args in (("folded", ()), ("shown", ("--solutions",)), ("omitted", ("--no-solutions",))):
        result = run_build(root, tmp / mode, tmp / "cache", "--strict", *args)
        assert result.returncode == 0, result.stderr
        built[mode] = tree_bytes(tmp / mode)
    return built


def page_of(files) -> str:
    return files["index.html"].decode("utf-8")


def test_a_reader_s_build_folds_hints_and_the_solution_and_keeps_it_out_of_search(builds):
    page = page_of(builds["folded"])
    assert '<p class="exercise-title" id="exercise-1-title"><span class="exercise-number">练习 1</span> 平方和</p>' in page
    assert re.findall(r'<details class="(\w+)"[^>]*?( open)?>', page) == [("hint", ""), ("hint", ""), ("solution", "")]
    assert "<summary>提示 1</summary>" in page and "<summary>提示 2</summary>" in page
    results = json.loads(builds["folded"]["materials/results.json"])
    assert f"SECRET-ANSWER 总和是 {results['total']:.4f}。" in page           # a computed value, in the solution
    search = builds["folded"]["search.json"].decode("utf-8")
    assert "SOLUTION-FREE-HINT" in search and "SECRET-ANSWER" not in search


def test_the_instructor_s_build_differs_only_by_showing_them(builds):
    folded, shown = builds["folded"], builds["shown"]
    assert set(shown) == set(folded)
    assert [p for p in folded if folded[p] != shown[p]] == ["drill.html", "index.html", "myst-drill.html"]  # notebooks: the same
    assert page_of(shown).replace(" open>", ">") == page_of(folded)
    assert page_of(shown).count('<details class="hint" open>') == 2


def test_the_student_s_build_leaves_solutions_out_of_the_site_entirely(builds):
    folded, omitted = builds["folded"], builds["omitted"]
    # The solution's figure, and a notebook's results.json (its names, any of which a solution may have
    # set, changed through another name, or glued).
    assert set(omitted) == set(folded) - {"drill/figure-01.png", "drill/results.json", "myst-drill/results.json"}
    assert sorted(p for p in folded if folded.get(p) != omitted.get(p)) == [
        "drill.html", "drill/drill.ipynb", "drill/figure-01.png", "drill/results.json", "index.html",
        "materials/tiny.ipynb", "myst-drill.html", "myst-drill/myst-drill.ipynb", "myst-drill/results.json",
        "search.json"]                      # (the pages' downloads no longer list those results.json)
    def squeezed(text: str) -> str:
        return re.sub(r">\s+<", "><", text)
    without = re.sub(r'<details class="(solution|check-answer)".*?</details>', "", page_of(folded), flags=re.S)
    assert squeezed(page_of(omitted)) == squeezed(without)
    assert "SOLUTION-FREE-HINT" in page_of(omitted) and "<summary>解答</summary>" not in page_of(omitted)


def test_no_file_of_the_student_s_build_holds_a_solution_a_notebook_page_s_included(builds):
    folded, omitted = builds["folded"], builds["omitted"]
    for secret in SECRETS:
        assert [p for p, data in folded.items() if secret in data], secret      # (the test can fail)
        assert not [p for p, data in omitted.items() if secret in data], secret
    assert not {data for p, data in omitted.items() if p.endswith(".png")} & {folded["drill/figure-01.png"]}
    cells = json.loads(omitted["drill/drill.ipynb"])["cells"]
    assert ["".join(c["source"]) for c in cells] == [
        '# 练习页\n\n::: exercise title="求和"\n\n求 1 到 10 的和。', "::: end\n\n下一题。",
        "shown_value = 3\nprint('NB-SHOWN-OUT', shown_value)"]
    assert "".join(cells[2]["outputs"][0]["text"]) == "NB-SHOWN-OUT 3\n"
    assert b"NB-SHOWN-OUT" in omitted["drill.html"]


def test_a_check_carries_the_computed_answer_its_tolerance_and_its_words(builds):
    page = page_of(builds["folded"])
    results = json.loads(builds["folded"]["materials/results.json"])
    form = re.search(r'<form class="check-form"[^>]*>', page)[0]
    assert f'data-answer="{results["total"]!r}"' in form and 'data-tolerance="0.001"' in form
    assert 'data-right="对了：与计算值相差不超过 0.001。"' in form and " hidden>" in form   # shown by its script
    assert re.search(r'<label for="check-1-input"><span class="check-label">自测：</span>五个 y 的总和是多少？</label>', page)
    assert re.search(r'<script type="module" src="assets/check\.\w+\.js"', page)


@pytest.mark.parametrize("text, expected", [
    ("::: hint\n提示\n", "content/index.md:LINE: '::: hint' belongs inside an exercise: open one with '::: exercise' above it"),
    ("::: exercise\n题\n", "content/index.md:LINE: '::: exercise' is never closed: add a line '::: end' after it"),
    ("::: exercise\n::: solution\n解\n::: hint\n提示\n::: end\n",
     "content/index.md:LINE+3: '::: hint' after the solution at the exercise's end: put it before"),
    ("::: end\n", "content/index.md:LINE: '::: end' closes nothing"),
    ("::: note\n::: exercise\n题\n::: end\n::: end\n",
     "content/index.md:LINE+1: '::: exercise' inside the note opened at line LINE: close that one with '::: end' first"),
    ("::: exercise\n::: tip\n::: hint\n提示\n::: end\n::: end\n",
     "content/index.md:LINE+2: '::: hint' belongs inside an exercise: open one with '::: exercise' above it (the tip "
     "opened at line LINE+1 is open"),
    ("::: warning\n注意\n", "content/index.md:LINE: '::: warning' is never closed: add a line '::: end' after it"),
    ("::: note fold=yes\n注意\n::: end\n", "content/index.md:LINE: note option fold= must be 'open' or 'closed'"),
    ("::: check total prompt=\"多少？\"\n", "content/index.md:LINE: check total needs tolerance=NUMBER > 0"),
    ("::: check totl tolerance=0.1 prompt=\"多少？\"\n", "content/index.md:LINE: check totl: no 'totl' in results.json"),
    ("::: check x tolerance=0.1 prompt=\"多少？\"\n", "content/index.md:LINE: check x: the answer must be a number, not list"),
])
def test_a_practice_mistake_names_its_line(tmp_path, text, expected):
    root = tiny_site(tmp_path / "site")
    page = root / "content/index.md"
    before = page.read_text(encoding="utf-8")
    line = before.count("\n") + 2
    page.write_text(before + "\n" + text, encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    expected = re.sub(r"LINE(\+\d)?", lambda found: str(line + int(found[1] or 0)), expected)
    assert expected in result.stderr, result.stderr


HOMEWORK = """---
title: 作业
---
::: exercise title="求和"
HW-TASK 求 1 到 10 的和。
::: solution
HW-SECRET 答案是五十五，用高斯的办法。
::: end
"""


def _reader(code: str) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}, "cells": [
        {"cell_type": "code", "id": "a", "metadata": {}, "execution_count": None, "outputs": [], "source": code}]})


def test_a_lab_that_read_a_page_holding_a_solution_stops_the_student_build_and_publishes_nothing(tmp_path):
    """--no-solutions: no byte of a solution, whoever read it. A notebook that reads a page holding one
    may show any of it in anything it makes (printed, split into words, escaped in JSON, its download's
    copy of the page): the student build refuses it, naming the lab, the page and the solution's line,
    and publishes nothing; the instructor's build publishes it."""
    from support import empty_course, holding
    root = empty_course(tmp_path / "course")
    (root / "content/hw.md").write_text(HOMEWORK, encoding="utf-8")
    (root / "content/week").mkdir()
    (root / "content/week/reader.ipynb").write_text(_reader(
        "n = len(open('../hw.md', encoding='utf-8').read().splitlines())\nprint(n, 'lines')"), encoding="utf-8")
    result = run_build(root, tmp_path / "instructor", tmp_path / "cache", "--strict", "--solutions")
    assert result.returncode == 0 and "week/reader/reader.zip:hw.md" in holding(tmp_path / "instructor", "HW-SECRET")
    (tmp_path / "student").mkdir()
    result = run_build(root, tmp_path / "student", tmp_path / "cache", "--no-solutions")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert ("content/week/reader.ipynb: lab week-reader read content/hw.md, which holds a solution (line 7) that a "
            "student build leaves out") in result.stderr, result.stderr
    assert list((tmp_path / "student").iterdir()) == []


def test_what_a_solution_s_cell_wrote_or_changed_is_no_file_of_the_student_build(tmp_path):
    """A notebook whose solution cell sets a name another cell bound, changes a dict through its name,
    glues a value and writes a CSV: none of it in the student build (its results.json, the CSV), while
    the instructor's build has them; what the cells shown wrote stays."""
    from support import empty_course, holding
    root = empty_course(tmp_path / "course")
    cell = lambda kind, source: {"cell_type": kind, "id": f"c{abs(hash(source)) % 10**8}", "metadata": {}, "source": source,
                                 **({"execution_count": None, "outputs": []} if kind == "code" else {})}
    (root / "content/nb.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}, "cells": [
        cell("markdown", "# 练习"),
        cell("code", "answer = None\nres = {}\nopen('data.csv', 'w').write('x\\n1\\n')"),
        cell("markdown", "::: exercise title=\"A\"\n求答案。\n::: solution\n用这个。"),
        cell("code", "from myst_nb import glue\nanswer = 'SOLMARK20'\nres['k'] = 'SOLMARK23'\nglue('g', 'SOLMARK22')\n"
                     "open('sol.csv', 'w').write('a\\nSOLMARK21\\n')"),
        cell("markdown", "::: end")]}), encoding="utf-8")
    for mode in ("--solutions", "--no-solutions"):
        result = run_build(root, tmp_path / mode, tmp_path / "cache", "--strict", mode)
        assert result.returncode == 0, result.stderr
    assert holding(tmp_path / "--solutions", "SOLMARK2")             # (the test can fail)
    assert holding(tmp_path / "--no-solutions", "SOLMARK2") == []
    assert (tmp_path / "--no-solutions/nb/data.csv").is_file() and not (tmp_path / "--no-solutions/nb/sol.csv").exists()
    assert "sol.csv" not in (tmp_path / "--no-solutions/nb.html").read_text(encoding="utf-8")


def test_a_solution_marker_an_indent_made_text_is_an_error_not_a_solution_in_every_build(tmp_path):
    root = tiny_site(tmp_path / "site")
    page = root / "content/index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n::: exercise\n求和。\n ::: solution\nINDENT-SECRET 五十五。\n"
                    "::: end\n", encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--no-solutions")
    assert result.returncode == 1 and "' ::: solution' is indented" not in result.stderr
    assert "'::: solution' is indented, so it is read as text, not as a block" in result.stderr, result.stderr


def test_a_cell_shown_after_a_solution_that_reads_ipython_s_history_stops_the_student_build(tmp_path):
    """IPython keeps the code it ran (In, _ih): a cell shown after a solution's cells that prints it,
    encoded or not, would publish the solution's code; the student build says which cell."""
    from support import empty_course
    root = empty_course(tmp_path / "course")
    cell = lambda n, kind, source: {"cell_type": kind, "id": f"c{n}", "metadata": {}, "source": source,
                                    **({"execution_count": None, "outputs": []} if kind == "code" else {})}
    (root / "content/nb.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}, "cells": [
        cell(0, "markdown", "# 练习\n\n::: exercise title=\"A\"\n求答案。\n::: solution"),
        cell(1, "code", "answer = 'CODESOLUTION_BETA_888'"),
        cell(2, "markdown", "::: end"),
        cell(3, "code", "import codecs\nfor s in In:  # the history\n    print(codecs.encode(s, 'rot13'))")]}),
        encoding="utf-8")
    result = run_build(root, tmp_path / "student", tmp_path / "cache", "--no-solutions")
    assert result.returncode == 1 and "code cell 2 reads IPython's history of the code run" in result.stderr, result.stderr
    assert run_build(root, tmp_path / "teacher", tmp_path / "cache", "--solutions").returncode == 0
