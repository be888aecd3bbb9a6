"""The notebook download: valid, the lab's own code, and it reruns to the site's numbers."""
from __future__ import annotations

import json

import nbformat
import pytest
from helpers import assert_close_tree

from support import REPO


@pytest.fixture(scope="module")
def notebook(site):
    return nbformat.read(site / "course/materials/Lecture02-LAB09.ipynb", as_version=4)


def test_valid_against_the_schema(notebook):
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    assert notebook.cells[0].source == "# LAB 09 · 视觉 Attention 完整层"


def test_code_cells_are_the_lab_cells_with_outputs(notebook):
    from sitegen.project.cells import read_cells
    cells = read_cells(REPO / "compute/lab09_vision_attention.py", REPO)
    fonts, *code = [c for c in notebook.cells if c.cell_type == "code"]
    assert fonts.metadata.name == "figure-fonts" and "pip install zhplot" in fonts.source and not fonts.outputs
    assert [c.source for c in code] == [c.source for c in cells]
    assert [c.execution_count for c in code] == list(range(1, len(cells) + 1))
    images = [o for c in code for o in c.outputs if o.output_type == "display_data"]
    assert len(images) == 3 and all("image/png" in o.data for o in images)
    assert all(any(o.output_type == "stream" for o in c.outputs) for c in code)


def test_prose_links_point_at_the_published_site(notebook):
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert "https://codingai-lec02.pages.dev/course/reference#lecture05" in text
    assert "https://codingai-lec02.pages.dev/course/materials/Lecture02-LAB09.ipynb" in text
    assert "::: " not in text and "{{" not in text and "figure:" not in text and "{#" not in text


@pytest.mark.slow
def test_runs_standalone_and_reproduces_the_site(notebook, site_results, tmp_path):
    """Executed top to bottom by a real Jupyter kernel with only NumPy and Matplotlib."""
    from nbclient import NotebookClient
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    rerun = json.loads((tmp_path / "outputs/LAB-B/results.json").read_text(encoding="utf-8"))
    assert assert_close_tree(rerun, {k: v for k, v in site_results.items() if k != "provenance"}) > 400
    assert sorted(p.name for p in (tmp_path / "outputs/LAB-B").iterdir()) == [
        "01-patches.png", "02-readback.png", "03-change-one-patch.png", "results.json", "tensors.npz",
        "token-changes.csv"]
    assert (tmp_path / "outputs/phone/02-readback.narrow.png").is_file()
