"""The seed notebook, as handed to us, saved in content/ as a notebook page: the page shows every number
of the seed's saved outputs, and its download (the notebook with this build's outputs) reruns to the
same results.json."""
from __future__ import annotations

import json
import shutil

import pytest
from helpers import NUMBER, Elements, assert_close_tree, shown_within

from support import GOLDEN, empty_course, run_build


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seed-page")
    root = empty_course(tmp / "site", home="从[实验](course/lab09.ipynb)开始。")
    (root / "content/course").mkdir()
    shutil.copy(GOLDEN / "seed-lab09.ipynb", root / "content/course/lab09.ipynb")
    result = run_build(root, tmp / "dist", tmp / "cache")
    assert result.returncode == 0, result.stderr
    return root, tmp / "dist", result.stderr


def _text(page: Elements) -> str:
    return "\n".join(text for tag, _, text in page.elements if tag in ("pre", "p", "td", "th", "li"))


def test_every_number_of_the_saved_outputs_is_on_the_page_and_no_pasted_one(built, seed_saved_outputs):
    _, dist, said = built
    page = Elements((dist / "course/lab09.html").read_text(encoding="utf-8"))
    text = _text(page)
    numbers = [n for block in seed_saved_outputs for n in NUMBER.findall(block)]
    assert len(numbers) > 300
    shown = [float(n) for n in NUMBER.findall(text)]
    assert [n for n in numbers if not shown_within(n, text, shown)] == []
    assert "保存输出 · 2026-09-18" not in text and "only pastes the output" in said     # left out, and said
    assert len(page.find("img")) >= 3                          # its three figures, where its cells drew them


@pytest.mark.slow
def test_its_download_reruns_to_the_same_results(built, tmp_path):
    import nbformat
    from nbclient import NotebookClient
    _, dist, _ = built
    book = nbformat.read(dist / "course/lab09/lab09.ipynb", as_version=4)
    nbformat.validate(book)
    NotebookClient(book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    rerun = json.loads((tmp_path / "outputs/LAB-B/results.json").read_text(encoding="utf-8"))
    site = json.loads((dist / "course/lab09/results.json").read_text(encoding="utf-8"))
    assert assert_close_tree(rerun, {k: v for k, v in site.items() if k != "provenance"}) > 400
