"""What the check finds in one rendered page on its own (sitegen/publish/htmlcheck.py), read by a parser
whatever the quoting, case and character references; the site-wide cases, each a broken site, are
tests/test_sites_invalid.py's."""
from __future__ import annotations

import pytest

from sitegen.publish.htmlcheck import read_html

BASE = "https://example.pages.dev"


@pytest.mark.parametrize("markup, what", [
    ("<script>alert(1)</script>", "an inline <script>"),
    ("<SCRIPT type=module>go()</SCRIPT>", "an inline <script>"),
    ("<style>p { color: red }</style>", "an inline <style>"),
    ('<p STYLE="color: red">红</p>', "a style= attribute"),
    ('<img src="a.png" alt="图" onerror="go()">', "an on...= event handler"),
    ('<button\tOnClick="go()">按</button>', "an on...= event handler"),
    ('<a href=" JavaScript:go()">去</a>', "a javascript: link"),
    ("<a href='javascript:go()'>去</a>", "a javascript: link"),
    ("<a href=javascript:go()>去</a>", "a javascript: link"),
    ('<a href="&#106;avascript:go()">去</a>', "a javascript: link"),
    ('<a href="java\tscript:go()">去</a>', "a javascript: link"),
    ('<svg><a xlink:href="javascript:go()"><text>去</text></a></svg>', "a javascript: link"),
    ('<a href="data:text/html,&lt;script&gt;go()&lt;/script&gt;">去</a>', "a data: link"),
    ('<iframe srcdoc="&lt;script&gt;go()&lt;/script&gt;"></iframe>', "an <iframe srcdoc>"),
    ('<svg><a><set attributeName="href" to="javascript:go()"/><text>去</text></a></svg>',
     "an SVG animation of a link"),
    ('<svg><a><animate attributeName="xlink:href" values="javascript:go()"/><text>去</text></a></svg>',
     "an SVG animation of a link"),
])
def test_what_the_content_security_policy_would_block_is_an_error_in_any_case(markup, what):
    found = read_html("page.html", f"<html><body><p>前文</p>{markup}</body></html>".encode(), BASE, None)
    assert [message.split(" has ", 1)[1].split(", which")[0] for _, message in found["errors"]] == [what.split(", which")[0]]


def test_a_page_that_loads_only_its_own_files_by_url_has_no_error():
    page = ('<html><head><script src="assets/search.js" type="module"></script>'
            '<link rel="stylesheet" href="assets/style.css"></head>'
            '<body><p>样式与脚本都从本站加载：style 与 onion 只是文字，javascript 也是。</p></body></html>')
    assert read_html("page.html", page.encode(), BASE, None)["errors"] == []


def _read(markup: str) -> dict:
    return read_html("page.html", f"<html><body><p>前文</p>{markup}</body></html>".encode(), BASE, None)


@pytest.mark.parametrize("markup, url", [
    ('<svg><image href="https://img.example.org/x.png"/></svg>', "https://img.example.org/x.png"),
    ('<svg><use xlink:href="https://img.example.org/s.svg#i"></use></svg>', "https://img.example.org/s.svg#i"),
    ('<table background="https://img.example.org/bg.png"><tr><td>格</td></tr></table>',
     "https://img.example.org/bg.png"),
    ('<img alt=">" src="https://img.example.org/x.png">', "https://img.example.org/x.png"),
    ("<IMG SRC='//img.example.org/x.png' ALT='图'>", "//img.example.org/x.png"),
    ('<img srcset="a.png 1x, https://img.example.org/x.png 2x" alt="图">', "https://img.example.org/x.png"),
    ('<link rel="preload" as="image" imagesrcset="https://img.example.org/x.png 2x">', "https://img.example.org/x.png"),
])
def test_a_load_from_another_site_is_an_error_in_any_spelling(markup, url):
    errors = _read(markup)["errors"]
    assert len(errors) == 1 and errors[0][0] == url and "which loads from https://img.example.org" in errors[0][1]


def test_links_and_alt_text_are_read_whatever_the_quoting():
    found = _read("<a href='nowhere.html'>甲</a><a href=other.html#part>乙</a>"
                  "<img alt='一张图' src='a.png'><img src=\"b.png\" alt=\"\"><p id=here>丙</p>")
    assert [(name, url) for name, url, *_ in found["links"]] == [
        ("href", "nowhere.html"), ("href", "other.html#part"), ("src", "a.png"), ("src", "b.png")]
    assert [message for _, message in found["warnings"]] == ['page.html: an image without alt text: <img src="b.png" alt="">']
    assert "here" in found["ids"]


def test_an_empty_section_is_a_warning_and_a_heading_s_own_link_is_not_its_title():
    found = _read('<article><h2 id="a">空节<a class="heading-anchor" href="#a">#</a></h2>\n'
                  '<h2 id="b">有内容</h2><p>正文</p><h2 id="c">末节</h2>\n</article>')
    assert [message for _, message in found["warnings"]] == ["page.html: section '空节' is empty",
                                                             "page.html: section '末节' is empty"]



def test_a_link_no_browser_opens_is_a_warning_and_a_web_mail_or_phone_link_is_not():
    found = _read('<a href="content:glue">甲</a><a href="https://example.org/" rel="noopener">乙</a>'
                  '<a href="mailto:t@example.org">丙</a><a href="tel:+861234">丁</a><a href="other#x:y">戊</a>')
    assert [message for _, message in found["warnings"]] == [
        'page.html: a link no browser opens (content: is the scheme of no web address): <a href="content:glue">: '
        'link a page of the site, or an address']
