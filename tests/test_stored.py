"""A file's state changes whenever its bytes do, even when its modification time is put back."""
import os
import time

from sitegen.stored import Stored, bytes_of, file_state, settled, sha256_of, size_of


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
