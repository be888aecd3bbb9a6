"""core/incremental.py: a phase's records, reused only when made of the same, in the same context."""
from __future__ import annotations

import builtins

from sitegen.core.incremental import Phase, Record
from sitegen.core.memo import Memo


def _last_build(folder, context="context", failing=False):
    """A build whose phase made a.html and b.html (their results in entries), then pruned."""
    memo = Memo(folder)
    memo.data("search", ("a",), lambda: b"[a]")
    memo.data("search", ("b",), lambda: b"[b]")
    memo.data("search", ("unused",), lambda: b"[]")
    try:
        with Phase(memo, "search", context) as phase:
            phase.made("a.html", ("sha a",), ("a",), summary=b"start a")
            phase.made("b.html", ("sha b",), ("b",))
            if failing:
                raise ValueError("the phase failed")
    except ValueError:
        pass
    memo.prune()


def test_a_record_is_reused_only_if_made_of_the_same_and_keeps_its_entry_unread(tmp_path, monkeypatch):
    _last_build(tmp_path / "memo")
    memo = Memo(tmp_path / "memo")
    opened, real_open = [], builtins.open
    with Phase(memo, "search", "context") as phase:
        monkeypatch.setattr(builtins, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
        record = phase.reuse("a.html", ("sha a",))
        assert record == Record(("sha a",), memo.name("search", ("a",)), b"start a")
        assert phase.reuse("b.html", ("another sha",)) is None and phase.reuse("c.html", ("sha a",)) is None
        assert opened == [] and memo.looked_up == {}        # neither the pack nor the entry read
        monkeypatch.undo()
    memo.prune(sweep=True)      # a.html's entry was used: kept; b's and the unused one: dropped
    assert sorted(p.name for p in (tmp_path / "memo/search").iterdir()) == [record.entry.partition("/")[2]]
    again = Memo(tmp_path / "memo")
    with Phase(again, "search", "context") as phase:    # what this build reused is recorded for the next
        assert phase.reuse("a.html", ("sha a",)) == record and phase.reuse("b.html", ("sha b",)) is None


def test_records_are_reused_in_the_same_context_only(tmp_path):
    _last_build(tmp_path / "memo")
    with Phase(Memo(tmp_path / "memo"), "search", "another context") as phase:
        assert phase.reuse("a.html", ("sha a",)) is None


def test_a_phase_that_failed_records_nothing(tmp_path):
    _last_build(tmp_path / "memo")                          # a build that succeeded
    _last_build(tmp_path / "memo", failing=True)            # and one whose phase failed after making a.html
    with Phase(Memo(tmp_path / "memo"), "search", "context") as phase:
        assert phase.reuse("a.html", ("sha a",)) is None    # (not even the first build's: records are replaced whole)


def test_without_a_memo_folder_or_a_context_nothing_is_reused_or_recorded(tmp_path):
    with Phase(Memo(None), "search", "context") as phase:
        assert phase.made("a.html", ("sha a",), ("a",)) is None and phase.reuse("a.html", ("sha a",)) is None
    memo = Memo(tmp_path / "memo")
    with Phase(memo, "pages", None) as phase:               # (names its entries, records nothing)
        assert phase.made("a.html", ("sha a",), ("a",), namespace="page").entry == memo.name("page", ("a",))
    assert memo.records == {}


def test_an_item_whose_inputs_it_chose_is_reused_while_what_it_read_of_them_is_as_it_was(tmp_path):
    """A page's breadcrumbs name the pages it reads: its record's summary says which, and `made` is
    worked out from that, so that only the pages it read decide whether it is reused."""
    titles = {"a.md": "A", "b.md": "B", "c.md": "C"}
    memo = Memo(tmp_path / "memo")
    with Phase(memo, "pages", "context") as phase:
        phase.made("c.md", ("sha c", ("A",)), ("c",), summary=("a.md",))      # c.md showed a.md's title
    memo.prune()
    asked = []

    def made(read):
        asked.append(read)
        return "sha c", tuple(titles[rel] for rel in read)
    titles["b.md"] = "B, retitled"                          # a page c.md did not read
    with Phase(Memo(tmp_path / "memo"), "pages", "context") as phase:
        assert phase.reuse("c.md", made) == Record(("sha c", ("A",)), memo.name("pages", ("c",)), ("a.md",))
    assert asked == [("a.md",)]
    titles["a.md"] = "A, retitled"                          # the page it read
    with Phase(Memo(tmp_path / "memo"), "pages", "context") as phase:
        assert phase.reuse("c.md", made) is None
