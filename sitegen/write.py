"""Phase 6: the only code that touches the output folder.

Files go to a staging folder beside the output first; only when all are
written is it swapped in for the old output, so a failed or killed build
leaves the last good site whole. The build replaces only what it made: every
output folder it writes holds a mark (`.sitegen-output`), and a non-empty
folder without it is refused, as are folders that hold anything else of
value (the project, a source folder, home, /). Beside the output it touches
only its own staging folders (`.<name>.sitegen-tmp-*`, marked too), and
clears those a killed build left, under the build's lock.
"""
from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .artifacts import file_state, settled
from .errors import BuildError, Problem
from .sources import SOURCES

MARK = ".sitegen-output"
MARK_TEXT = (b"This folder is made by `python build.py`, which replaces it whole on every build.\n"
             b"Keep nothing of your own here.\n")
# Never an output folder, nor inside one: the sources and what else the project keeps.
PROTECTED = (*SOURCES, "tests", "sitegen", "tools", ".git")


def check_output_folder(out: Path, root: Path) -> Path:
    out = Path(os.path.abspath(out))
    forbidden = {Path("/"), Path.home().resolve(), root} | {root / name for name in PROTECTED}
    if out.resolve() in forbidden or out.resolve() in root.parents:
        raise BuildError(Problem(str(out), 0, "refusing to use this folder as the output: the build "
                                              "replaces it whole; choose a folder of its own, e.g. dist"))
    for source in (root / name for name in PROTECTED):
        if source in out.resolve().parents:
            raise BuildError(Problem(str(out), 0, f"refusing to write the site inside {source.name}/; "
                                                  "choose a folder of its own, e.g. dist"))
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise BuildError(Problem(str(out), 0, "the output path exists and is not a plain folder"))
    return out


def check_replaceable(out: Path) -> None:
    """Refuse to replace a non-empty folder that the build did not make (call with the lock held)."""
    if out.is_dir() and not (out / MARK).is_file() and any(out.iterdir()):
        raise BuildError(Problem(str(out), 0, f"this folder holds files the build did not make (it has no "
                                              f"{MARK}), and a build replaces its output folder whole: "
                                              "choose a new or empty folder with --out, or move the files away"))


def _staging_prefix(out: Path) -> str:
    return f".{out.name}.sitegen-tmp-"


def _ours(folder: Path) -> bool:
    """A staging folder of ours: marked, or empty (made but killed before it was marked)."""
    return folder.is_dir() and not folder.is_symlink() and ((folder / MARK).is_file() or not any(folder.iterdir()))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one atomic step (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    if ctypes.get_errno() in (errno.ENOSYS, errno.EINVAL, errno.EPERM):
        return False
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(a))


def recover(out: Path) -> None:
    """Clear what a killed build left beside the output: its own staging folders only
    (call with the lock held: then no other build is using them)."""
    old = out.with_name(_staging_prefix(out) + "old")
    if not out.exists() and _ours(old) and (old / MARK).is_file():   # killed between the fallback's renames
        os.replace(old, out)
    for stale in out.parent.glob(_staging_prefix(out) + "*"):
        if _ours(stale):
            shutil.rmtree(stale, ignore_errors=True)


@dataclass(frozen=True)
class Stored:
    """A file published as it is kept (a lab's figure or download in the cache), by its hash:
    copied, or linked from the last output when that holds it unchanged; never read into memory."""
    path: Path
    sha256: str
    size: int


def size_of(data: bytes | Stored) -> int:
    return data.size if isinstance(data, Stored) else len(data)


def _intact(path: Path, recorded) -> bool:
    """The file is as the last build left it: [sha256, *file_state] recorded after its last write."""
    try:
        state = file_state(path)
    except OSError:
        return False
    return list(state) == recorded[1:] and settled([state])


def output_intact(out: Path, recorded: dict) -> bool:
    """The output folder holds exactly the files the last build wrote (`recorded`: its write_site
    result), each unchanged: by its state where that settled, else by its hash."""
    if not out.is_dir():
        return False
    found = {p.relative_to(out).as_posix(): p for p in out.rglob("*") if p.is_file()}
    return found.keys() == recorded.keys() and all(
        _intact(path, recorded[rel]) or hashlib.sha256(path.read_bytes()).hexdigest() == recorded[rel][0]
        for rel, path in found.items())


def write_site(files: dict[str, bytes | Stored], out: Path, last: dict | None = None) -> dict[str, list]:
    """Write every file into a staging folder beside `out`, then swap it in at once; returns
    each file's [sha256, *file_state] for the next build (`last`: what this returned then).

    A file the last build wrote and that is unchanged in `out` is linked from there, not
    written again. With an atomic exchange there is no moment without a complete `out`; a
    build killed at any point leaves the previous site as it was.
    """
    last = last or {}
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=_staging_prefix(out), dir=out.parent))
    hashes = {}
    try:
        try:
            (staging / MARK).write_bytes(MARK_TEXT)
            folders = {staging}
            for rel in sorted(files):
                data = files[rel]
                target = staging / rel
                if ".." in rel.split("/") or rel.startswith("/"):
                    raise BuildError(Problem(rel, 0, "output path leaves the output folder"))
                if target.parent not in folders:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    folders.update([target.parent, *target.parent.parents])
                hashes[rel] = data.sha256 if isinstance(data, Stored) else hashlib.sha256(data).hexdigest()
                if rel in last and last[rel][0] == hashes[rel] and _intact(out / rel, last[rel]):
                    os.link(out / rel, target)
                elif isinstance(data, Stored):
                    shutil.copyfile(data.path, target)
                else:
                    target.write_bytes(data)
        except OSError as exc:          # a full disk names no file: name the folder the author chose
            exc.filename = exc.filename if exc.filename and ".sitegen-tmp-" not in str(exc.filename) else str(out)
            raise
        os.chmod(staging, 0o755)
        if not out.exists():
            os.replace(staging, out)
        elif not _exchange(staging, out):        # no atomic exchange here: two renames
            old = out.with_name(_staging_prefix(out) + "old")
            os.replace(out, old)
            os.replace(staging, out)
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)   # after an exchange: the previous site
    hashes[MARK] = hashlib.sha256(MARK_TEXT).hexdigest()
    # Taken after the previous site is gone: dropping a link to a file changes its ctime.
    return {rel: [digest, *file_state(out / rel)] for rel, digest in sorted(hashes.items())}
