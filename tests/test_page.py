"""A page as the build holds it (sitegen/pages/page.py): pickled with its blocks packed."""
from __future__ import annotations


def test_a_pickled_page_is_the_same_page_with_its_blocks_unpickled_only_when_read(monkeypatch):
    import pickle

    from sitegen.pages import content, page as pages
    page = content.parse_page("---\ntitle: 页\nlab: tiny\n---\n段落 {{ x }}。\n\n::: cell setup\n\n再一段。\n",
                              "content/p.md", "p.html")
    data = pickle.dumps(page)
    decoded = []
    real = pickle.loads
    monkeypatch.setattr(pages.pickle, "loads", lambda b: decoded.append(b) or real(b))
    copy = real(data)
    assert (copy.title, copy.output, copy.lab) == ("页", "p.html", "tiny") and decoded == []
    assert copy.kinds == ("cell", "prose") and decoded == []      # what kinds of block it has, too
    assert pickle.dumps(copy) == data and decoded == []          # pickled again without decoding
    assert copy == page and len(decoded) == 1                     # its blocks, decoded when read
    assert [b.kind for b in copy.blocks] == ["prose", "cell", "prose"] and len(decoded) == 1


def built(tmp_path, text: str, *args: str):
    """`text` as content/notes.md of an empty course, built: the build's result, and the page (None if none)."""
    from support import empty_course, run_build
    root = tmp_path / "course"
    if not root.exists():           # (built again, --strict: the same course)
        empty_course(root)
    (root / "content/notes.md").write_text(text, encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", *args)
    page = tmp_path / "dist/notes.html"
    return result, page.read_text(encoding="utf-8") if page.exists() else None


def test_a_formula_that_is_not_latex_that_can_be_read_is_shown_as_its_source_with_a_warning(tmp_path):
    """One formula costs a warning (an error under --strict), never the page: the rest is built, and
    that formula shows as what the author wrote."""
    text = "---\ntitle: 公式\n---\n读得出的 $x^2$，读不出的 $\\frac{1}{$，后文照常。\n"
    result, page = built(tmp_path, text)
    assert result.returncode == 0, result.stderr
    assert "warning: content/notes.md:4: math $\\frac{1}{$ is not LaTeX that can be read" in result.stderr
    assert '<code class="math-source">$\\frac{1}{$</code>' in page and "<math" in page and "后文照常" in page
    assert built(tmp_path, text, "--strict")[0].returncode == 1


def test_raw_html_the_policy_refuses_is_shown_as_its_source_with_a_warning(tmp_path):
    """A book's <iframe> of a video site or its inline <style> (which the site's Content-Security-Policy
    refuses) costs a warning at its line, never the page: the HTML shows as what the author wrote."""
    text = ("---\ntitle: HTML\n---\n<iframe src=\"https://www.youtube.com/embed/xyz\"></iframe>\n\n<style>\n.red { color: red; }\n"
            "</style>\n\nIn a sentence <img src=\"https://example.org/a.png\" alt=\"a\"> and <b>bold</b> kept.\n")
    result, page = built(tmp_path, text)
    assert result.returncode == 0, result.stderr
    for line, what in ((4, "<iframe src=\"https://www.youtube.com/embed/xyz\">, which loads from https://www.youtube.com"),
                       (6, "an inline <style>, which the site's Content-Security-Policy blocks"),
                       (10, "<img src=\"https://example.org/a.png\">, which loads from https://example.org")):
        assert f"warning: content/notes.md:{line}: notes.html: raw HTML with {what}" in result.stderr, result.stderr
    assert '<pre class="html-source">&lt;iframe src=&quot;https://www.youtube.com/embed/xyz&quot;&gt;&lt;/iframe&gt;</pre>' in page
    assert '<pre class="html-source">&lt;style&gt;\n.red { color: red; }\n&lt;/style&gt;</pre>' in page
    assert '<code class="html-source">&lt;img src=&quot;https://example.org/a.png&quot; alt=&quot;a&quot;&gt;</code>' in page
    assert "<b>bold</b> kept" in page
    assert built(tmp_path, text, "--strict")[0].returncode == 1
    text = "---\ntitle: HTML\n---\n| a | b |\n|---|---|\n| <script>alert(4)</script> | <span onmouseover=\"hint()\">hover</span> |\n"
    result, page = built(tmp_path, text)         # (a start tag shown as source takes its end tag with it)
    assert '<td><code class="html-source">&lt;script&gt;</code>alert(4)<code class="html-source">&lt;/script&gt;</code></td>' in page
    assert '<code class="html-source">&lt;/span&gt;</code></td>' in page and "None" not in result.stderr
    assert result.stderr.count("warning") == 2, result.stderr


def test_a_footnote_never_defined_is_said_at_its_line(tmp_path):
    result, page = built(tmp_path, "---\ntitle: 脚注\n---\n有注[^a]，缺注[^missing]，`[^code]` 照写。\n\n"
                                           "[^a]: 注文。\n")
    assert result.returncode == 0, result.stderr
    assert ("warning: content/notes.md:4: the footnote [^missing] is never defined: it shows as written; define it "
            "on the page, as a line [^missing]: its text") in result.stderr
    assert result.stderr.count("footnote") == 1, result.stderr


def test_a_term_no_glossary_defines_shows_its_text_and_is_said_in_the_author_s_words_and_doc_names_its_own_page(tmp_path):
    """The red team saw `term-missing-term` on the page and a message about `[](#term-missing-term)`, the
    site's own form; and {doc} of the page itself was 'no page of the site'."""
    result, page = built(tmp_path, "---\ntitle: 术语\n---\n见 {term}`Missing term` 与 {doc}`notes`。\n")
    assert result.returncode == 0, result.stderr
    assert ("warning: content/notes.md:4: the term 'missing term' ({term}) is in no glossary of the site: it shows as "
            "its text; define it in a {glossary}") in result.stderr
    assert result.stderr.count("warning") == 1, result.stderr
    assert '见 Missing term 与 <a href="notes">术语</a>。' in page


def test_an_exercise_s_label_is_a_reference_target_and_a_solution_of_another_exercise_is_said(tmp_path):
    """sphinx-exercise's `:label:` names its exercise for {ref}; a {solution} names its exercise's label."""
    result, page = built(tmp_path, "---\ntitle: 练习\n---\n```{exercise}\n:label: ex-one\n做它。\n```\n\n```{solution} ex-one\n答案。\n```\n\n"
        "```{exercise}\n:label: ex-two\n再做。\n```\n\n```{solution} ex-one\n错配。\n```\n\n见 {ref}`ex-two`。\n")
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("warning")] == [
        "warning: content/notes.md:18: this {solution} is of the exercise 'ex-one', but stands after exercise 'ex-two': "
        "shown as its solution (put it right after its {exercise})"]
    assert '<section class="exercise" id="ex-two"' in page and '见 <a href="notes#ex-two">练习 2</a>。' in page


def test_a_callout_s_title_shows_its_code_emphasis_and_formulas_as_a_sentence_does(tmp_path):
    """mystmd's guide titles a callout "You can also use a `{dropdown}`": the backticks were shown raw."""
    result, page = built(tmp_path, "---\ntitle: 标题\n---\n:::{tip} 用 `{dropdown}`、*强调* 与 $x^2$\n正文。\n:::\n\n"
                                   "```{exercise} 求 $\\sqrt{2}$\n做。\n```\n")
    assert result.returncode == 0, result.stderr
    assert '<span class="callout-kind">提示</span> 用 <code>{dropdown}</code>、<em>强调</em> 与 <math' in page
    assert '<span class="exercise-number">练习 1</span> 求 <math' in page and "`" not in page.split("<main")[1].split("</main>")[0]


def test_a_value_on_a_page_that_names_no_lab_is_said_at_the_value_s_line(tmp_path):
    """The red team saw it at the page's first line, far from the value."""
    result, _ = built(tmp_path, "---\ntitle: 值\n---\n前文。\n\n更多。\n\n值是 {{ x }}。\n")
    assert result.returncode == 1
    assert "error: content/notes.md:8: this refers to a lab, but the front matter names none: add 'lab: ID'" in result.stderr
