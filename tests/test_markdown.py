"""Markdown as Jupyter, MyST and Quarto authors write it: CommonMark with GitHub's extensions, read by
markdown-it-py (sitegen/render/markdown.py). CommonMark's and GitHub's own spec examples are the corpus
tier's (tests/corpus/spec.py); these are the cells teachers write every week, and the site's needs."""
from __future__ import annotations

import pytest

from sitegen.render.markdown import Markdown

WORDS = {"heading_link": "链接到本节", "footnote_back": "回到正文（脚注 {n}）"}


def html(text: str) -> str:
    return Markdown(WORDS).convert(text)


@pytest.mark.parametrize("text, shown", [
    ("Steps:\n- one\n- two\n", "<p>Steps:</p>\n<ul>\n<li>one</li>"),                  # a list right after text
    ("- a\n  - nested by two\n", "<li>a\n<ul>\n<li>nested by two</li>"),
    ("- a\n\n  ```python\n  x = 1\n  ```\n", '<li>\n<p>a</p>\n<div class="highlight">'),   # a fence in an item
    ("> quote\n> ```\n> code\n> ```\n", "<blockquote>\n<p>quote</p>\n<div class=\"highlight\"><pre>"),
    ("~~gone~~\n", "<del>gone</del>"),
    ("see https://example.org\n", '<a href="https://example.org" rel="noopener">https://example.org</a>'),
    ("- [ ] to do\n- [x] done\n", 'type="checkbox"> to do'),
    ("1) first\n2) second\n", "<ol>\n<li>first</li>"),
    ("> lazy\nline\n", "<blockquote>\n<p>lazy\nline</p>"),
    ("- loose\n\n- items\n", "<li>\n<p>loose</p>\n</li>"),
])
def test_a_notebook_s_markdown_cell_is_shaped_as_jupyter_shapes_it(text, shown):
    assert shown in html(text)


def test_headings_keep_chinese_in_their_ids_take_their_own_id_and_external_links_get_rel_noopener():
    md = Markdown(WORDS)
    made = md.convert("## 注意力：为什么？\n\n[外部](https://example.org) 与 [本站](guide.html)\n\n"
                      "## Linear {#sec-linear}\n\n## 注意力：为什么？\n")
    assert 'id="注意力为什么"' in made and 'title="链接到本节"' in made and 'id="注意力为什么_1"' in made
    assert '<h2 id="sec-linear">Linear<a class="heading-anchor"' in made
    assert '<a href="https://example.org" rel="noopener">' in made and '<a href="guide.html">' in made
    assert [(h["id"], h["level"]) for h in md.toc] == [("注意力为什么", 2), ("sec-linear", 2), ("注意力为什么_1", 2)]


def test_an_aligned_table_gets_classes_not_the_style_attribute_the_csp_forbids():
    made = html("| 名 | 值 |\n|:-:|--:|\n| a | 1 |\n")
    assert "style=" not in made
    assert '<th class="align-center">名</th>' in made and '<td class="align-right">1</td>' in made


def test_footnotes_are_numbered_as_referred_to_and_listed_with_a_way_back():
    made = html("Second[^b] and first[^a] again[^b].\n\n[^a]: A.\n[^b]: B.\n")
    assert '<sup id="fnref-b"><a class="footnote-ref" href="#fn-b">1</a></sup>' in made
    assert '<sup id="fnref2-b"><a class="footnote-ref" href="#fn-b">1</a></sup>' in made
    assert made.index('<li id="fn-b">') < made.index('<li id="fn-a">')
    assert 'title="回到正文（脚注 1）"' in made and made.startswith("<p>")


def test_a_list_nested_ten_deep_loses_nothing_after_it():
    """markdown-it's commonmark preset stops reading at 20 levels of tokens (a list ten deep), dropping the
    rest of the page without a word; the site reads as deep as its default preset does."""
    made = html("".join("  " * i + f"- level {i}\n" for i in range(12)) + "\nAfter the list.\n")
    assert "level 11" in made and "<p>After the list.</p>" in made
