"""A notebook file from elsewhere, read as input (sitegen/project/nbfile.py): each part of another shape
than nbformat 4's is named with its cell, all at once."""
from __future__ import annotations

import json

import pytest

from sitegen.core.errors import BuildError
from sitegen.project.nbfile import parse_notebook, read_notebook


GOOD_CELL = {"cell_type": "code", "source": "x = 1\n", "metadata": {}, "outputs": [], "execution_count": None}


@pytest.mark.parametrize("book, expected", [
    ({"cells": [GOOD_CELL], "metadata": [], "nbformat": 4}, "nb.ipynb: metadata is list ('[]'), not dict"),
    ({"cells": [GOOD_CELL], "metadata": {"kernelspec": "python3"}, "nbformat": 4},
     "nb.ipynb: metadata.kernelspec is str ('python3'), not dict"),
    ({"cells": [GOOD_CELL], "metadata": {}, "nbformat": "4"}, "nb.ipynb: nbformat is str ('4'), not int"),
    ({"cells": [GOOD_CELL, 42], "metadata": {}, "nbformat": 4},
     "nb.ipynb: cell 2: a cell is an object with cell_type and source, not '42'"),
    ({"cells": [{**GOOD_CELL, "outputs": "oops"}], "metadata": {}, "nbformat": 4},
     "nb.ipynb: cell 1: outputs is 'oops', not a list of outputs"),
    ({"cells": [{**GOOD_CELL, "metadata": {"tags": "raises-exception"}}], "metadata": {}, "nbformat": 4},
     "nb.ipynb: cell 1: metadata.tags is 'raises-exception', not a list of tags"),
    ({"cells": [{**GOOD_CELL, "source": {"x": 1}}], "metadata": {}, "nbformat": 4},
     "nb.ipynb: cell 1: source is dict, not text or a list of lines"),
    ({"cells": [{**GOOD_CELL, "cell_type": "heading"}], "metadata": {}, "nbformat": 4},
     "nb.ipynb: cell 1: cell_type 'heading' is none of markdown, code, raw"),
    ({"worksheets": [{"cells": []}], "metadata": {}, "nbformat": 3}, "nb.ipynb: notebook format 3 is too old"),
    ([GOOD_CELL], "nb.ipynb: not a notebook: a JSON object is expected, not list"),
])
def test_a_malformed_notebook_is_named_with_its_cell(tmp_path, book, expected):
    (tmp_path / "nb.ipynb").write_text(json.dumps(book), encoding="utf-8")
    with pytest.raises(BuildError) as failed:
        read_notebook(tmp_path / "nb.ipynb")
    assert failed.value.report().replace(str(tmp_path) + "/", "").startswith("error: " + expected)


def test_a_notebook_nested_too_deeply_is_named(tmp_path):
    (tmp_path / "nb.ipynb").write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(BuildError) as failed:
        read_notebook(tmp_path / "nb.ipynb")
    assert "not a notebook: its JSON is nested far too deeply" in failed.value.report()


def test_a_malformed_notebook_given_to_import_is_named_never_a_traceback(tmp_path):
    from support import REPO, tiny_site
    import subprocess
    import sys
    root = tiny_site(tmp_path / "site")
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [42], "metadata": {}, "nbformat": 4}), encoding="utf-8")
    done = subprocess.run([sys.executable, str(REPO / "build.py"), "import", str(tmp_path / "nb.ipynb"), "--root",
                           str(root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {tmp_path}/nb.ipynb: cell 1: a cell is an object")



@pytest.mark.parametrize("kernelspec, python", [
    ({"name": "python3", "display_name": "Python 3", "language": "python"}, True),
    ({"name": "python3", "display_name": "Python 3", "language": "python3"}, True),     # QuantEcon's lectures
    ({"name": "xpython", "display_name": "Python 3.11 (XPython)", "language": "python"}, True),
    ({"name": "conda-env-ml-py", "display_name": "Python [conda env:ml]", "language": "Python 3"}, True),
    ({"name": "python3", "display_name": "Python 3"}, True),
    ({"name": "ir", "display_name": "R", "language": "R"}, False),
    ({"name": "julia-1.10", "display_name": "Julia 1.10", "language": "julia"}, False),
])
def test_any_kernelspec_jupyter_runs_as_python_is_read_and_another_language_is_named(tmp_path, kernelspec, python):
    data = json.dumps({"cells": [], "metadata": {"kernelspec": kernelspec}, "nbformat": 4, "nbformat_minor": 5})
    if python:
        parse_notebook(data.encode(), "x.ipynb")
        return
    with pytest.raises(BuildError) as found:
        parse_notebook(data.encode(), "x.ipynb")
    assert str(found.value.problems[0]).startswith(f"x.ipynb: its kernel runs {kernelspec['language']} ({kernelspec['display_name']})")
