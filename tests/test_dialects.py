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
    ("```{margin} 旁边\n正文\n```", "::: margin title=旁边"),                        # margin notes: MyST's
    (":::{sidebar} 侧栏\n正文\n:::", "::: margin title=侧栏"),
    ("::: {.column-margin}\n正文\n:::", "::: margin"),                              # Quarto's
    ("::: aside\n正文\n:::", "::: margin"),                                         # (Pandoc's bare class)
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
    ("```{grid}\n说明\n```", ["", "说明", ""], "2: the MyST directive {grid} is not supported here: its content shows as prose"),
    ("```{mermaid}\ngraph TD\n```", ["```", "graph TD", "```"], "2: the MyST directive {mermaid} is not supported here: it shows as a block of code"),
    ("```{code-cell} ipython3\n:tags: [hide-input]\nx = 1\n```", ["", "```python", "x = 1", "```"],
     "2: the MyST directive {code-cell} is not supported here"),
    (":::{card}\n边注\n:::", ["", "边注", ""], "2: the MyST directive {card} is not supported here: its content shows as prose"),
    ("::: {.content-visible when-profile=\"web\"}\n边注\n:::", ["", "边注", ""], "2: the div ::: {.content-visible"),
    ("> [!TODO]\n> 待办", ["> [!TODO]", "> 待办"], "2: [!TODO] is not a GitHub alert this site knows"),
    ("(sec-one)=\n一段话", ["", "一段话"], "2: the MyST target (sec-one)= stands above no heading or formula"),
    ("见 {sub-ref}`knuth84`。", ["见 `knuth84`。"], "2: the MyST role {sub-ref} is not supported here"),
    ("见 {pep}`下一讲 <next>`。", ["见 下一讲。"], "2: the MyST role {pep} is not supported here"),
    (":::\n", ["", ""], "2: ':::' closes nothing"),
])
def test_what_is_not_supported_is_named_with_its_line_and_not_shown_raw(text, shown, said):
    lines, _, notes = read(text, start=1)
    assert lines == shown
    assert [f"{line}: {message}" for line, message in notes][0].startswith(said)
    assert not any("{" + name + "}" in line for line in lines for name in ("sidebar", "sub-ref", "doc", "margin", "mermaid"))


@pytest.mark.parametrize("text, shown", [
    # A figure and a table with labels: this site's numbered figure line, and a caption line after the table.
    ("```{figure} a.png\n:name: f\n:alt: 图\n\n说明 \"一\"。\n```", ["![图](a.png \"说明 '一'。\") {#f}", "", "", "", "", ""]),
    ("```{figure} a.png\n说明。\n```", ['![说明。](a.png "说明。")', "", ""]),                 # no label: not numbered
    ("```{figure} a.png\n:name: fig-data frame\n说明。\n```\n见 {numref}`fig-data frame`。",        # a space in a label
     ['![说明。](a.png "说明。") {#fig-data-frame}', "", "", "", "见 [](#fig-data-frame)。"]),
    ("```{table} 数\n:name: t\n| a |\n|---|\n```", ["", "", "| a |", "|---|", "", ": 数 {#t}"]),
    ('![说明](a.png){#fig-a fig-alt="图"}', ['![图](a.png "说明") {#fig-a}']),                   # Quarto
    # MyST's Markdown link to a label the page defines: [](label) is [](#label); a page's link stays one.
    ("(sec-a)=\n# 一\n见 [](sec-a)、[那一节](sec-a)、[另一页](other.md) 与 [无](nolabel)。",
     ["", "# 一 {#sec-a}", "见 [](#sec-a)、[那一节](#sec-a)、[另一页](other.md) 与 [无](nolabel)。"]),
    # sphinx-proof's statements: this site's ::: theorem (a proof, a definition, ...), numbered per kind
    ("```{prf:theorem} 存在性\n:label: thm-a\n有解。\n```\n见 {prf:ref}`thm-a`。",
     ["::: theorem title='存在性' label=thm-a", "", "有解。", "::: end", "见 [](#thm-a)。"]),
    # A labelled display formula in each syntax: this site's one line, `$$ ... $$ {#label}`.
    ("```{math}\n:label: demand\nq = 100 - 10 p \\\\\nq = 5\n```", ["$$q = 100 - 10 p \\\\ q = 5$$ {#demand}", "", "", "", ""]),
    ("(demand)=\n```{math}\nq = 1\n```", ["", "$$q = 1$$ {#demand}", "", ""]),               # a target above it
    ("$$\nq = 1\n$$ (demand)", ["$$q = 1$$ {#demand}", "", ""]),                                # MyST's dollarmath
    ("$$ q = 1 $$ (demand)", ["$$ q = 1 $$ {#demand}"]),
    ("$$\nq = 1\n$$ {#eq-demand}", ["$$q = 1$$ {#eq-demand}", "", ""]),                          # Quarto
    ("$$\nq = 1\n$$", ["$$q = 1$$", "", ""]),                                                    # no label: a formula
    ("$$ q = 1 $$ {#demand}", ["$$ q = 1 $$ {#demand}"]),                                          # this site's own
    # A section's label: a target above a heading is its anchor.
    ("(sec-one)=\n\n## 一节", ["", "", "## 一节 {#sec-one}"]),
    # References: MyST's roles and Quarto's @ as this site's [](#label), which shows the number or title.
    ("见 {eq}`demand` 与 {ref}`sec-one`。", ["见 [](#demand) 与 [](#sec-one)。"]),
    ("见 {ref}`那一节 <sec-one>` 与 {numref}`式 %s <demand>`。", ["见 [那一节](#sec-one) 与 [式 %s](#demand)。"]),
    ("见 @eq-demand 与 [@sec-one]，不是 a@eq-x.com。", ["见 [](#eq-demand) 与 [](#sec-one)，不是 a@eq-x.com。"]),
])
def test_labels_and_references_of_each_syntax_are_this_site_s(text, shown):
    lines, numbers, notes = read(text)
    assert (lines, notes) == (shown, [])
    assert numbers == sorted(numbers) and set(numbers) == set(range(1, len(text.split("\n")) + 1))   # each its own line


