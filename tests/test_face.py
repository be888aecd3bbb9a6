"""render/face.py: what other pages can see of a page changes with what they show of it, and only then."""
from __future__ import annotations

from sitegen.pages.content import parse_page
from sitegen.render.face import page_face

PAGE = "---\ntitle: 注意力\nparent: guide.md\ndescription: 一页\n---\n正文，见 ![热图](figure:heat.png)。\n"


def face(text: str, solutions: str = "folded"):
    return page_face(parse_page(text, "content/a.md", "a.html"), solutions)


def test_a_sentence_leaves_the_face_as_it_was():
    assert face(PAGE + "\n再一句。\n") == face(PAGE)
    assert face(PAGE).figure_words == (("heat.png", "热图"),)
    assert face(PAGE)[:3] == ("a.html", "注意力", "guide.md")


def test_what_another_page_or_the_site_shows_of_it_changes_its_face():
    changed = {
        "title": PAGE.replace("title: 注意力", "title: 自注意力"),
        "parent": PAGE.replace("parent: guide.md\n", ""),
        "description": PAGE.replace("description: 一页", "description: 两页"),
        "minutes": PAGE + "\n" + "长" * 800 + "。\n",
        "figure_words": PAGE.replace("![热图]", "![注意力的热图]"),
        "aliases": PAGE.replace("---\n正文", "aliases: [/old-a]\n---\n正文"),
        "formulas": PAGE + "\n公式 $x^2$。\n",
    }
    for field, text in changed.items():
        before, after = face(PAGE), face(text)
        assert getattr(before, field) != getattr(after, field), field
        assert [f for f in before._fields if getattr(before, f) != getattr(after, f)] == [field], field


def test_a_formula_in_a_solution_is_on_the_face_only_where_the_solution_is_shown():
    text = PAGE + "\n::: exercise\n\n题。\n\n::: solution\n\n$y^2$\n\n::: end\n"
    assert face(text, "omitted").formulas == ()
    assert face(text, "shown").formulas == (("y^2", False),)
