"""What is code, as the render's own parser (markdown-it) reads it: pages/markup.py."""
from __future__ import annotations

import pytest

from sitegen.pages.markup import code_blocks, code_spans, in_code, open_fence


def test_in_code_reads_a_directive_s_fence_as_markup_only_when_asked():
    lines = "````{example}\n```{index} 名目\n:name: idx\n```\n````\n```{code-cell}\nx\n```".split("\n")
    assert in_code(lines) == [True] * 8
    assert in_code(lines, {"code-cell"}) == [False] * 5 + [True] * 3


@pytest.mark.parametrize("line, spans", [
    ("a `b` c", [(2, 5)]),
    ("`` x `y` z `` and `w`", [(0, 13), (18, 21)]),          # a longer run holds shorter ones
    ("{term}`x` and `{ref}` then {ref}`y`", [(14, 21)]),    # a role's text is no span; an example of one is
    ("one ` alone, ``two", []),                             # runs never closed are backticks as written
    ("```{note}\n{{ x }}\n```", []),                        # (a value of several lines: no span across them)
])
def test_code_spans_pair_backtick_runs_as_commonmark_does(line, spans):
    assert code_spans(line) == spans


def test_code_is_what_commonmark_reads_as_code_in_a_list_item_a_quote_and_an_indented_block():
    lines = ["文字", "", "    缩进的代码", "", "- 一项", "", "  ```python", "  x = 1", "  ```", "", "> ```", "> 引文里的代码", "> ```",
             "", "<div>", "```", "not code: raw HTML's", "```", "</div>"]
    assert code_blocks(lines) == [(2, 3), (6, 9), (10, 13)]
    assert in_code(lines)[15:18] == [False, False, False]


@pytest.mark.parametrize("lines, left", [
    (["文字", "```python", "x = 1", "", "## 不是标题", ""], (1, "```")),
    (["- 一项", "", "  ```python", "  x = 1"], (2, "  ```")),       # (closed where it stands: in the item)
    (["- 一项", "", "  ```python", "  x = 1", "", "后文"], None),    # (the item ends, and its fence with it)
    (["````md", "```", "x", "````"], None),
    (["- ```md", "  x"], (0, "  ```")),
])
def test_a_fence_left_open_to_the_end_is_found_with_the_line_that_closes_it_where_it_stands(lines, left):
    assert open_fence(lines) == left
