"""Other tools' block markup read as this site's (dialects.translate), without a build: each syntax
of a callout becomes `::: KIND` ... `::: end` with its lines' numbers kept, and what is not supported
is named with its line and never left on the page as raw markup."""
from __future__ import annotations

import shlex

import pytest

from sitegen.pages.dialects import translate


def read(text: str, start: int = 0) -> tuple[list[str], list[int], list[tuple[int, str]]]:
    notes: list = []
    lines, numbers, codes = translate(text.split("\n"), start, notes)
    assert len(codes) == len(lines) == len(numbers)
    return lines, numbers, notes


@pytest.mark.parametrize("text, opening", [
    ("```{note} 标题\n正文\n```", '::: note title=标题'),                           # MyST, backticks
    ("~~~{warning}\n正文\n~~~", "::: warning"),                                     # MyST, tildes
    (":::{tip} 标题\n正文\n:::", "::: tip title=标题"),                              # MyST, colons
    ("```{admonition} 看这里\n:class: warning\n正文\n```", "::: warning title=看这里"),  # its :class: says the kind
    ("```{dropdown} 展开\n正文\n```", "::: note title=展开 fold=closed"),
    ("```{hint}\n正文\n```", "::: tip"),                                            # docutils' kin of a tip
    ("::: {.callout-important title=\"要点 一\"}\n正文\n:::", "::: important title='要点 一'"),   # Quarto
    ("::: {.callout-caution collapse=\"false\"}\n## 标题\n正文\n:::", "::: caution title=标题 fold=open"),
    ("> [!WARNING]\n> 正文\n", "::: warning"),                                      # GitHub
])
def test_each_syntax_of_a_callout_is_this_site_s_line_for_line(text, opening):
    lines, numbers, notes = read(text, start=10)
    assert shlex.split(lines[0]) == shlex.split(opening) and "::: end" in lines and "正文" in lines
    assert not notes
    assert numbers[:len(text.split("\n"))] == list(range(11, 11 + len(text.split("\n"))))


def test_a_github_alert_that_a_line_follows_at_once_ends_before_it_with_that_line_s_number():
    lines, numbers, notes = read("前文\n> [!NOTE] 标题\n> 第一行\n> 第二行\n后文", start=4)
    assert lines == ["前文", "::: note title='标题'", "第一行", "第二行", "::: end", "后文"]
    assert numbers == [5, 6, 7, 8, 9, 9]


def test_callouts_nest_by_their_fences():
    lines, _, notes = read("::::{note} 外\n:::{tip} 内\n正文\n:::\n::::")
    assert lines == ["::: note title='外'", "::: tip title='内'", "正文", "::: end", "::: end"] and not notes


def test_markup_inside_a_code_block_is_left_as_it_is():
    text = "```markdown\n```{note}\n(label)=\n> [!NOTE]\n{ref}`x`\n```"
    lines, _, notes = read(text)
    assert lines[1:5] == text.split("\n")[1:5] and not notes


@pytest.mark.parametrize("text, shown, said", [
    ("```{figure} a.png\n说明\n```", ["", "说明", ""], "2: the MyST directive {figure} is not supported here: its content shows as prose"),
    ("```{math}\n:label: e1\nx^2\n```", ["```", "", "x^2", "```"], "2: the MyST directive {math} is not supported here: it shows as a block of code"),
    ("```{code-cell} ipython3\n:tags: [hide-input]\nx = 1\n```", ["```python", "", "x = 1", "```"],
     "2: the MyST directive {code-cell} is not supported here"),
    (":::{glossary}\n术语\n:::", ["", "术语", ""], "2: the MyST directive {glossary} is not supported here: its content shows as prose"),
    ("::: {.column-margin}\n边注\n:::", ["", "边注", ""], "2: the div ::: {.column-margin} is not supported here"),
    ("> [!TODO]\n> 待办", ["> [!TODO]", "> 待办"], "2: [!TODO] is not a GitHub alert this site knows"),
    ("(sec-one)=\n## 一节", ["", "## 一节"], "2: the MyST target (sec-one)= is not supported here"),
    ("见 {ref}`sec-one`。", ["见 `sec-one`。"], "2: the MyST role {ref} is not supported here"),
    ("见 {numref}`图 %s <fig-a>`。", ["见 图 %s。"], "2: the MyST role {numref} is not supported here"),
    (":::\n", ["", ""], "2: ':::' closes nothing"),
])
def test_what_is_not_supported_is_named_with_its_line_and_not_shown_raw(text, shown, said):
    lines, _, notes = read(text, start=1)
    assert lines == shown
    assert [f"{line}: {message}" for line, message in notes][0].startswith(said)
    assert not any("{" + name + "}" in line for line in lines for name in ("figure", "ref", "numref", "glossary"))


