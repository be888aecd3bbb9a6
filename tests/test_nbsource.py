"""A notebook page's source (sitegen/project/nbsource.py): where each cell lies in the file, its cells' names,
its front matter."""
from __future__ import annotations

import json

import nbformat

from sitegen.project.nbsource import cell_name, cells_of, read

def test_source_lines_are_found_however_the_notebook_was_written():
    from sitegen.project.nbsource import _source_lines
    one_line = json.dumps({"cells": [{"cell_type": "markdown", "source": "a\nb"},
                                     {"cell_type": "code", "source": ["x = 1\n", "y"], "outputs": []}],
                           "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    assert _source_lines(one_line) == [[1], [1, 1]]
    spread = json.dumps(json.loads(one_line), indent=1)
    lines = spread.splitlines()
    assert _source_lines(spread)[1] == [n for n, t in enumerate(lines, 1) if t.strip() in ('"x = 1\\n",', '"y"')]


def test_cells_are_named_by_their_jupyter_ids_and_keep_their_names_as_cells_come_and_go():
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell("a = 1", id="Load-Data"), nbformat.v4.new_code_cell("b = 2", id="7f3e")]
    first = [c.name for c in cells_of(read(nbformat.writes(book).encode(), "content/x.ipynb"))]
    book.cells.insert(0, nbformat.v4.new_code_cell("z = 0", id="new"))
    second = [c.name for c in cells_of(read(nbformat.writes(book).encode(), "content/x.ipynb"))]
    assert first == ["cload-data", "c7f3e"] and second == ["new", "cload-data", "c7f3e"]
    assert cell_name({}, {"name": "setup"}, "cell-1", set()) == "setup"
    assert cell_name({"id": "same"}, {}, "cell-2", {"same"}) == "cell-2"          # taken: its number


def test_front_matter_is_a_raw_cell_at_the_top_and_its_lines_are_the_file_s():
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_raw_cell("---\ntitle: 回归\ndata: [a.csv]\nallow_errors: true\ntimeout: 30\n---"),
                  nbformat.v4.new_code_cell("1")]
    text = nbformat.writes(book)
    source = read(text.encode(), "content/x.ipynb")
    assert (source.meta["title"], source.data, source.allow_errors, source.timeout) == ("回归", ("a.csv",), True, 30)
    lines = text.splitlines()
    assert lines[source.meta_lines["data"] - 1].strip().startswith('"data: [a.csv]')
    assert all(cell.may_fail for cell in cells_of(source))


def test_deepnote_s_heading_and_bullet_blocks_are_read_as_deepnote_shows_them():
    """Deepnote keeps a heading as a text block without its '#' (the seed notebook's first cell): it is the
    page's title, shown once, not a paragraph under the same title."""
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_markdown_cell("编码器实验", metadata={"deepnote": {"type": "text-cell-h1"}}),
                  nbformat.v4.new_markdown_cell("要点", metadata={"deepnote": {"type": "text-cell-h3"}}),
                  nbformat.v4.new_markdown_cell("第一条", metadata={"deepnote": {"type": "text-cell-bullet"}}),
                  nbformat.v4.new_markdown_cell("# 已有", metadata={"deepnote": {"type": "text-cell-h1"}}),
                  nbformat.v4.new_code_cell("1")]
    source = read(nbformat.writes(book).encode(), "content/x.ipynb")
    assert source.meta["title"] == "编码器实验"
    assert [c.text for c in source.cells if c.kind == "markdown"] == ["", "### 要点", "- 第一条", "# 已有"]
