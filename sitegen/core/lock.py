"""One build at a time for each output folder and each cache.

`python build.py serve` rebuilding while the author runs `python build.py`
in another terminal is ordinary; without a lock the two swapped half-written
sites into place and deleted each other's staging folders. A build holds an
exclusive `flock` on the file `lock` in its cache (which records its pid)
and on the folder that holds its output (where its staging folders live;
locking the folder itself leaves no file behind), always in that order, so
two builds cannot wait on each other. A second build waits, saying which process it waits for.
The kernel releases a lock when the last descriptor of it closes, however
its process ends, so a killed build leaves no stale lock; the lab host, a new
program, holds no copy of them (they are opened close-on-exec), so that no lab
can keep holding them.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from pathlib import Path

from .cachedir import LOCK


@contextlib.contextmanager
def held(path: Path, what: str):
    """Hold an exclusive lock on the folder or file `path` (a file is created, and
    records the holder's pid), waiting for whoever holds it."""
    if path.is_dir():
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = "" if path.is_dir() else os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            print(f"waiting: another build of this project is running{f' (pid {holder})' if holder else ''} "
                  f"with {what}; this one starts when it ends", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        if not path.is_dir():
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)                 # releases the lock


@contextlib.contextmanager
def one_build(out: Path, cache: Path):
    """The locks of a build that writes `out` and uses `cache`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with held(cache / LOCK, f"the cache {cache}"), held(out.parent, f"the output folder {out}"):
        yield

