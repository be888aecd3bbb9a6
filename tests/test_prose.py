"""What prose may say, and how it resolves (sitegen/pages/prose.py): math as browsers draw it, links to pages' sources."""
from __future__ import annotations

import pytest

from sitegen.pages.content import parse_page
from support import run_build, tiny_site
from sitegen.pages.prose import SiteMap, Unresolved, names_page, resolve_target, to_mathml


def test_bold_digits_are_the_bold_characters_that_browsers_draw_bold():
    assert "<mn>𝟏</mn>" in to_mathml(r"\mathbf{1}", False)          # MathML Core ignores mathvariant on <mn>
    assert "mathvariant" not in to_mathml(r"\mathbf{10} + \mathbf{x}", False)


@pytest.mark.parametrize("tex", [
    r"\begin{aligned} q_0 &= 100 - 10 p_0 \\ q_1 &= 50 - p_0 \end{aligned}",      # QuantEcon's systems of equations
    r"x = \left\{ \begin{aligned} a &= b \\ c &= d \end{aligned} \right.",
    r"\begin{gathered} a = b \\ c = d \end{gathered}",
])
def test_an_aligned_or_gathered_formula_is_a_table_of_rows_not_one_line(tex):
    """latex2mathml runs aligned's rows into one line with a newline that MathML Core ignores, and
    shows its & as a letter: it is written as the array it is."""
    mathml = to_mathml(tex, True)
    assert mathml.count("<mtr>") == 2 and "linebreak" not in mathml and "<mi>&amp;</mi>" not in mathml, mathml


def test_bars_that_left_and_right_do_not_size_are_never_stretched():
    bars = to_mathml(r"\lVert x \rVert + |y|", False)
    assert bars.count('<mo stretchy="false">') == 4
    assert to_mathml(r"\left\lVert \frac{a}{b} \right\rVert", True).count('stretchy="true"') == 2


def test_both_bars_of_a_norm_are_drawn_alike_in_a_browser(browser, tmp_path):
    """In a built page, with the site's own math font (subset to the page's formulas)."""
    root = tiny_site(tmp_path / "site")
    (root / "content/norm.md").write_text("---\ntitle: 范数\n---\n范数 $\\lVert \\mathbf{x}_1 \\rVert$ 与 "
                                          "$\\mathbf{1}$。\n", encoding="utf-8")
    assert run_build(root, root / "dist", root / ".cache").returncode == 0
    page = browser.new_page()
    page.goto((root / "dist/norm.html").as_uri())
    bars = page.eval_on_selector_all("article mo", "ms => ms.map(m => { const r = m.getBoundingClientRect(); "
                                                   "return [r.top, r.height]; })")
    page.close()
    assert len(bars) == 2 and bars[0] == bars[1], bars


@pytest.fixture
def pages():
    made = [parse_page(f"---\ntitle: 页{n}\n---\n正文\n", f"content/{source}", output)
            for n, (source, output) in enumerate([("book/ch1.ipynb", "book/ch1.html"),
                                                  ("book/Widget List.ipynb", "book/widget-list.html"),
                                                  ("guide.md", "guide.html")])]
    return made, SiteMap([p.output for p in made], {p.content_path: p.output for p in made})


def test_a_link_to_a_notebook_goes_where_its_page_is_published_spaces_written_either_way(pages):
    made, sitemap = pages
    ch1 = made[0]
    for target in ("Widget List.ipynb", "Widget%20List.ipynb", "./Widget%20List.ipynb#part"):
        assert resolve_target(ch1, target, sitemap)[0] == "book/widget-list.html"
    assert resolve_target(ch1, "../guide.md", sitemap) == ("guide.html", "")
    with pytest.raises(Unresolved, match="points to nothing"):
        resolve_target(ch1, "ch2.ipynb", sitemap)
    assert resolve_target(ch1, "../guide.html#part", sitemap) == ("guide.html", "part")
    # (a page the site lacks, by its source or as published, or a file it lacks: its text, with a warning)
    assert names_page("ch2.ipynb") and names_page("./05-Distances.html#norms") and not names_page("figs/x.png")


@pytest.mark.parametrize("tex, absent", [
    (r"\text{<script>go()</script>}", "<script"),
    (r"\textbf{<img src=x onerror=go()>}", "<img"),
    (r"\href{javascript:go()}{x}", "href="),
    (r"\style{color:red}{x}", "style="),
    (r"\class{a}{x}", "class="),
])
def test_math_holds_no_markup_of_the_formula_s_own(tex, absent):
    """latex2mathml writes a text argument as it is and \\href or \\style as attributes: none reaches the page."""
    mathml = to_mathml(tex, False)
    assert absent not in mathml and mathml.startswith("<math")


def test_a_unicode_character_is_named_by_its_number():
    assert "&#x263A;" in to_mathml(r"\unicode{x263A}", False)
    with pytest.raises(Unresolved, match=r"unicode\{<b>x</b>\} takes a character's number"):
        to_mathml(r"\unicode{<b>x</b>}", False)


