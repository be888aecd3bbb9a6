"""The seed notebook, as handed to us, imported into an empty project: its page shows every number
of the seed's saved outputs, and its notebook download reruns to the same results.json."""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys

import pytest
from helpers import NUMBER, assert_close_tree, shown_within

from support import GOLDEN, REPO, empty_course, run_build



@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seed-import")
    root = empty_course(tmp / "site")
    shutil.copy(GOLDEN / "seed-lab09.ipynb", tmp / "Lecture02-LAB09.ipynb")
    done = subprocess.run([sys.executable, str(REPO / "build.py"), "import", str(tmp / "Lecture02-LAB09.ipynb"),
                           "--id", "lab09", "--page", "course/lab09", "--root", str(root), "--cache", str(tmp / "cache")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    built = run_build(root, tmp / "dist", tmp / "cache", "--strict")
    assert built.returncode == 0, built.stderr
    return root, tmp / "dist"


def test_every_number_of_the_saved_outputs_is_on_the_page(imported, seed_saved_outputs):
    _, dist = imported
    page = (dist / "course/lab09.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    numbers = [n for block in seed_saved_outputs for n in NUMBER.findall(block)]
    assert len(numbers) > 300
    shown = [float(n) for n in NUMBER.findall(text)]
    assert [n for n in numbers if not shown_within(n, text, shown)] == []
    assert "保存输出 · 2026-09-18" not in text                   # the pasted outputs were replaced
    assert len(re.findall(r'src="\.\./lab09/images/figure-0\d\.png"', page)) == 3


def test_the_page_keeps_the_notebook_s_prose_and_title(imported):
    root, _ = imported
    notebook = json.loads((GOLDEN / "seed-lab09.ipynb").read_text(encoding="utf-8"))
    page = (root / "content/course/lab09.md").read_text(encoding="utf-8")
    headings = [("".join(c["source"])) for c in notebook["cells"]
                if c["metadata"].get("deepnote", {}).get("type") == "text-cell-h2"]
    positions = [page.find(h) for h in headings]
    assert len(headings) == 6 and -1 not in positions and positions == sorted(positions)
    assert page.startswith('---\ntitle: "LAB 09 · 视觉 Attention 完整层"\nlab: lab09\n---\n')


@pytest.mark.slow
def test_its_notebook_download_reruns_to_the_same_results(imported, tmp_path):
    import nbformat
    from nbclient import NotebookClient
    _, dist = imported
    book = nbformat.read(dist / "lab09/materials/Lecture02-LAB09.ipynb", as_version=4)
    NotebookClient(book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    rerun = json.loads((tmp_path / "outputs/LAB-B/results.json").read_text(encoding="utf-8"))
    site = json.loads((dist / "lab09/materials/results.json").read_text(encoding="utf-8"))
    assert assert_close_tree(rerun, {k: v for k, v in site.items() if k != "provenance"}) > 400
