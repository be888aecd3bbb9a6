"""Markdown and Jinja as the build sets them up (sitegen/converters.py)."""
from __future__ import annotations

import jinja2
import pytest

from sitegen.converters import markdown_converter, template_environment, template_line


def test_headings_keep_chinese_in_their_ids_and_external_links_get_rel_noopener():
    md = markdown_converter({"heading_link": "链接到本节"})
    html = md.convert("## 注意力：为什么？\n\n[外部](https://example.org) 与 [本站](guide.html)\n")
    assert 'id="注意力为什么"' in html and 'title="链接到本节"' in html
    assert '<a href="https://example.org" rel="noopener">' in html and '<a href="guide.html">' in html


def test_a_template_error_is_placed_at_its_template_and_line(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates/page.html").write_text("<p>\n{{ missing.name }}\n</p>\n", encoding="utf-8")
    env = template_environment(tmp_path / "templates", None)
    with pytest.raises(jinja2.UndefinedError) as failed:
        env.get_template("page.html").render()
    assert template_line(failed.value, "page.html") == ("page.html", 2)


def test_a_template_that_is_not_utf8_is_named_with_its_line(tmp_path):
    from sitegen.errors import BuildError
    (tmp_path / "bad.html").write_bytes("<p>好</p>\n".encode() + b"\xff\n")
    with pytest.raises(BuildError) as failed:
        template_environment(tmp_path, None).get_template("bad.html")
    assert str(failed.value.problems[0]).startswith("templates/bad.html:2: not UTF-8")
