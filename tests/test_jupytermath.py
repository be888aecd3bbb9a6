"""Jupyter's Markdown math rewritten as this site's prose writes it (sitegen/pages/jupytermath.py): each form
Jupyter renders becomes `$…$` or a `$$…$$` line, each line still knowing the line of the cell it came from."""
from __future__ import annotations

import pytest

from sitegen.pages.jupytermath import site_math


@pytest.mark.parametrize("cell, expected", [
    ("紧贴中文的$\\alpha$公式", [("紧贴中文的$\\alpha$公式", 0)]),
    ("和 $ x + y $ 空格", [("和 $x + y$ 空格", 0)]),
    ("段落\n$$\nx^2\n+ 1\n$$\n接着", [("段落", 0), ("$$x^2 + 1$$", 1), ("接着", 5)]),
    ("前 \\(a+b\\) 后 \\[ c \\] 尾", [("前 $a+b$ 后", 0), ("$$c$$", 0), (" 尾", 0)]),
    ("\\begin{align}\na &= b\\\\\nc &= d\n\\end{align}", [("$$\\begin{align} a &= b\\\\ c &= d \\end{align}$$", 0)]),
    ("\\begin{equation*}x\\end{equation*} 后", [("$$\\begin{equation*}x\\end{equation*}$$", 0), (" 后", 0)]),
    ("code `$x$` and \\$5, costs $5", [("code `$x$` and \\$5, costs $5", 0)]),
    ("### Display\n\n$\\begin{align}\na &= b\n\\end{align}$\n后", [("### Display", 0), ("", 1),
                                                                 ("$$\\begin{align} a &= b \\end{align}$$", 2), ("后", 5)]),
    ("```\n$ x $\n```\n$ y $", [("```", 0), ("$ x $", 1), ("```", 2), ("$y$", 3)]),
    ("$a$ and $b$\n\nnext $c$", [("$a$ and $b$", 0), ("", 1), ("next $c$", 2)]),
    ("$$x$$\n\n$$\ny\n$$\n", [("$$x$$", 0), ("", 1), ("$$y$$", 2)]),       # (the last empty line: none)
])
def test_each_formula_jupyter_renders_is_rewritten_and_each_line_keeps_its_origin(cell, expected):
    assert site_math(cell.split("\n")) == expected


def test_text_without_math_is_left_exactly_as_it_was():
    lines = ["# 标题", "", "一段 *强调* 与 [链接](x.md)。", "    缩进的代码", "- 列表"]
    assert site_math(lines) == [(line, k) for k, line in enumerate(lines)]


def test_a_labelled_equation_is_numbered_and_eqref_refers_to_it_as_mathjax_s_ams_numbering_does():
    """The red team saw `\\eqref{eq:emc}` raw on a notebook's page and its equation unnumbered."""
    lines = ["\\begin{equation}", "E = mc^2 \\label{eq:emc}", "\\end{equation}", "",
             "By \\eqref{eq:emc} and \\ref{eq:emc}, not `\\eqref{x}`."]
    assert site_math(lines) == [("$$\\begin{equation} E = mc^2  \\end{equation}$$ {#eq:emc}", 0), ("", 3),
                                ("By [](#eq:emc) and [](#eq:emc), not `\\eqref{x}`.", 4)]


def test_a_display_formula_in_a_list_item_keeps_its_indent_and_so_its_item():
    assert site_math(["- item", "", "  $$", "  x^2", "  $$", "", "  more"]) == [
        ("- item", 0), ("", 1), ("  $$x^2$$", 2), ("", 5), ("  more", 6)]


def test_a_display_formula_in_a_table_s_cell_or_a_footnote_stays_where_it_stands():
    """The red team's notebook table stopped at the first cell holding $$t^2$$: made a line of its own, it
    ended the table. A formula of one line among other text stays there (prose.py shows it as a display)."""
    assert site_math(["| a | b |", "|---|---|", "| $$t^2$$ | $u$ |", "| x | y |"]) == [
        ("| a | b |", 0), ("|---|---|", 1), ("| $$t^2$$ | $u$ |", 2), ("| x | y |", 3)]
    assert site_math(["[^1]: with $$f^2$$ display."]) == [("[^1]: with $$f^2$$ display.", 0)]
    assert site_math(["text", "$$x$$", "more"]) == [("text", 0), ("$$x$$", 1), ("more", 2)]


def test_a_quote_s_formula_stays_in_the_quote_and_a_formula_that_is_a_reference_is_one():
    """The red team saw a notebook's `> $$` formula leave its quote with the quote's > inside it, and
    `$\\eqref{x}$` typeset as the site's link text. \\ref inside a formula is LaTeX's, left as it is."""
    assert site_math(["> 引文", ">", "> $$", "> b^2", "> $$", "> 后文"]) == [
        ("> 引文", 0), (">", 1), ("> $$b^2$$", 2), ("> 后文", 5)]
    assert site_math(["By \\eqref{a} and $\\eqref{b}$ and $x + \\ref{c}$."]) == [
        ("By [](#a) and [](#b) and $x + \\ref{c}$.", 0)]
