"""The notebook download: valid nbformat 4, written byte for byte as Jupyter writes it."""
import nbformat
import pytest

from sitegen.render.notebook import notebook_json
from support import run_build, tiny_site


def as_jupyter_writes(data: bytes) -> bytes:
    """The same notebook read and written again by nbformat (validated on the way)."""
    notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    nbformat.validate(notebook)
    return (nbformat.writes(notebook) + "\n").encode("utf-8")


def test_every_kind_of_output_is_written_as_nbformat_writes_it():
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"title": "第一课", "kernelspec": {
        "display_name": "Python 3", "language": "python", "name": "python3"}}, "cells": [
        {"id": "markdown-00", "cell_type": "markdown", "metadata": {}, "source": "# 标题\n\n两行\n文字"},
        {"id": "code-01", "cell_type": "code", "execution_count": 1, "metadata": {"name": "a", "tags": ["x"]},
         "source": "x = 1\nx", "outputs": [
             {"output_type": "stream", "name": "stdout", "text": "1\n2\n"},
             {"output_type": "execute_result", "execution_count": 1, "metadata": {},
              "data": {"text/plain": "array([1,\n       2])"}},
             {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo=",
                                                                      "text/plain": "<Figure>"}},
             {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": ["a", "ValueError: bad"]}]},
        {"id": "code-02", "cell_type": "code", "execution_count": None, "metadata": {}, "source": "",
         "outputs": []}]}
    written = notebook_json(notebook)
    assert written == as_jupyter_writes(written)
    assert b'"text": [\n      "1\\n",\n      "2\\n"\n     ]' in written       # split into lines, as Jupyter does


@pytest.mark.slow
def test_the_built_notebook_is_valid_and_as_jupyter_writes_it(tmp_path):
    root = tiny_site(tmp_path / "site")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    data = (tmp_path / "dist/materials/tiny.ipynb").read_bytes()
    assert data == as_jupyter_writes(data)
    assert [cell["cell_type"] for cell in nbformat.reads(data.decode(), as_version=4).cells].count("code") >= 1
