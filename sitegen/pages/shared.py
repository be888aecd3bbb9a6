"""What a page may show of the site beside its own text, its neighbours and its labs: other pages'
labels (labels.py) and the entries of the bibliography it cites (citations.py).

A page reads a few of them; which, it says itself (`read`: the label names its references look up, the
keys its citations name). Its check, its page and its notebook are recorded as made of what those
find now (`seen`), so that an edit to a label or an entry makes again exactly what shows it.
"""
from __future__ import annotations

from typing import NamedTuple

from ..project.bibliography import Bibliography
from .citations import cited_keys, listed_keys
from .labels import References, SiteLabels, prose_lines


class Shared(NamedTuple):
    labels: SiteLabels = SiteLabels()
    bibliography: Bibliography = Bibliography()

    def read(self, page, references: References) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The label names and the keys `page` looks up (its references': `references`)."""
        return tuple(references.names(page.blocks)), tuple(cited_keys(text for _, text in prose_lines(page.blocks))) \
            + listed_keys(page)

    def seen(self, read) -> tuple:
        """What those names and keys (a record's summary) find now."""
        names, keys = read
        return self.labels.seen(names), self.bibliography.seen(keys) if keys else ()
