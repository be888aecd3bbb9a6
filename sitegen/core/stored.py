"""Files the build publishes as they are kept (a lab's figure, a remembered page), and how to
tell that a file is unchanged without reading it.

A Stored file is named by its path, its SHA-256 and its size: the output can be
written, checked against Pages' limits and compared with the last build's
without its bytes ever being read. A file is unchanged while its size, times and
inode are: writing to a file changes its ctime, which no program can set back;
times are trusted only once they settled (the kernel's clock ticks in
milliseconds, so a file written in the same tick could change unseen). Some file
systems keep whole seconds (ext4 with 128-byte inodes, HFS+, many network
shares) or two (FAT): a time that is a whole second is taken to be one of
those, and settles only two seconds later.
"""
from __future__ import annotations

import collections
import os
import time

SETTLED_NS = 100_000_000
COARSE_NS = 2_000_000_000      # the coarsest time stamps kept (FAT's two seconds)


class Stored(collections.namedtuple("Stored", "path sha256 size")):
    """A file's path (str or Path), SHA-256 and size."""
    __slots__ = ()      # (not typing.NamedTuple: a no-change build imports this, and typing costs it 4 ms)

    def read(self) -> bytes:
        """Its bytes, checked against its hash as they are read (a file kept in the cache is not
        looked at until then): what was changed since it was kept is never published (DamagedFile)."""
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            data = None
        if data is None or len(data) != self.size or sha256_of(data) != self.sha256:
            from .errors import DamagedFile
            raise DamagedFile(self.path)
        return data


def size_of(data: bytes | Stored) -> int:
    return data.size if isinstance(data, Stored) else len(data)


def sha256_of(data: bytes | Stored) -> str:
    """The one way the generator hashes bytes: SHA-256, in hex (what a Stored file holds is known)."""
    if isinstance(data, Stored):
        return data.sha256
    import hashlib          # (here: a no-change build hashes nothing, and OpenSSL takes 3 ms to load)
    return hashlib.sha256(data).hexdigest()


def bytes_of(data: bytes | Stored) -> bytes:
    return data.read() if isinstance(data, Stored) else data


def file_state(path: os.PathLike | str) -> tuple[int, int, int, int]:
    """What changes whenever a file's bytes do: its size, modification and change times, and inode."""
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def files_in(folder, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """Every file under `folder` (relative POSIX path -> path), leaving out entries named in `skip`;
    as os.walk, a linked folder is neither walked nor listed (os.walk's relpath per folder costs ten
    times this)."""
    found, todo = {}, [(str(folder), "")]
    while todo:
        top, prefix = todo.pop()
        with os.scandir(top) as entries:
            for entry in entries:
                if entry.name in skip:
                    continue
                if not entry.is_dir():
                    found[prefix + entry.name] = entry.path
                elif not entry.is_symlink():
                    todo.append((entry.path, f"{prefix}{entry.name}/"))
    return found


def settled(states) -> bool:
    """Whether files in these states (file_state tuples, after a name or not) last changed long
    enough ago that a write now would show in their times."""
    before = settled_before()
    return all(settled_since(state[-2], before) for state in states)


def settled_since(ctime_ns: int, before: int) -> bool:
    """Whether a file whose ctime is `ctime_ns` has settled by `before` (settled_before()): a
    whole-second time may stand for any moment of the next two seconds."""
    return (ctime_ns + COARSE_NS if ctime_ns % 1_000_000_000 == 0 else ctime_ns) < before


def settled_before() -> int:
    """A file whose ctime is before this has settled (see settled)."""
    return time.time_ns() - SETTLED_NS