def test_an_option_of_a_callout_this_site_has_no_use_for_is_named():
    lines, _, notes = read("```{note}\n:name: n1\n:width: 50%\n正文\n```")
    assert lines[:3] == ["::: note", "", ""]
    assert notes == [(1, "{note}: option :width: not supported here (left out)")]


def test_the_math_role_is_this_site_s_inline_math():
    lines, _, notes = read("面积 {math}`\\pi r^2`。")
    assert lines == ["面积 $\\pi r^2$。"] and not notes


def test_a_directive_that_holds_markdown_shows_its_content_and_the_callouts_in_it():
    text = "````{exercise}\n:label: ex1\n题目。\n```{seealso}\n另见。\n```\n````"
    lines, _, notes = read(text)
    assert lines == ["", "", "题目。", "::: note", "另见。", "::: end", ""]
    assert [message.split(":")[0] for _, message in notes] == ["the MyST directive {exercise} is not supported here"]


def test_which_lines_are_code_is_read_as_commonmark_reads_fences():
    notes: list = []
    text = "````markdown\n```python\n:::{note}\n```\n::: note\n````\n::: note\n::: end"
    lines, _, codes = translate(text.split("\n"), 0, notes)
    assert codes == [True] * 6 + [False, False] and lines == text.split("\n") and not notes


@pytest.mark.parametrize("text, close", [("```{note}\n没有闭合", "```"), (":::{tip}\n没有闭合", ":::"),
                                         ("::: {.callout-warning}\n没有闭合", ":::")])
def test_a_fence_never_closed_runs_to_the_page_s_end_and_is_said_in_the_author_s_syntax(text, close):
    lines, numbers, notes = read(text, start=3)
    assert lines[-1] == "::: end" and numbers[-1] == 6
    assert notes == [(4, f"the fence opened here is never closed: it runs to the page's end (close it with a line {close})")]


def test_a_role_in_a_callout_s_title_is_read_as_in_prose():
    lines, _, notes = read("```{note} 见 {ref}`sec-a` 与 {math}`x`\n正文\n```")
    assert shlex.split(lines[0]) == [":::", "note", "title=见 `sec-a` 与 $x$"]
    assert [message.split(":")[0] for _, message in notes] == ["the MyST role {ref} is not supported here"]


def test_a_cell_s_quarto_options_are_its_leading_comment_lines_only():
    from sitegen.pages.dialects import cell_options
    assert cell_options("#| echo: false\n#| label: 'fig-a'\nx = 1\n#| not: an option") == (
        [("echo", "false"), ("label", "fig-a")], "x = 1\n#| not: an option")


@pytest.mark.parametrize("tags, text, shown", [
    (("hide-input", "hide-output"), "x", {"code": "folded", "output": "collapsed"}),
    (("remove-input", "remove-output"), "x", None),                  # nothing to show: no block
    ((), "#| echo: false\n#| output: false\nx", None),
    (("thebe-init", "raises-exception"), "x", {}),                  # tags of other meaning: shown
    ((), "#| echo: true\n#| code-fold: show\nx", {}),
])
def test_what_a_cell_shows_follows_its_tags_and_options(tags, text, shown):
    from sitegen.pages.dialects import cell_visibility
    notes: list = []
    assert cell_visibility(tags, text, 7, notes) == shown and not notes


def test_a_cell_option_this_site_does_not_support_is_named():
    from sitegen.pages.dialects import cell_visibility
    notes: list = []
    assert cell_visibility((), "#| eval: false\nx", 7, notes) == {}
    assert notes == [(7, "the cell option #| eval: false is not supported here: left out (supported: echo, output, "
                         "include, code-fold)")]