@pytest.mark.parametrize("lines, joined", [
    (["The cost is $x +", "y$ here, and $5 and $6."], ["The cost is $x + y$ here, and $5 and $6."]),
    (["It costs $5", "and $6 more."], ["It costs $5", "and $6 more."]),             # money: never a formula
    (["An open $x", "", "next $y$."], ["An open $x", "", "next $y$."]),            # a paragraph's end stops it
    (["Where $a +", "- b$ is an item"], ["Where $a +", "- b$ is an item"]),          # so does a list item
    (["```", "$a", "b$", "```"], ["```", "$a", "b$", "```"]),                        # code as it is
])
def test_a_formula_runs_across_a_line_break_of_its_paragraph_as_pandoc_and_jupyter_read_it(lines, joined):
    from sitegen.pages.prose import paragraph_lines
    assert [line for _, line, _ in paragraph_lines(lines)] == joined


def test_an_image_from_another_site_or_one_the_site_lacks_costs_a_warning_not_the_page(tmp_path):
    """Shown as a link to it (which loads nothing) or as its alt text, marked; --strict refuses both."""
    root = tiny_site(tmp_path / "site")
    (root / "content/pics.md").write_text("---\ntitle: 图\n---\n![徽标](https://example.org/logo.png)\n\n"
                                          "![丢了](pics/gone.png)\n\n[幻灯片](../../_slides/a.pdf)\n\n后文。\n\n"
                                          '<p>见 <a href="_slides/b.html">讲义</a>。</p>\n', encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert "content/pics.md:4: the image https://example.org/logo.png is loaded from another site" in result.stderr
    assert "content/pics.md:6: link 'pics/gone.png' points to nothing the site builds: the image is shown" in result.stderr
    assert "content/pics.md:8: link '../../_slides/a.pdf' leaves the site: shown as its text" in result.stderr
    assert 'content/pics.md:12: href="_slides/b.html" in pics.html points to no file of the site' in result.stderr
    other = next(page for page in (root / "content").glob("*.md") if page.name != "pics.md")
    other.write_text(other.read_text(encoding="utf-8") + "\n又一句。\n", encoding="utf-8")
    again = run_build(root, root / "dist", root / ".cache")       # (said again by a build that reuses pics.html's check)
    assert again.returncode == 0 and sorted(again.stderr.splitlines()) == sorted(result.stderr.splitlines())
    page = (root / "dist/pics.html").read_text(encoding="utf-8")
    assert '<a href="https://example.org/logo.png" class="remote-image" rel="noopener">徽标</a>' in page
    assert '<span class="missing-image">丢了</span>' in page and "<p>幻灯片</p>" in page and "<img" not in page
    assert run_build(root, root / "dist", root / ".cache", "--strict").returncode == 1


def test_latex_s_own_double_braces_in_a_formula_are_no_value_as_jupyter_and_myst_read_them(tmp_path):
    """`$\\mathbf{{x}}$` is a bold x in Jupyter, never the notebook's x; a value in a formula is spaced."""
    from sitegen.pages.prose import values
    assert [m["path"] for m in values("$\\mathbf{{x}}$, {{y}}, ${{ z }}$ and {{< video u >}}")] == ["y", "z"]
    root = tiny_site(tmp_path / "site")
    (root / "content/braces.md").write_text("---\ntitle: 括号\n---\n公式 $\\frac{{a}}{2}$ 与\n\n$$ x^{{2}} $$\n",
                                            encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = (root / "dist/braces.html").read_text(encoding="utf-8")
    assert page.count("<math") == 2 and "{{" not in page.split("<main")[1]


def test_a_display_formula_inside_a_sentence_a_cell_or_a_quote_is_a_formula_there():
    """`$$x$$` in a sentence, a table's cell or a footnote is display math where it stands, as Pandoc's and
    MyST's dollarmath read it (the red team saw the dollars raw); a line of its own is a block."""
    from sitegen.pages.prose import math_spans, transform_prose
    assert math_spans("The energy is $$E=mc^2$$ in a sentence, $x$ too.") == [
        (14, 24, "E=mc^2", True), (40, 43, "x", False)]
    assert math_spans("| $$t^2$$ | $u$ |") == [(2, 9, "t^2", True), (12, 15, "u", False)]
    assert math_spans("`$$code$$` and $5 and $$6") == []
    shown = transform_prose("Energy $$E$$ here.\n$$F$$", None, lambda t: t,
                            math=lambda tex, display, *_, inline=False: f"<{tex}:{display}:{inline}>")
    assert shown == "Energy <E:True:True> here.\n<F:True:False>"


def test_a_block_made_of_a_list_item_s_line_stays_in_the_item_and_is_never_code():
    """A formula continuing a list item's paragraph, indented six spaces (the red team's notebook): its block
    stands at the item's content, not six spaces in, which after a blank line is an indented block of code."""
    from sitegen.pages.prose import transform_prose
    shown = transform_prose("- The model is\n      $$y = w x$$\n- next", None, lambda t: t,
                            math=lambda tex, display, *_, inline=False: "\n\n<!--block-0-->\n\n" if display else tex)
    assert shown == "- The model is\n\n\n  <!--block-0-->\n\n\n- next"
