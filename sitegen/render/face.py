"""A page's face: all that other pages, and the files made of every page, can see of it.

One page shows others in its breadcrumbs and previous/next links (their address, title and parent)
and, on the lecture's map (`::: materials`), their title, description, reading time and the words
they give a lab's figure; a reference shows another page's label (its number or title); the math font holds every formula's characters, `_redirects` every
page's aliases, and a block's kind decides what scripts and checks the site carries. Everything
else of a page shows on that page alone. So an edit that leaves a page's face as it was can change
no other file but the search index's piece of it (patch.py takes such edits), and a reader of a
face records the part it read (render.Renderer.faces), so that it is revisited when that changes.
A new thing one page shows of another belongs here.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from ..pages.labels import face_labels
from ..pages.page import Page
from ..pages.prose import LINK
from .mathfont import page_formulas


class Face(NamedTuple):
    output: str                 # breadcrumbs, previous/next, the navigation's current page
    title: str
    parent: str | None
    description: str            # the lecture's map
    minutes: int
    figure_words: tuple         # (figure, the words the page gives it), the first for each figure
    aliases: tuple              # _redirects
    kinds: tuple                # the scripts, styles and checks its blocks need
    formulas: tuple             # (LaTeX, display): the math font's characters
    labels: tuple               # (name, kind, number, title): what references on other pages show


def page_face(page: Page, solutions: str) -> Face:
    """`page`'s face in a build with `solutions` (folded, shown or omitted: what formulas show)."""
    return Face(*linked(page), *mapped(page), tuple(page.aliases), tuple(page.kinds),
                tuple(page_formulas(page, solutions)), face_labels(page))


def linked(page: Page) -> tuple[str, str, str | None]:
    """The part of the face another page's breadcrumbs and previous/next show: output, title, parent."""
    return page.output, page.title, page.meta.get("parent")


def mapped(page: Page) -> tuple[str, int, tuple]:
    """The part the lecture's map shows besides those: description, minutes, figure words."""
    return page.meta.get("description", ""), page.meta.get("minutes") or reading_minutes(page), figure_words(page)


def figure_words(page: Page) -> tuple[tuple[str, str], ...]:
    """The words a page gives each lab figure where it shows it (![what it shows](figure:NAME))."""
    found: dict[str, str] = {}
    for block in page.blocks:
        if block.kind == "prose":
            for match in LINK.finditer(block.text):
                if match["bang"] and match["target"].startswith("figure:") and match["text"].strip():
                    found.setdefault(match["target"][len("figure:"):], match["text"].strip())
    return tuple(found.items())


def reading_minutes(page: Page) -> int:
    """The minutes a page's prose takes to read, at 400 characters a minute (a Chinese reader's pace;
    a Latin word counts as its letters), at least one."""
    text = "".join(block.text for block in page.blocks if block.kind == "prose")
    return max(1, round(len(re.sub(r"[\s#*_`>\[\]()|:-]", "", text)) / 400))
