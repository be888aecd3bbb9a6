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
    said = [message.split(" has ", 1)[1].split(", which")[0] for _, message in found["errors"]]
    assert said[0] == what.split(", which")[0] and all(" in text that a browser may read as markup" in also
                                                        for also in said[1:]), said      # (a srcdoc's <script>)


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



def test_an_id_given_twice_is_a_warning():
    """`## Other {#intro}` beside `## Intro`, or a label `{#main}` beside the template's <main id="main">."""
    found = _read('<main id="main"><h2 id="intro">Intro</h2><p>x</p><h2 id="intro">Other</h2><p>y</p>'
                  '<p id="main">z</p></main>')
    assert [message for _, message in found["warnings"]] == [
        "page.html: the id 'intro' is given twice (a link to it goes to the first): rename the label, or the heading",
        "page.html: the id 'main' is given twice (a link to it goes to the first): rename the label, or the heading"]


def test_a_link_no_browser_opens_is_a_warning_and_a_web_mail_or_phone_link_is_not():
    found = _read('<a href="content:glue">甲</a><a href="https://example.org/" rel="noopener">乙</a>'
                  '<a href="mailto:t@example.org">丙</a><a href="tel:+861234">丁</a><a href="other#x:y">戊</a>')
    assert [message for _, message in found["warnings"]] == [
        'page.html: a link no browser opens (content: is the scheme of no web address): <a href="content:glue">: '
        'link a page of the site, or an address']


# Markup whose meaning depends on how a browser parses it (mutation XSS): text or an attribute to a
# parser that reads <noscript> as a browser without scripts does, an element with a handler to
# Chromium, which runs scripts. Each must be refused as the browser reads it.
HANDLER = '<img src=x onerror=alert(1)>'


@pytest.mark.parametrize("markup", [
    f'<noscript><p title="</noscript>{HANDLER}"></noscript>',
    f'<noembed><p title="</noembed>{HANDLER}"></noembed>',
    f'<noframes><p title="</noframes>{HANDLER}"></noframes>',
    f'<xmp><p title="</xmp>{HANDLER}"></xmp>',
    f'<iframe><p title="</iframe>{HANDLER}"></iframe>',
    f'<textarea><p title="</textarea>{HANDLER}"></textarea>',
    f'<title><p title="</title>{HANDLER}"></title>',
    f'<!-->{HANDLER}-->',                                        # an empty comment, as HTML ends it
    f'<p title="<!--">{HANDLER}<!-- -->',
    f'<svg></p><style><a id="</style>{HANDLER}"></style></svg>',     # out of SVG into HTML's <style> (as now)
    f'<svg><noscript>{HANDLER}</noscript></svg>',                # (in SVG, <noscript>'s content is markup)
    f'<math><mtext><table><mglyph><style>{HANDLER}</style></mglyph></table></mtext></math>',
    f'<template>{HANDLER}</template>',
    '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
    f'<select>{HANDLER}</select>',                               # (Chromium builds what a <select> holds)
    '<select><svg><a href="javascript:alert(2)">x</a></svg></select>',
    # Text to this parser, which another reading (an older parser, a script's innerHTML) may take for
    # markup: refused all the same.
    '<p title="&lt;img src=x onerror=alert(1)&gt;">text</p>',
])
def test_mutation_xss_is_refused_as_a_browser_that_runs_scripts_reads_it(markup):
    """Each of these families (noscript, noembed, raw text, comments, style, template, SVG and MathML
    namespace confusion) ends in an element with a handler or a javascript: link for Chromium."""
    messages = [message for _, message in _read(markup)["errors"]]
    assert any("event handler" in m or "javascript: link" in m for m in messages), messages


MUTATIONS = [f'<noscript><p title="</noscript>{HANDLER}"></noscript>', f'<svg></p><style><a id="</style>{HANDLER}">',
             f'<math><mtext><table><mglyph><style>{HANDLER}</style></mglyph></table></mtext></math>',
             f'<svg><noscript>{HANDLER}</noscript></svg>', f'<!-->{HANDLER}-->', f'<noembed>{HANDLER}</noembed>',
             f'<math><mi><svg><style>{HANDLER}</style></svg></mi></math>', f'<select>{HANDLER}</select>',
             '<select><img src="pic.png" alt="a" onerror="alert(1)" onload="alert(2)"></select>',
             f'<form><math><mtext></form><form>'
             f'<mglyph><style></math>{HANDLER}', f'<svg><title><style>{HANDLER}</style></title></svg>']


@pytest.mark.slow
@pytest.mark.browser
def test_whatever_chromium_makes_an_element_with_a_handler_the_check_refuses(browser):
    """The check against the browser students use: each markup loaded as a page in Chromium (which runs
    scripts); where it builds an element with an on...= attribute, the check has an error."""
    page = browser.new_page()
    for markup in MUTATIONS:
        page.set_content(f"<html><body><p>前文</p>{markup}</body></html>")
        handlers = page.evaluate("() => [...document.querySelectorAll('*')].filter("
                                 "e => [...e.attributes].some(a => a.name.startsWith('on'))).length")
        errors = _read(markup)["errors"]
        assert not handlers or any("event handler" in message for _, message in errors), markup
    page.close()


@pytest.mark.parametrize("markup", [
    '<noscript><p title="</noscript>">ok</p></noscript>',      # (inside an attribute: text, in any browser)
    '<p title="1 < 2">text</p><svg><text>1 &lt; 2</text></svg><math><mo>&lt;</mo></math>',
    '<svg><![CDATA[<img src=x onerror=alert(1)>]]></svg>',      # (text inside SVG's CDATA)
    '<math><mtext>&lt;script&gt;go()&lt;/script&gt;</mtext></math>',     # (LaTeX's \\text{<script>...})
    '<pre><code>&lt;noscript&gt;&lt;img onerror=alert(1)&gt;</code></pre>',
    '<img/src=x/onerror=alert(1) alt="x">',                    # (one attribute: src="x/onerror=alert(1)")
])
def test_what_a_browser_reads_as_text_is_no_element(markup):
    assert [message for _, message in _read(markup)["errors"]] == []


@pytest.mark.parametrize("name, body", [
    ("page.XHTML", '<html xmlns="http://www.w3.org/1999/xhtml"><body onload="go()"><p>x</p></body></html>'),
    ("data.xml", '<doc><x:script xmlns:x="http://www.w3.org/1999/xhtml">go()</x:script></doc>'),
    ("old.htm", "<p>x</p><script>go()</script>"),
    ("figure.SVG", '<svg xmlns="http://www.w3.org/2000/svg" onload="go()"><rect/></svg>'),
])
def test_a_file_a_browser_opens_as_a_document_is_read_whatever_its_name_says(name, body):
    """A lab may write any file: one a browser opens as a page, whatever the case of its suffix, is read
    as the site's pages are (they run script opened from disk, where no policy stops them)."""
    from sitegen.publish.htmlcheck import is_document
    assert is_document(name)
    assert [m for _, m in read_html(name, body.encode(), BASE, None)["errors"] if "inline <script>" in m or "handler" in m]


def test_an_xml_file_that_has_a_stylesheet_make_a_page_of_it_is_refused():
    """A lab writes report.xml naming style.xsl: a browser served it builds a page of the stylesheet's
    making (Chromium ran its handler), which no reading of the XML shows."""
    body = '<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="style.xsl"?><report><x>1</x></report>'
    assert [m for _, m in read_html("report.xml", body.encode(), BASE, None)["errors"] if "stylesheet" in m]