def test_an_option_of_a_callout_this_site_has_no_use_for_is_named():
    lines, _, notes = read("```{note}\n:name: n1\n:width: 50%\n正文\n```")
    assert lines[:3] == ["::: note", "", ""]
    assert notes == [(1, "{note}: option :width: not supported here (left out)")]


def test_the_math_role_is_this_site_s_inline_math():
    lines, _, notes = read("面积 {math}`\\pi r^2`。")
    assert lines == ["面积 $\\pi r^2$。"] and not notes


def test_a_directive_that_holds_markdown_shows_its_content_and_the_callouts_in_it():
    text = "````{card}\n:class: wide\n边注。\n```{seealso}\n另见。\n```\n````"
    lines, _, notes = read(text)
    assert lines == ["", "", "边注。", "::: note", "另见。", "::: end", ""]
    assert [message.split(":")[0] for _, message in notes] == ["the MyST directive {card} is not supported here"]


@pytest.mark.parametrize("text, shown", [
    # sphinx-exercise: a solution right after its exercise is its ::: solution (the exercise ends after it).
    ("```{exercise} 求积\n:label: p\n题目。\n```\n\n```{solution} p\n:class: dropdown\n答案。\n```",
     ["::: exercise title='求积' label=p", "", "题目。", "", "", "::: solution", "", "答案。", "::: end"]),
    # the gated form, which may hold code cells: exercise-start ... exercise-end, solution-start ... solution-end
    ("```{exercise-start}\n```\n题目。\n```{exercise-end}\n```\n```{solution-start} p\n```\n答案。\n"
     "```{solution-end}\n```", ["::: exercise", "", "题目。", "", "", "::: solution", "", "答案。", "::: end", ""]),
    # a solution elsewhere is one of an exercise of its own: still a solution, which students never see
    ("```{exercise}\n题目。\n```\n\n正文。\n\n```{solution} p\n答案。\n```",
     ["::: exercise", "题目。", "::: end", "", "正文。", "", "::: exercise", "::: solution", "答案。", "::: end"]),
    # a colon fence, as MyST's colon_fence writes one
    (":::{exercise}\n题目。\n:::\n:::{solution}\n答案。\n:::", ["::: exercise", "题目。", "", "::: solution", "答案。", "::: end"]),
])
def test_sphinx_exercise_s_exercises_and_solutions_are_this_site_s(text, shown):
    lines, numbers, notes = read(text)
    said = ["this {solution} is of the exercise 'p', but stands after no exercise: shown as the solution of an "
            "exercise of its own (put it right after its {exercise})"] if "正文。\n\n```{solution} p" in text else []
    assert (lines, [message for _, message in notes]) == (shown, said)
    assert numbers[:len(text.split("\n"))] == sorted(numbers)[:len(text.split("\n"))]


