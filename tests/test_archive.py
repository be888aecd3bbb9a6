"""A notebook page's download reruns on a student's machine (sitegen/render/archive.py): the archive holds
the notebook and every course file its run read, at the paths it read them from, and its figures' font
set-up; unpacked into an empty folder and run by a real Jupyter kernel, it prints what the page shows."""
from __future__ import annotations

import io
import json
import zipfile

import pytest

from support import empty_course, run_build

nbformat = pytest.importorskip("nbformat")
pytestmark = pytest.mark.slow          # a real kernel

NOTEBOOK = [
    nbformat.v4.new_markdown_cell("# 房价\n\n读取旁边的数据。"),
    nbformat.v4.new_code_cell("import pandas_free_helper as helper\nrows = open('houses.csv').read().split()\n"
                              "scale = float(open('../shared/scale.txt').read())\n"
                              "print(len(rows) - 1, helper.mean([float(r.split(',')[1]) for r in rows[1:]]) * scale)"),
    nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(2, 1))\n"
                              "ax.set_title('面积与价格')\nax.plot([1, 2], [3, 4])\nplt.show()\nprint('画好了')"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = empty_course(tmp_path_factory.mktemp("archive") / "course")
    (root / "site.yaml").write_text("site:\n  title: 试验课程\n  base_url: https://example.invalid\n  figure_fonts:\n"
                                    "    - zhplot:fonts/NotoSansSC-Regular.ttf\n", encoding="utf-8")
    (root / "content/week1").mkdir()
    (root / "content/week1/houses.csv").write_text("area,price\n50,300\n80,420\n", encoding="utf-8")
    (root / "content/week1/pandas_free_helper.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n",
                                                                encoding="utf-8")
    (root / "content/week1/unread.txt").write_text("not read by the notebook\n", encoding="utf-8")
    (root / "content/shared").mkdir()
    (root / "content/shared/scale.txt").write_text("2\n", encoding="utf-8")
    (root / "content/.env").write_text("TOKEN=secret\n", encoding="utf-8")
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    book.cells = NOTEBOOK
    nbformat.write(book, root / "content/week1/houses.ipynb")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    return root


def test_the_archive_holds_the_notebook_and_what_its_run_read_at_the_paths_it_read_them(built):
    archive = zipfile.ZipFile(built / "dist/week1/houses/houses.zip")
    assert archive.namelist() == ["shared/scale.txt", "week1/houses.csv", "week1/houses.ipynb",
                                  "week1/pandas_free_helper.py"]
    assert archive.read("week1/houses.ipynb") == (built / "dist/week1/houses/houses.ipynb").read_bytes()
    page = (built / "dist/week1/houses.html").read_text(encoding="utf-8")
    assert 'href="houses/houses.zip" download' in page


def test_the_unpacked_archive_reruns_in_an_empty_folder_and_prints_what_the_page_shows(built, tmp_path):
    from nbclient import NotebookClient
    zipfile.ZipFile(io.BytesIO((built / "dist/week1/houses/houses.zip").read_bytes())).extractall(tmp_path)
    book = nbformat.read(tmp_path / "week1/houses.ipynb", as_version=4)
    saved = [[o.get("text") for o in c.outputs if o.output_type == "stream"] for c in book.cells if c.cell_type == "code"]
    assert book.cells[1].metadata.get("name") == "figure-fonts" and "zhplot" in book.cells[1].source
    NotebookClient(book, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path / "week1")}}).execute()
    rerun = [[o.get("text") for o in c.outputs if o.output_type == "stream"] for c in book.cells if c.cell_type == "code"]
    assert rerun == saved and saved[1] == ["2 720.0\n"] and saved[2] == ["画好了\n"]
    warnings = [o for c in book.cells for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert not warnings, json.dumps(warnings, ensure_ascii=False)          # (no "missing glyph" for 面积)
