"""What a phase of the build found item by item, for the next build to take as it is.

Every phase that works page by page (parse, check, render, index, the math font's characters, the
HTML check) asks the same of the last build: was this item made of the same things, in the same
context? Then its result is what the last build made, and not even its key is worked out again.
That question, and the bookkeeping around it, is written once, here:

    with Phase(memo, "page-check", context) as phase:
        for page in pages:
            if phase.reuse(page.source, (page.output, page.digest)) is None:
                ... check it ...
                phase.made(page.source, (page.output, page.digest), key)

A Record holds what the item was made of (`made`: cheap to compare, such as its text's hash), the
memo entry that holds its result (`entry`: a reused record counts it as used, so the memo keeps it),
and what later builds need of it without reading that entry (`summary`). The context holds all that
every item of the phase depends on (the site's configuration, what is published where); the memo
adds the generator's code and the packages' versions to it (Memo.recorded), so that no phase can
forget them. A phase records only when its loop ends without an error.

The words used here and across the generator (snapshot, entry, record, phase, lab entry, ...) are
each one concept, defined in docs/glossary.md.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple

if TYPE_CHECKING:
    from .memo import Memo


class Record(NamedTuple):
    """One item as a build found it (see the module's docstring). Kept in the records file as a plain
    tuple, which pickles in half the time (a large course has tens of thousands)."""
    made: tuple
    entry: str
    summary: object = None


class Phase:
    """One phase's records: the last build's, in this `context`, and this build's (written on exit).
    Without a context (None) it reuses and records nothing, but names the entries items are made in."""

    def __init__(self, memo: Memo | None, namespace: str, context: str | None = ""):
        self.memo, self.namespace, self.context = memo, namespace, context
        found = memo.recorded(namespace, context) if memo is not None and context is not None else {}
        self.last: dict[str, tuple] = found         # item -> (made, entry, summary)
        self.now: dict[str, tuple] = {}
        self.reused: list[str] = []         # the entries of the records reused

    def __enter__(self) -> Phase:
        return self

    def __exit__(self, kind, *_) -> None:
        if kind is None and self.memo is not None and self.context is not None:
            self.memo.record(self.namespace, self.context, self.now, self.reused)

    def reuse(self, item: str, made: tuple | Callable[[object], tuple]) -> Record | None:
        """The last build's record of `item` if it was made of `made`, else None. Its entry is counted
        as used (not read: a phase that needs its bytes looks it up) and the record kept for the next
        build. When what an item is made of includes what it read of other items, which the item
        itself decides (the pages its breadcrumbs name), `made` is a function of what it read last
        time (its record's summary) that gives what those parts are now: the record is reused while
        every one of them is as it was."""
        found = self.last.get(item)
        if found is None:
            return None
        if callable(made):
            made = made(found[2])
        if found[0] != made:
            return None
        self.reused.append(found[1])
        self.now[item] = found
        return Record(*found)

    def made(self, item: str, made: tuple, key: tuple, summary: object = None, namespace: str | None = None) -> Record | None:
        """Record `item`, made now of `made`, its result in the entry of `key` (in the phase's namespace
        unless `namespace` names another); None when there is no memo folder to keep it in."""
        entry = self.memo.name(namespace or self.namespace, key) if self.memo is not None else None
        if entry is None:
            return None
        self.now[item] = (made, entry, summary)
        return Record(made, entry, summary)

    def keep(self, item: str, record: Record) -> None:
        """Record `item` as `record` says (found by its key rather than by reuse)."""
        self.now[item] = tuple(record)
