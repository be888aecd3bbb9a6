"""What the lab host imports before forking a lab (warm.py), and what waits for a lab's own import."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import Elements
from support import empty_course, run_build

from sitegen.labs.warm import PLOTS, modules_for, modules_edited

nbformat = pytest.importorskip("nbformat")


def test_the_host_imports_the_libraries_a_lab_s_cells_import_and_no_others():
    assert modules_for(["import numpy as np\nimport pandas as pd"]) == ("numpy", "pandas")
    assert modules_for(["from sympy import *"], jupyter=True) == ("sympy", "IPython.core.interactiveshell")
    assert modules_for(["import matplotlib.pyplot as plt"]) == PLOTS
    assert modules_for(["import requests, helper"]) == ()          # not WARM's: the lab's own import


def test_a_cell_with_ipython_s_own_lines_is_read_line_by_line():
    cell = "%matplotlib inline\nimport numpy\nfrom pandas import (\n    DataFrame,\n)\n!pip install x"
    assert modules_for([cell]) == ("numpy", "pandas")


def test_the_edited_notebook_and_script_say_what_the_host_imports_as_it_starts(tmp_path):
    notebook = {"cells": [{"cell_type": "code", "source": ["import pandas as pd\n"]},
                          {"cell_type": "markdown", "source": "import numpy"}], "nbformat": 4}
    (tmp_path / "a.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (tmp_path / "lab.py").write_text("import numpy\n", encoding="utf-8")
    (tmp_path / "broken.ipynb").write_text("{not json", encoding="utf-8")
    assert modules_edited(tmp_path, ["a.ipynb"]) == ("pandas", "IPython.core.interactiveshell")
    assert modules_edited(tmp_path, ["lab.py", "broken.ipynb", "gone.py", "site.yaml"]) == ("numpy",)


def test_what_waits_for_an_import_runs_once_it_comes_and_at_once_if_it_came(tmp_path):
    """In a fresh interpreter: the callback runs after the module's own code, with the module."""
    code = """
import sys
from sitegen.labs.warm import when_imported
seen = []
when_imported("json", lambda m: seen.append(("json", hasattr(m, "dumps"))))
assert seen == [("json", True)]
when_imported("colorsys", lambda m: seen.append(("colorsys", hasattr(m, "rgb_to_hsv"))))
assert seen == [("json", True)]
import colorsys
import colorsys
assert seen == [("json", True), ("colorsys", True)], seen
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path),
                          env={"PYTHONPATH": str(__import__("pathlib").Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_a_notebook_that_imports_matplotlib_where_its_cells_do_not_say_still_shows_its_figures_inline(tmp_path):
    """The host warms nothing for it (its cells import only a module of the course); the harness's
    inline figures wait for Matplotlib's import, in the lab: a figure a cell's value is shows as an
    image (IPython's formatter for it), once."""
    root = empty_course(tmp_path / "site")      # (no lab of its own imports Matplotlib)
    (root / "content/plots.py").write_text("import matplotlib\nimport matplotlib.pyplot as plt\n\n\ndef draw(ys):\n"
                                           "    figure = plt.figure()\n    plt.plot(ys)\n    return figure\n", encoding="utf-8")
    cells = [nbformat.v4.new_markdown_cell("# Plots"), nbformat.v4.new_code_cell("import plots\nplots.draw([1, 3, 2])  # shown as Jupyter shows it"),
             nbformat.v4.new_code_cell("plots.draw([2, 1])\nplots.plt.show()\nprint('after the figure')")]
    assert modules_for([cell.source for cell in cells if cell.cell_type == "code"], jupyter=True) == \
        ("IPython.core.interactiveshell",)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(root / "content/plots.ipynb"))
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    page = Elements((tmp_path / "dist/plots.html").read_text(encoding="utf-8"))
    images = [attrs["src"] for _, attrs, _ in page.find("img") if attrs["src"].endswith(".png")]
    assert len(images) == 2, images          # each once: the value, and the figure plt.show() showed
    assert not any("<Figure size" in text for _, _, text in page.elements), "a figure shown as text"
    # plt.show() showed the figure where it was called, before what the cell printed after it
    order = [("figure" if tag == "img" else "text") for tag, attrs, text in page.elements
             if tag == "img" and attrs.get("src", "").endswith(".png") or tag == "pre" and text.strip() == "after the figure"]
    assert order == ["figure", "figure", "text"], order
