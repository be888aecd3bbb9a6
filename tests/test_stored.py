"""A file's state changes whenever its bytes do, even when its modification time is put back."""
import os
import time

from sitegen.core.stored import Stored, bytes_of, file_state, settled, sha256_of, size_of


def test_a_write_shows_in_the_state_even_with_its_time_put_back(tmp_path):
    path = tmp_path / "results.json"
    path.write_bytes(b'{"x": 1}')
    time.sleep(0.15)
    before, stat = file_state(path), path.stat()
    assert settled([before])
    path.write_bytes(b'{"x": 7}')                                  # same size, other bytes
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))         # and the old modification time
    after = file_state(path)
    assert after[:2] == before[:2] and after != before                 # the change time tells
    assert not settled([after])                                        # and is too recent to trust yet


def test_stored_and_bytes_answer_alike(tmp_path):
    (tmp_path / "a").write_bytes(b"abc")
    stored = Stored(tmp_path / "a", sha256_of(b"abc"), 3)
    assert (size_of(stored), sha256_of(stored), bytes_of(stored)) == (size_of(b"abc"), sha256_of(b"abc"), b"abc")


def test_a_whole_second_time_settles_only_two_seconds_later():
    """Some file systems keep whole seconds, FAT two: a write later in that second leaves the same time."""
    from sitegen.core.stored import SETTLED_NS, settled_since
    now = 1_790_000_010_000_000_000
    before = now - SETTLED_NS
    assert settled_since(now - 500_000_000 + 1, before)                # fine stamps: 0.1 s is enough
    assert not settled_since(now - 1_000_000_000, before)              # a whole second: not after one
    assert not settled_since(now - 2_000_000_000, before)
    assert settled_since(now - 3_000_000_000, before)
