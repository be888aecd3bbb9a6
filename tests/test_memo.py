"""The memo: remembered values and kept files, by key, and dropped when a build no longer uses them."""
import hashlib
from pathlib import Path

import pytest

from sitegen.core.errors import DamagedFile
from sitegen.core.memo import Memo
from sitegen.core.stored import Stored


def test_a_kept_file_comes_back_by_its_hash_without_being_made_again(tmp_path):
    memo = Memo(tmp_path / "memo")
    made = []
    page = "<p>第一页</p>".encode()
    first = memo.file("page", ("key",), lambda: made.append(1) or page)
    again = Memo(tmp_path / "memo").file("page", ("key",), lambda: made.append(1) or page)
    assert made == [1] and isinstance(again, Stored) and again == first
    assert again.sha256 == hashlib.sha256(page).hexdigest() and again.size == len(page) and again.read() == page
    assert Memo(tmp_path / "memo").file("page", ("other key",)) is None
    assert Memo(None).file("page", ("key",), lambda: page) == page       # no memo folder: the bytes


def test_a_blob_cut_short_is_never_read_as_it_is_and_is_made_again_when_checked(tmp_path):
    memo = Memo(tmp_path / "memo")
    kept = memo.file("page", ("key",), lambda: b"0123456789")
    Path(kept.path).write_bytes(b"01234")
    with pytest.raises(DamagedFile):
        Memo(tmp_path / "memo").file("page", ("key",), lambda: b"0123456789").read()
    checking = Memo(tmp_path / "memo", verify=True)
    assert checking.file("page", ("key",)) is None
    assert checking.file("page", ("key",), lambda: b"0123456789").read() == b"0123456789"


def test_what_a_build_did_not_use_is_dropped(tmp_path):
    old = Memo(tmp_path / "memo")
    stale = old.file("page", ("old",), lambda: b"old page")
    old.value("yaml", ("old",), lambda: {"a": 1})
    new = Memo(tmp_path / "memo")
    fresh = new.file("page", ("new",), lambda: b"new page")
    new.value("yaml", ("new",), lambda: {"b": 2})
    new.prune()
    assert Path(fresh.path).exists() and not Path(stale.path).exists()
    assert len(list((tmp_path / "memo/page").iterdir())) == 1 and len(list((tmp_path / "memo/yaml").iterdir())) == 1


def test_unused_entries_are_swept_once_more_than_a_few_were_written_or_builds_ran_since_the_last_sweep(tmp_path, monkeypatch):
    from sitegen.core import memo as memo_module
    monkeypatch.setattr(memo_module, "SWEEP_SLACK", 3)
    monkeypatch.setattr(memo_module, "SWEEP_EVERY", 4)

    def build(n: int, written: int) -> int:
        """A build that writes `written` entries of its own, or else uses the last one; how many are left."""
        memo = Memo(tmp_path / "memo")
        for extra in range(written):
            memo.data("search", (n, extra), lambda: b"sections")
        if not written:
            assert memo.data("search", (4, 0)) == b"sections"
        memo.prune()
        return len(list((tmp_path / "memo/search").iterdir()))

    assert build(0, 1) == 1             # the first build sweeps (there was no record of one)
    assert build(1, 1) == 2             # one entry written since: the last build's is left
    assert build(2, 2) == 4             # three written since: still within the slack
    assert build(3, 1) == 1             # four: swept, only this build's entry is left
    assert build(4, 1) == 2             # one written since
    assert [build(n, 0) for n in (5, 6)] == [2, 2]      # none written: left, until...
    assert build(7, 0) == 1             # ...the fourth build since the sweep sweeps



