"""What the site's policy refuses in an author's raw HTML, which the page then shows as its source: render/htmlread.py."""
from __future__ import annotations

import pytest

from sitegen.render.htmlread import refused

SITE = "https://course.example.org"


@pytest.mark.parametrize("fragment, why", [
    ('<meta http-equiv="refresh" content="0; url=https://example.org">', "<meta http-equiv=\"refresh\">, which sends readers"),
    ('<image href="https://example.org/x.png"/>', "<image href=\"https://example.org/x.png\">, which loads from https://example.org"),
    ('<body background="https://example.org/b.png">', "which loads from https://example.org"),
    ("<textarea>", "an unclosed <textarea>, whose text would run to the page's end"),
    ("<style>p { color: red }</style>", "an inline <style>"),
    ('<iframe src="https://www.youtube.com/embed/x"></iframe>', "which loads from https://www.youtube.com"),
])
def test_what_a_page_may_not_hold_is_refused_with_the_check_s_words(fragment, why):
    assert why in (refused(fragment, SITE) or "")


@pytest.mark.parametrize("fragment", ["<b>bold</b>", "<textarea>notes</textarea>", '<img src="figure.png" alt="a">',
                                      '<iframe src="/course/demo.html"></iframe>', f'<img src="{SITE}/a.png" alt="a">'])
def test_html_the_site_may_hold_is_not_refused(fragment):
    assert refused(fragment, SITE) is None
