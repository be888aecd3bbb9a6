"""The memo: remembered values and kept files, by key, and dropped when a build no longer uses them."""
import hashlib

from sitegen.memo import Memo
from sitegen.stored import Stored


def test_a_kept_file_comes_back_by_its_hash_without_being_made_again(tmp_path):
    memo = Memo(tmp_path / "memo")
    made = []
    page = "<p>第一页</p>".encode()
    first = memo.kept("page", ("key",), lambda: made.append(1) or page)
    again = Memo(tmp_path / "memo").kept("page", ("key",), lambda: made.append(1) or page)
    assert made == [1] and isinstance(again, Stored) and again == first
    assert again.sha256 == hashlib.sha256(page).hexdigest() and again.size == len(page) and again.read() == page
    assert Memo(tmp_path / "memo").kept("page", ("other key",)) is None
    assert Memo(None).kept("page", ("key",), lambda: page) == page       # no memo folder: the bytes


def test_a_blob_cut_short_is_made_again(tmp_path):
    memo = Memo(tmp_path / "memo")
    kept = memo.keep("page", ("key",), b"0123456789")
    kept.path.write_bytes(b"01234")
    assert Memo(tmp_path / "memo").kept("page", ("key",), lambda: b"0123456789").read() == b"0123456789"


def test_what_a_build_did_not_use_is_dropped(tmp_path):
    old = Memo(tmp_path / "memo")
    stale = old.keep("page", ("old",), b"old page")
    old.remember("yaml", ("old",), lambda: {"a": 1})
    new = Memo(tmp_path / "memo")
    fresh = new.keep("page", ("new",), b"new page")
    new.remember("yaml", ("new",), lambda: {"b": 2})
    new.prune()
    assert fresh.path.exists() and not stale.path.exists()
    assert len(list((tmp_path / "memo/page").iterdir())) == 1 and len(list((tmp_path / "memo/yaml").iterdir())) == 1