def test_the_next_build_reads_what_the_last_one_used_from_one_pack_not_a_file_each(tmp_path, monkeypatch):
    import builtins
    first = Memo(tmp_path / "memo")
    first.value("yaml", ("a",), lambda: {"a": 1})
    first.data("search", ("b",), lambda: b"sections")
    first.prune()
    opened, real_open = [], builtins.open
    monkeypatch.setattr(builtins, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    second = Memo(tmp_path / "memo")
    assert second.value("yaml", ("a",)) == {"a": 1} and second.data("search", ("b",)) == b"sections"
    assert second.value("yaml", ("new",)) is None
    assert [p.rsplit("/", 2)[-2:] for p in opened] == [["memo", "pack"], ["yaml", opened[-1].rsplit("/", 1)[-1]]]


def test_a_damaged_pack_or_an_entry_it_lacks_is_read_from_its_own_file(tmp_path):
    first = Memo(tmp_path / "memo")
    first.value("yaml", ("a",), lambda: {"a": 1})
    first.prune()
    (tmp_path / "memo/pack").write_bytes(b"\x80\x05 cut short")
    assert Memo(tmp_path / "memo").value("yaml", ("a",)) == {"a": 1}
    first.value("yaml", ("b",), lambda: {"b": 2})      # written after the pack: only in its file
    assert Memo(tmp_path / "memo").value("yaml", ("b",)) == {"b": 2}


def test_the_pack_is_written_again_only_when_it_differs_by_more_than_a_few_entries(tmp_path):
    from sitegen.core.memo import PACK_SLACK
    first = Memo(tmp_path / "memo")
    for n in range(PACK_SLACK + 10):
        first.data("search", (n,), lambda: b"sections %d" % n)
    first.prune()
    before = (tmp_path / "memo/pack").stat()
    edit = Memo(tmp_path / "memo")          # a prose edit: all of them, and one new
    for n in range(PACK_SLACK + 11):
        assert edit.data("search", (n,), lambda: b"sections %d" % n) == b"sections %d" % n
    edit.prune()
    after = (tmp_path / "memo/pack").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert Memo(tmp_path / "memo").data("search", (PACK_SLACK + 10,)) == b"sections %d" % (PACK_SLACK + 10)
    fewer = Memo(tmp_path / "memo")         # most of the pack is no longer used: it holds the rest
    for n in range(5):
        fewer.data("search", (n,))
    fewer.prune()
    last = Memo(tmp_path / "memo")
    last.data("search", (0,))
    assert last.packed == fewer.looked_up and len(last.packed) == 5


def test_a_pack_half_written_by_a_killed_build_is_cleared(tmp_path):
    from sitegen.core.memo import TEMPORARY, clear_temporaries
    (tmp_path / "memo").mkdir()
    (tmp_path / "memo" / f"{TEMPORARY}pack").write_bytes(b"half")
    clear_temporaries(tmp_path)
    assert list((tmp_path / "memo").iterdir()) == []


def test_a_pack_entry_that_cannot_be_used_is_replaced_in_the_next_pack(tmp_path):
    import pickle
    first = Memo(tmp_path / "memo")
    first.value("yaml", ("a",), lambda: {"a": 1})
    first.prune()
    pack = pickle.loads((tmp_path / "memo/pack").read_bytes())
    (name,) = pack
    pack[name] = b"not a pickle"                  # as if its class had changed since
    (tmp_path / "memo/pack").write_bytes(pickle.dumps(pack))
    second = Memo(tmp_path / "memo")
    made = []
    assert second.value("yaml", ("a",), lambda: made.append(1) or {"a": 1}) == {"a": 1} and made == [1]
    second.prune()
    third = Memo(tmp_path / "memo")
    assert third.value("yaml", ("a",), lambda: made.append(1) or {"a": 1}) == {"a": 1} and made == [1]


def test_what_a_build_records_is_given_to_the_next_only_in_the_same_context_and_if_it_finished(tmp_path):
    memo = Memo(tmp_path / "memo")
    memo.record("pages", "context A", {"content/a.md": ("digest", "page/name")})
    memo.prune()                                     # the build finished: its records are written
    unfinished = Memo(tmp_path / "memo")
    assert unfinished.recorded("pages", "context A") == {"content/a.md": ("digest", "page/name")}
    assert unfinished.recorded("pages", "context B") == {} and unfinished.recorded("search", "context A") == {}
    unfinished.record("pages", "context A", {})      # a build that failed never prunes: nothing recorded
    assert Memo(tmp_path / "memo").recorded("pages", "context A") == {"content/a.md": ("digest", "page/name")}


def test_a_blob_changed_in_place_to_other_bytes_of_the_same_size_is_never_read_as_it_is(tmp_path):
    memo = Memo(tmp_path / "memo")
    kept = memo.file("page", ("key",), lambda: b"0123456789")
    memo.prune()
    with open(kept.path, "r+b") as handle:           # as an editor that writes in place, or a disk error
        handle.write(b"X")
    again = Memo(tmp_path / "memo")
    with pytest.raises(DamagedFile):
        again.file("page", ("key",)).read()
    checking = Memo(tmp_path / "memo", verify=True)
    assert checking.file("page", ("key",)) is None
    assert checking.file("page", ("key",), lambda: b"0123456789").read() == b"0123456789"
    assert Memo(tmp_path / "memo").file("page", ("key",)).read() == b"0123456789"      # written again


def test_every_entry_and_record_is_keyed_on_the_generator_and_the_packages_that_make_bytes(tmp_path, monkeypatch):
    """By construction: no phase names them in its key, and none can forget them."""
    from sitegen.core import memo as memo_module
    first = Memo(tmp_path / "memo")
    first.data("page", ("key",), lambda: b"made by this generator")
    first.record("phase", "context", {"item": ("made",)})
    first.prune()
    assert Memo(tmp_path / "memo").data("page", ("key",)) == b"made by this generator"
    for fake in ("generator_digest", "package_version"):
        real = getattr(memo_module, fake)
        monkeypatch.setattr(memo_module, fake, lambda *args, real=real: real(*args) + "-changed")
        memo_module.makers_digest.cache_clear()
        try:
            later = Memo(tmp_path / "memo")
            assert later.data("page", ("key",)) is None, fake
            assert later.recorded("phase", "context") == {}, fake
        finally:
            monkeypatch.undo()
            memo_module.makers_digest.cache_clear()
    assert Memo(tmp_path / "memo").recorded("phase", "context") == {"item": ("made",)}