def test_an_index_entry_is_left_out_with_a_note():
    lines, _, notes = read("前文。\n\n```{index} single: Linear equations\n```\n后文。")
    assert lines == ["前文。", "", "", "", "后文。"]
    assert notes == [(3, "the MyST directive {index} is not supported here (this site has no index page): left out")]


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
    lines, _, notes = read("~~~{note} 见 {ref}`sec-a` 与 {math}`x`\n正文\n~~~")
    assert shlex.split(lines[0]) == [":::", "note", "title=见 `sec-a` 与 $x$"]
    assert [message.split(":")[0] for _, message in notes] == ["the MyST role {ref} is not supported here"]


def test_a_backtick_fence_whose_info_holds_a_backtick_is_no_directive_as_commonmark_reads_it():
    """MyST reads it as markdown-it does: a paragraph, and the bare fence after it opens code; said, with the fix."""
    lines, _, notes = read("```{note} 见 {math}`x`\n正文\n```")
    assert lines[0] == "```{note} 见 {math}`x`" and lines[1] == "正文" and [(n, m.split(":")[0]) for n, m in notes] == [
        (1, "a backtick fence's info string may hold no backtick (CommonMark, and so MyST)"),
        (3, "the code fence opened here is never closed")]


def built_chapter(tmp_path, text: str):
    """A tiny site with `text` as content/chapter.md, built: the build's stderr and the page's elements."""
    from support import run_build, tiny_site
    from helpers import Elements
    root = tiny_site(tmp_path / "site")
    (root / "content/chapter.md").write_text(text, encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    return result.stderr, Elements((root / "dist/chapter.html").read_text(encoding="utf-8"))


def test_a_chapter_taken_from_a_book_builds_with_its_substitutions_and_its_links_to_chapters_left_behind(tmp_path):
    """MyST's front matter substitutions fill {{ name }}; a link to a chapter (or a label) the site lacks is
    its text and a warning, not a broken link; "figure:" in a sentence asks for no lab; a glued value quoted
    on a page that runs no code is its name and a warning."""
    stderr, page = built_chapter(tmp_path,
        "---\ntitle: 一章\nsubstitutions:\n  course: 视觉 Transformer\n---\n本章属于 {{ course }}。\n\n"
        "Here is my figure: 见[下一章](next.md)与[标签](some-label)。\n\n均值为 {glue:}`mean`。\n\n"
        "```{figure} data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7\n:name: fig-dot\n"
        "一个点。\n```\n\n```yaml\nkey: {{ lab_value }}  # [x](gone.md)\n```\n")
    assert "content/chapter.md:8: links to next.md, which is no page or label of this site: shown as its text" in stderr
    assert "content/chapter.md:8: links to some-label, which is no page or label" in stderr
    assert "content/chapter.md:10: {glue:}`mean` quotes a value a notebook's code glued, and this page runs no code: " \
           "shown as its name" in stderr
    assert [e[2] for e in page.find("p")][1:4] == ["本章属于 视觉 Transformer。",
                                                   "Here is my figure: 见下一章与标签。", "均值为 mean。"]
    assert "key: {{ lab_value }}  # [x](gone.md)" in "".join(e[2] for e in page.find("pre"))   # (code: as written)
    dot = [e for e in page.find("figure") if e[1].get("id") == "fig-dot"]   # (written into the page: no full size)
    assert len(dot) == 1 and "图 1 · 一个点。" in dot[0][2] and not [e for e in page.find("a") if "data:" in e[1].get("href", "")]


def test_a_code_span_shows_markup_as_written_and_sphinx_s_own_pages_are_their_text():
    lines, _, notes = read("写法 `` {ref}`文 <sec-a>` `` 得 {ref}`文 <sec-a>`；`[](genindex)` 得 [](genindex)，"
                           "{ref}`总索引 <genindex>`，`@fig-a` 得 @fig-a")
    assert lines == ["写法 `` {ref}`文 <sec-a>` `` 得 [文](#sec-a)；`[](genindex)` 得 genindex，总索引，`@fig-a` 得 [](#fig-a)"]
    assert [message.split(":")[0] for _, message in notes] == ["{ref}`总索引 <genindex>`", "[](genindex) links to Sphinx's "
                                                               "general index, which this site does not make"]


def test_a_reference_to_an_index_entry_is_its_text_and_its_name_is_no_label():
    lines, _, notes = read("```{index} 名目\n:name: idx-a\n```\n(sec-a)=\n## 节\n见 [此处](idx-a)、{ref}`彼处 <idx-a>` 与 [节](sec-a)")
    assert lines[-1] == "见 此处、彼处 与 [节](#sec-a)"
    assert sum("an entry of the index" in message for _, message in notes) == 2


def test_myst_s_substitutions_nest_span_lines_take_jinja_s_filters_and_an_unknown_one_is_said(tmp_path):
    """{{ name }} outside code is its front matter's Markdown, substituted again (a callout's fence it holds
    is read as written there), with Jinja's filters; an unknown name on a page with no lab is said and
    shown as its name; a code span, a fence inside a longer one, and a {glue:figure} with nothing glued
    (a page that runs no code) show no lab's value."""
    stderr, page = built_chapter(tmp_path,
        "---\ntitle: 一章\nsubstitutions:\n  course: 视觉 Transformer\n  whole: 《{{ course }}》\n"
        "  box: |\n    ```{note}\n    {{ whole }}\n    ```\n---\n"
        "课程 {{ whole }}，大写 {{ course | upper }}，无名 {{ nobody }}，代码 `{{ course }}`。\n\n{{ box }}\n\n"
        "| 格 | 框 |\n|---|---|\n| 一 | {{ box }} |\n\n"
        "`````md\n````{tabbed} 例\n{{ course }}\n````\n`````\n\n"
        "```{glue:figure} boot_fig\n:name: fig-boot\n\n自助法的直方图。\n```\n")
    assert "content/chapter.md:11: {{ nobody }}: the front matter's substitutions name no 'nobody' (they are: box, " \
           "course, whole): shown as its name" in stderr
    assert "content/chapter.md:25: {glue:figure} boot_fig shows a figure a notebook's code glued, and this page runs " \
           "no code: its caption shown alone" in stderr
    paragraphs = [e[2] for e in page.find("p")]
    assert "课程 《视觉 Transformer》，大写 视觉 TRANSFORMER，无名 nobody，代码 {{ course }}。" in paragraphs
    assert "自助法的直方图。" in paragraphs
    assert [e[1]["class"] for e in page.find("aside") if "《视觉 Transformer》" in e[2]] == ["callout callout-note"]
    assert "content/chapter.md:17: {{ box }} holds several lines (a block: a callout, a figure), and stands inside a " \
           "line here (a table's cell): a block cannot show there; shown as its name" in stderr
    assert [e[2] for e in page.find("td")] == ["一", "box"]
    assert "````{tabbed} 例\n{{ course }}\n````" in "".join(e[2] for e in page.find("pre"))


def test_a_list_item_that_opens_with_code_is_code_to_its_indented_closing_fence():
    text = "* - ```md\n    {cite}`key` (label)=\n    ```\n  - {ref}`sec-a`"
    lines, _, codes = translate(text.split("\n"), 0, [])
    assert codes == [True, True, True, False] and lines[:3] == text.split("\n")[:3] and lines[3] == "  - [](#sec-a)"


def test_raw_html_s_style_attribute_is_dropped_and_said_but_not_in_a_code_span():
    lines, _, notes = read('<div class="admonition note" style="background: lightgreen">正文</div> `<p style="x">`')
    assert lines == ['<div class="admonition note">正文</div> `<p style="x">`']
    assert notes == [(1, "a style= attribute is dropped: the site's Content-Security-Policy refuses inline styles")]


def test_a_list_table_is_a_table_with_its_caption_and_one_with_blocks_in_its_cells_is_this_site_s_list_table():
    lines, numbers, notes = read("```{list-table} 问题的类型\n:header-rows: 1\n:name: tbl-kinds\n\n* - 类型\n  - 说明\n"
                                 "* - 描述\n  - 汇总 | 事实，\n    见 {ref}`sec-a`\n```\n后文")
    assert [line for line in lines if line] == ["| 类型 | 说明 |", "|---|---|", "| 描述 | 汇总 \\| 事实， 见 [](#sec-a) |",
                                                ": 问题的类型 {#tbl-kinds}", "后文"]
    assert len(lines) == len(numbers) == 11 and not notes
    lines, numbers, notes = read("````{list-table} 写法\n:header-rows: 1\n* - 写法\n  - 结果\n* - ```md\n    {cite}`key`\n"
                                 "    ```\n  - ```{note}\n    一个框\n    ```\n````\n后文")
    assert [(n, line) for n, line in zip(numbers, lines) if line] == [
        (1, "::: list-table header-rows=1 title='写法'"), (3, "::: row"), (3, "::: entry"), (3, "写法"), (4, "::: end"),
        (4, "::: entry"), (4, "结果"), (5, "::: end"), (5, "::: end"), (5, "::: row"), (5, "::: entry"), (5, "```md"),
        (6, "{cite}`key`"), (7, "```"), (8, "::: end"), (8, "::: entry"), (8, "::: note"), (9, "一个框"), (10, "::: end"),
        (11, "::: end"), (11, "::: end"), (11, "::: end"), (12, "后文")]
    assert not notes                    # (the code's role is code; the note in a cell is a callout)
    lines, _, notes = read("```{list-table}\n一段话\n```")
    assert notes == [(1, "this {list-table} is not a list of rows ('* - cell' with '  - cell' below it for each other "
                         "cell): it shows as the lists it is")]


@pytest.mark.parametrize("text", [
    "::::{tab-set}\n:::{tab-item} 图\n画图。\n:::\n:::{tab-item} 表\n列表。\n:::\n::::",         # sphinx-design's
    "::: {.panel-tabset}\n## 图\n画图。\n\n### 细节\n## 表\n```python\n## 代码\n```\n列表。\n:::",    # Quarto's
    "::: panel-tabset\n## 图\n画图。\n## 表\n列表。\n:::",
    "````{tabbed} 图\n画图。\n````\n\n````{tabbed} 表\n:new-group:\n列表。\n````",                # sphinx-panels'
])
def test_a_set_of_tabs_is_this_site_s_tabs_one_after_another(text):
    lines, numbers, notes = read(text, start=4)
    opened = [line for line in lines if line.startswith("::: ")]
    assert [shlex.split(line) for line in opened] == [[":::", "tab", "title=图"], [":::", "end"],
                                                      [":::", "tab", "title=表"], [":::", "end"]]
    assert not notes
    assert [line for line in lines if line.startswith("#")] == [line for line in ("### 细节", "## 代码") if line in text]
    assert len(numbers) == len(lines) and numbers[0] == 5


@pytest.mark.parametrize("text, shown, said", [
    ("```{code-block} bash\nls -l\n```", ["```bash", "ls -l", "```"], []),
    ("```{code} python\n:name: the-code\nx = 1\n```", ["", "```python", "x = 1", "```"], []),
    ("```{code-block} R\n:linenos:\n:emphasize-lines: 2\nx <- 1\n```", ["", "", "```R", "x <- 1", "```"],
     [(1, "{code-block}: options :emphasize-lines:, :linenos: not supported here (left out)")]),
])
def test_a_code_block_is_code_in_the_language_it_names_its_options_outside_it(text, shown, said):
    lines, _, notes = read(text)
    assert lines == shown and notes == said


def test_markup_is_read_outside_code_spans_only_even_after_an_example_of_it():
    from sitegen.pages.bookparts import ROLE, outside_spans
    line = "`{ref}` x {ref}`y`, ``{eq}`z` `` and {eq}`w`"
    names = []
    assert outside_spans(ROLE, lambda found: names.append(found["text"]) or "R", line) == "`{ref}` x R, ``{eq}`z` `` and R"
    assert names == ["y", "w"]


@pytest.mark.parametrize("text, shown, said", [
    (":::: {.fragment}\n一步。\n::::", ["", "一步。", ""], []),                          # a slide's: its content
    ("::: {.incremental}\n- 一\n- 二\n:::", ["", "- 一", "- 二", ""], []),
    ('::: {.content-visible when-format="html"}\n网页上。\n:::', ["", "网页上。", ""], []),
    ('::: {.content-hidden when-format="html"}\n网页上没有。\n::: {.fragment}\n也没有。\n:::\n:::\n之后。',
     ["", "", "", "", "", "", "之后。"], []),
    ('::: {.content-visible when-format="revealjs"}\n只在幻灯片上。\n:::', ["", "", ""], []),
    ('::: {.content-hidden}\n哪里都没有。\n:::', ["", "", ""], []),           # (for every format)
    ('::: {.content-visible}\n到处都有。\n:::', ["", "到处都有。", ""], []),
    ('::: {.content-visible when-profile="slides"}\n某个配置。\n:::', ["", "某个配置。", ""],
     ['the div ::: {.content-visible when-profile="slides"} is not supported here: its content shows as prose']),
])
def test_quarto_s_divs_for_slides_and_formats_show_as_its_html_output_shows_them(text, shown, said):
    lines, _, notes = read(text)
    assert lines == shown and [message for _, message in notes] == said


def test_an_image_directive_is_an_image_not_a_numbered_figure_its_name_its_id():
    lines, _, notes = read("```{image} pics/cat.png\n:alt: 一只猫\n:name: cat\n:width: 50%\n```\n见 {ref}`这张图 <cat>`。")
    assert lines == ["![一只猫](pics/cat.png){#cat}", "", "", "", "", "见 [这张图](#cat)。"] and not notes
    lines, _, notes = read("```{image} cat.png\n:target: https://example.org\n```")
    assert lines[0] == "![cat.png](cat.png)" and notes == [(1, "{image}: option :target: not supported here (left out)")]


def test_quarto_s_inline_expression_quotes_the_value_it_names_and_any_other_is_code_said():
    lines, _, notes = read("半径 `{python} radius`，首项 `{python} scores[0]`，`{python} round(r, 2)`，`{r} x`，"
                           "写作 `` `{python} radius` ``。")
    assert lines == ["半径 {{ radius }}，首项 {{ scores[0] }}，`round(r, 2)`，`x`，写作 `` `{python} radius` ``。"]
    assert [message for _, message in notes] == [
        "the inline expression `{python} round(r, 2)` is shown as code, not evaluated: this site quotes a value by its "
        "name, as name.key[0]: compute it in a code cell and quote that name",
        "the inline expression `{r} x` is shown as code, not evaluated: a notebook page runs Python only"]
    notes = []
    assert translate(["`{python} radius`"], 0, notes, computed=False)[0] == ["`radius`"]
    assert "this page runs no code" in notes[0][1]


@pytest.mark.parametrize("text, opening", [
    ("::: callout-note\n注意这一点。\n:::", "::: note"),                 # Pandoc's div of one bare class
    ("::: callout-tip\n## 小窍门\n内容。\n:::", "::: tip title='小窍门'"),
    ("::: column-margin\n旁注。\n:::", "::: margin"),
])
def test_a_div_of_one_bare_class_is_read_as_pandoc_reads_it_the_class_in_braces(text, opening):
    lines, _, notes = read(text)
    assert lines[0] == opening and lines[-1] == "::: end" and not notes, (lines, notes)


def test_a_link_to_a_heading_by_the_id_jupyter_gives_it_goes_to_its_id_here():
    """Jupyter's heading ids keep case and write a space as `-`; a notebook's table of contents names them."""
    lines, _, _ = read("[Go](#Summary), [two](#Two-Words), [mine](#my-label), [gone](#Nowhere)\n\n"
                       "## Summary\n\n## Two Words\n\n(my-label)=\n## Labelled\n")
    assert lines[0] == "[Go](#summary), [two](#two-words), [mine](#my-label), [gone](#Nowhere)"


def test_a_directive_indented_under_a_list_item_is_read_at_the_margin_and_said():
    """Not code (four spaces in) nor prose with its fence: the callout, after the list, with a warning. A
    fence of code in the item holds examples of directives as code."""
    lines, _, notes = read("-   Four:\n\n    ```{note}\n    Deep.\n    ```\n\n    ````md\n    ```{tip}\n    x\n    ```\n    ````\n")
    assert lines[2:5] == ["::: note", "Deep.", "::: end"], lines
    assert lines[7] == "    ```{tip}" and notes == [(3, "the directive {note} is indented under a list item: shown after "
                                                       "the list, at the margin (a callout is not nested in a list item here)")]


def test_a_callout_or_alert_in_a_list_item_is_said_and_a_formula_stays_in_the_item():
    """The red team saw a Quarto callout, a GitHub alert and a display formula moved out of their list item
    without a word: the callouts are said, the formula keeps its indent (the page shows it in the item)."""
    lines, _, notes = read("- 一\n\n  $$\n  l^2\n  $$\n\n- 二\n\n  ::: {.callout-tip}\n  提示\n  :::\n\n- 三\n\n"
                           "  > [!NOTE]\n  > 警示")
    assert lines[2] == "  $$l^2$$" and lines[8] == "::: tip"
    assert [(n, m.split(" is indented")[0]) for n, m in notes] == [(9, "the callout {.callout-tip}"), (15, "the alert [!NOTE]")]


@pytest.mark.parametrize("text, shown, said", [
    ("## 一节 {#sec-a .unnumbered}", "## 一节 {#sec-a}", []),           # Pandoc's attributes: the id kept
    ("## 附录 {.unlisted}", "## 附录", []),
    ("## 幻灯片 {.smaller background-color=\"#fff\"}", "## 幻灯片",
     ["the heading's attributes .smaller background-color=\"#fff\" are not read here: left out"]),
    ("一张 ![小图](a.png){width=50%} 图", "一张 ![小图](a.png) 图", []),
    ("![图](a.png){#pic .border}", "![图](a.png){#pic}", ["the image's attributes .border are not read here: left out"]),
    ("## 值 {{ total }}", "## 值 {{ total }}", []),                     # (no attributes: a value)
    ("`![x](a.png){width=1}`", "`![x](a.png){width=1}`", []),             # (code: as written)
])
def test_pandoc_s_attributes_on_a_heading_or_an_image_keep_their_id_and_say_what_is_left_out(text, shown, said):
    lines, _, notes = read(text)
    assert lines == [shown] and [message for _, message in notes] == said


@pytest.mark.parametrize("text, shown, said", [
    ("```{epigraph}\n学而时习之。\n\n-- 孔子\n```", ["", "> 学而时习之。", ">", "> -- 孔子", ""], []),
    ("```{eval-rst}\n.. note:: 注意\n```", ["```", ".. note:: 注意", "```"],
     ["the MyST directive {eval-rst} is not supported here: it shows as a block of code"]),   # (its source, never raw)
    ('::: {.columns}\n::: {.column width="50%"}\n左\n:::\n::: {.column width="50%"}\n右\n:::\n:::',
     ["", "", "左", "", "", "右", "", ""], []),                              # (one column, as a phone shows them)
])
def test_a_quotation_is_a_quote_restructuredtext_its_source_and_quarto_s_columns_one_column(text, shown, said):
    lines, _, notes = read(text)
    assert lines == shown and [message for _, message in notes] == said, (lines, notes)


@pytest.mark.parametrize("text, shown, said", [
    ("前{{< pagebreak >}}后", "前后", []),
    ("{{< video https://www.youtube.com/embed/x >}}", "[https://www.youtube.com/embed/x](https://www.youtube.com/embed/x)",
     ["{{< video https://www.youtube.com/embed/x >}}: shown as a link to it (a page embeds nothing from another site)"]),
    ("{{< include _part.qmd >}}", "`` {{< include _part.qmd >}} ``",
     ["Quarto's shortcode {{< include >}} is not supported here: shown as its source"]),
])
def test_quarto_s_shortcodes_show_as_its_html_output_shows_them_or_as_their_source(text, shown, said):
    lines, _, notes = read(text)
    assert lines == [shown] and [message for _, message in notes] == said


def test_a_code_fence_never_closed_is_said_at_its_line():
    lines, codes, notes = read("文字。\n\n```python\nx = 1\n\n## 不是标题\n")
    assert notes == [(3, "the code fence opened here is never closed: the rest of the page shows as code (close it "
                         "with a line ```)")]


def test_a_block_of_this_site_closed_as_pandoc_closes_its_div_is_closed():
    lines, _, notes = read("::: note\n内容。\n:::\n\n::: exercise\n题。\n::: tip\n提示。\n:::\n:::\n:::")
    assert lines == ["::: note", "内容。", "::: end", "", "::: exercise", "题。", "::: tip", "提示。", "::: end",
                     "::: end", ""] and notes == [(11, "':::' closes nothing (no ':::{...}' is open above it): left out")]


@pytest.mark.parametrize("text, shown, said", [
    ("```{rubric} 小结\n```", ["**小结**", ""],
     ["the MyST directive {rubric} is not supported here: its title and content show as prose (callouts are {note}, "
      "{tip}, {important}, {warning}, {caution})"]),
    ("```{include} ../README.md\n```", ["", ""],
     ["the MyST directive {include} is not supported here: the file it names (../README.md) is left out; paste its "
      "text in the page"]),
    ("```{Note}\n大写。\n```", ["::: note", "大写。", "::: end"], []),      # (docutils' names know no case)
])
def test_an_unsupported_directive_keeps_its_argument_and_one_in_capitals_is_read(text, shown, said):
    lines, _, notes = read(text)
    assert lines == shown and [message for _, message in notes] == said, (lines, notes)


def test_quarto_s_reference_without_its_name_or_with_a_word_of_its_own_is_its_number_with_that_word():
    """`[-@fig-a]` is the number alone, `[Fig. @fig-b]` that word and the number (labels.py fills %s in);
    a citation in brackets and an address stay as they are."""
    lines, _, notes = read("Panel [-@fig-a] and [Fig. @fig-b]; see @eq-c, [@knuth] and a@fig-x.org.")
    assert lines == ["Panel [%s](#fig-a) and [Fig. %s](#fig-b); see [](#eq-c), [@knuth] and a@fig-x.org."] and not notes


@pytest.mark.parametrize("text, shown, said", [
    ("```{figure}\n:name: f1\n无图。\n```", ["无图。", "", "", ""],
     ["this {figure} names no image (write it as ```{figure} path/to/image.png```): its caption shows alone"]),
    ("```{glossary}\n孤词\n```", ["", "[孤词]{#term-孤词}", "", ""],
     ["the glossary's term '孤词' has no definition (indent one below it): it shows alone"]),
    ("```{math}\n:label: empty\n```", ["", "", ""], ["this display formula is empty: left out (and its label 'empty')"]),
    ("$$\n$$", ["", ""], ["this display formula is empty: left out"]),
])
def test_a_directive_missing_what_it_shows_is_said_and_no_markup_of_the_site_s_own_reaches_the_page(text, shown, said):
    """The red team saw `![No argument]( "No argument") {#f1}`, `:` and `$$$$ {#empty}` on pages."""
    lines, _, notes = read(text)
    assert lines == shown and [message for _, message in notes] == said, (lines, notes)


def test_a_display_formula_in_a_quote_is_one_line_of_the_quote():
    lines, numbers, notes = read("> 引文\n>\n> $$\n> b^2\n> $$\n> 后文")
    assert lines == ["> 引文", ">", "> $$b^2$$", "> ", "> ", "> 后文"] and numbers == [1, 2, 3, 4, 5, 6] and not notes


@pytest.mark.parametrize("text, opening", [("> 引言\n> ```{note}\n> 在引文里。\n> ```", "::: note"),
                                           ("> :::{tip}\n> 在引文里。\n> :::", "::: tip"),
                                           ("> ::: {.callout-note}\n> 在引文里。\n> :::", "::: note")])
def test_a_directive_in_a_quote_is_read_without_the_quote_and_said(text, opening):
    """MyST reads a directive inside a quote; here it is read, without the quote, and said (the red team saw
    a plain block of code and raw ::: lines)."""
    lines, numbers, notes = read(text)
    assert opening in lines and "在引文里。" in lines and lines[-1] == "::: end" and not any(">" in l for l in lines)
    assert len(notes) == 1 and "stands in a quote: the quote's content shows without the quote" in notes[0][1]


def test_an_amsmath_environment_on_a_page_is_a_display_formula_as_myst_s_amsmath_reads_it():
    lines, numbers, notes = read("前文\n\n\\begin{align}\na &= b \\label{eq-a} \\\\\nc &= d\n\\end{align}\n后文")
    assert lines == ["前文", "", "$$\\begin{align} a &= b  \\\\ c &= d \\end{align}$$ {#eq-a}", "", "", "", "后文"]
    assert not notes


def test_a_list_table_whose_later_cells_hold_code_is_read_line_by_line():
    """A list-table's rewrite makes one line several (`::: end`, `::: row`, `::: entry`, a fence): what is code
    in the rows after it is still found (the tune half's cheatsheet stopped with an internal error)."""
    lines, _, notes = read("````{list-table}\n:header-rows: 1\n\n* - 写法\n  - 结果\n* - ```md\n    **粗**\n    ```\n  - 粗\n"
                           "* - ```md\n    *斜*\n    ```\n  - 斜\n````\n\n后文 {{ x }}。")
    assert "**粗**" in lines and "*斜*" in lines and lines[-1] == "后文 {{ x }}。" and not notes


def test_an_amsmath_label_leaves_the_page_s_labels_as_they_were():
    """A labelled amsmath environment before a MyST link to a label: the link is still the label's (the
    environment's label once took the place of the page's labels, and the link went nowhere)."""
    lines, _, notes = read("(sec-a)=\n## 一节\n\n\\begin{equation}\nx \\label{eq-a}\n\\end{equation}\n\n见 [这一节](sec-a)。")
    assert lines[-1] == "见 [这一节](#sec-a)。" and not notes


def test_amsmath_s_eqref_in_a_page_s_prose_refers_to_its_formula_as_mathjax_reads_it():
    """The red team saw \\eqref{x} raw on a .md page (a notebook's was read), and $\\eqref{x}$ typeset."""
    lines, _, notes = read("\\begin{equation}\nx \\label{eq-a}\n\\end{equation}\n\nBy \\eqref{eq-a}, $\\eqref{eq-a}$ and $y \\ref{z}$.")
    assert lines[-1] == "By [](#eq-a), [](#eq-a) and $y \\ref{z}$." and not notes


def test_a_display_formula_in_a_definition_stays_in_the_definition():
    """The red team saw `$$` raw in a definition list, and a warning that the formula was never closed."""
    lines, _, notes = read("Term\n:   $$\n    \\gamma\n    $$")
    assert lines == ["Term", ":   $$\\gamma$$", "", ""] and not notes


def test_a_label_inside_a_dollar_formula_is_its_label():
    """The red team saw `$$\\begin{equation}...\\label{why}...$$` typeset \\label and its name."""
    lines, _, notes = read("$$\\begin{equation} x \\label{why} \\end{equation}$$\n\n$$\ny \\label{two}\n$$")
    assert lines == ["$$\\begin{equation} x  \\end{equation}$$ {#why}", "", "$$y$$ {#two}", "", ""] and not notes
