"""What the check finds in one rendered page on its own (sitegen/check.py); the site-wide cases,
each a broken site, are tests/test_sites_invalid.py's."""
from __future__ import annotations

import pytest

from sitegen.check import _read_html

BASE = "https://example.pages.dev"


@pytest.mark.parametrize("markup, what", [
    ("<script>alert(1)</script>", "an inline <script>"),
    ("<SCRIPT type=module>go()</SCRIPT>", "an inline <script>"),
    ("<style>p { color: red }</style>", "an inline <style>"),
    ('<p STYLE="color: red">红</p>', "a style= attribute"),
    ('<img src="a.png" alt="图" onerror="go()">', "an on...= event handler"),
    ('<button\tOnClick="go()">按</button>', "an on...= event handler"),
    ('<a href=" JavaScript:go()">去</a>', "a javascript: link"),
])
def test_what_the_content_security_policy_would_block_is_an_error_in_any_case(markup, what):
    found = _read_html("page.html", f"<html><body><p>前文</p>{markup}</body></html>".encode(), BASE, None)
    assert [message.split(" has ", 1)[1].split(", which")[0] for _, message in found["errors"]] == [what]


def test_a_page_that_loads_only_its_own_files_by_url_has_no_error():
    page = ('<html><head><script src="assets/search.js" type="module"></script>'
            '<link rel="stylesheet" href="assets/style.css"></head>'
            '<body><p>样式与脚本都从本站加载：style 与 onion 只是文字，javascript 也是。</p></body></html>')
    assert _read_html("page.html", page.encode(), BASE, None)["errors"] == []
