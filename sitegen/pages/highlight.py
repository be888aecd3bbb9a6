"""A lab's code as highlighted HTML, and Pygments' CSS, remembered in the memo.

Pygments is imported only when a highlight or its CSS is not in the memo: a prose edit needs
neither its lexers nor its styles.
"""
from __future__ import annotations

import functools

from ..core.memo import Memo


def highlighted(memo: Memo, source: str) -> str:
    """A cell's code as highlighted HTML, remembered on the source (and, as every entry, Pygments' version)."""
    return memo.data("highlight", (source,), lambda: _highlight(source)).decode()


def pygments_css(memo: Memo) -> str:
    return memo.data("pygments-css", (), _pygments_css).decode()


def _highlight(source: str) -> bytes:
    from pygments import highlight
    return highlight(source, *_python_to_html()).encode()


@functools.cache
def _python_to_html():
    """Pygments' Python lexer and HTML formatter, made once: a formatter works out its style's CSS
    classes as it is made, which costs more than highlighting a cell."""
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    return PythonLexer(), HtmlFormatter(cssclass="highlight", wrapcode=True)


def _pygments_css() -> bytes:
    from pygments.formatters import HtmlFormatter
    from pygments.styles import get_style_by_name
    light = HtmlFormatter(cssclass="highlight").get_style_defs(".highlight")
    dark = HtmlFormatter(style=get_style_by_name("github-dark")).get_style_defs(".highlight")
    return f"\n/* code: Pygments */\n{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n".encode()
