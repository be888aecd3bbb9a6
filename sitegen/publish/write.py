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
import os
import shutil
from pathlib import Path

from ..core.errors import BuildError, Problem
from ..core.sources import SOURCES
from ..core.stored import Stored, bytes_of, file_state, files_in, settled_before, settled_since, sha256_of

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
    if os.path.ismount(out):
        raise BuildError(Problem(str(out), 0, "the output folder is a mount point, and a build replaces its output "
                                              "folder whole (a new one renamed into its place): build into a folder "
                                              f"inside it (--out {out.name}/site) or in another place"))
    return out


def check_replaceable(out: Path) -> None:
    """Refuse to replace a non-empty folder that the build did not make (call with the lock held)."""
    if out.is_dir() and not (out / MARK).is_file() and any(out.iterdir()):
        raise BuildError(Problem(str(out), 0, f"this folder holds files the build did not make (it has no "
                                              f"{MARK}), and a build replaces its output folder whole: "
                                              "choose a new or empty folder with --out, or move the files away"))


def _staging_prefix(out: Path) -> str:
    return f".{out.name}.sitegen-tmp-"


def written_folders(out: Path) -> tuple[Path, ...]:
    """Every folder the build writes the site into: the output, its spare, its staging folders."""
    return out, _spare(out), out.with_name(_staging_prefix(out) + "next"), out.with_name(_staging_prefix(out) + "old")


def _marked(folder: Path) -> bool:
    """A folder the build made and marked (a site, or a staging folder once marked)."""
    return folder.is_dir() and not folder.is_symlink() and (folder / MARK).is_file()


def _ours(folder: Path) -> bool:
    """A staging folder of ours: marked, or empty (made but killed before it was marked)."""
    return _marked(folder) or (folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()))


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
    if not out.exists() and _marked(old):         # killed between the fallback's renames
        os.replace(old, out)
    for stale in out.parent.glob(_staging_prefix(out) + "*"):
        if _ours(stale):
            shutil.rmtree(stale, ignore_errors=True)
        elif stale.is_dir() and not any(stale.iterdir()):
            stale.rmdir()                   # (killed before it marked it)
        elif stale in written_folders(out):
            raise BuildError(Problem(str(stale), 0, "the build stages the site here, but this holds files it did "
                                                    "not make (it has no " + MARK + "): move them away"))


def _intact(path, recorded, before: int) -> bool:
    """The file is as the last build left it: [sha256, *file_state] recorded after its last write,
    in a state that settled by `before` (stored.settled_before())."""
    try:
        state = file_state(path)
    except OSError:
        return False
    return settled_since(state[2], before) and state == tuple(recorded[1:])


def output_intact(out: Path, recorded: dict) -> dict | None:
    """The output folder holds exactly the files the last build wrote (`recorded`: its write_site
    result), each unchanged: by its state where that settled, else by its hash. Returns their records
    with the states they are in now (a file touched, not changed, is in another), else None."""
    if not out.is_dir():
        return None
    found, before = files_in(out), settled_before()
    if found.keys() != recorded.keys():
        return None
    now = {}
    for rel, path in found.items():
        if _intact(path, recorded[rel], before):
            now[rel] = recorded[rel]
        else:
            with open(path, "rb") as handle:
                data = handle.read()
            if sha256_of(data) != recorded[rel][0]:
                return None
            now[rel] = [recorded[rel][0], *file_state(path)]
    return now


def last_output(out: Path, recorded: dict, rel: str) -> bytes | None:
    """The bytes of `rel` in the output folder, if it is as the last build left it (`recorded`: its
    write_site result): by its state where that settled, else by its hash; else None."""
    path = f"{out}/{rel}"
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if rel not in recorded or not (_intact(path, recorded[rel], settled_before()) or sha256_of(data) == recorded[rel][0]):
        return None
    return data


def _spare(out: Path) -> Path:
    """The site before the current one, kept beside it to be brought up to date by the next build
    (outside the staging prefix: recover() leaves it)."""
    return out.with_name(f".{out.name}.sitegen-spare")


def _keep(previous: Path, kept: Path) -> None:
    """The site just replaced becomes the spare; unless something not the build's holds that name
    (the build's own spare was moved or removed before): then it is not kept, and that is left alone."""
    if os.path.lexists(kept):
        shutil.rmtree(previous)
    else:
        os.replace(previous, kept)


def _link(source: str, target: str) -> bool:
    """A hard link to `source` at `target`, or, where the file system refuses links (FAT, some
    network shares and containers' mounts), a copy: False then."""
    try:
        os.link(source, target)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
    shutil.copyfile(source, target)
    return False


def write_site(files: dict[str, bytes | Stored], out: Path, last: dict | None = None,
               spare: dict | None = None) -> tuple[dict[str, list], dict[str, list]]:
    """Make the new site in a staging folder beside `out`, then swap it in at once.

    Returns each file's [sha256, *file_state] in the new `out` and in the spare (the site it
    replaced, kept beside it), for the next build: `last` and `spare` are what this returned
    then. The staging folder is the spare brought up to date: a file is left as it is when the
    spare holds it unchanged, linked from `out` when that does, else written; nothing is ever
    written into a file that exists (a link to it is replaced), so neither site changes under
    the other. With an atomic exchange there is no moment without a complete `out`; a build
    killed at any point leaves the previous site as it was (and recover() clears its staging).
    """
    last, spare = last or {}, spare or {}
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(_staging_prefix(out) + "next")
    if _ours(staging):                                  # what a killed build left (recover() clears it too)
        shutil.rmtree(staging)
    kept = _spare(out)
    if spare and _marked(kept):
        os.replace(kept, staging)
        present = files_in(staging)
        present.pop(MARK)
    else:
        if _ours(kept):
            shutil.rmtree(kept)
        staging.mkdir()
        spare, present = {}, {}
    out_at, staging_at = str(out), str(staging)
    before = settled_before()
    # A file of the current site is looked at only to link to it (where the spare's copy will not
    # do): whether it is exactly as the last build left it, before any link to it.
    linked = set()
    hashes, touched = {}, set(present.keys() - files.keys())    # touched: names whose files were replaced
    try:
        if not (staging / MARK).is_file() or (staging / MARK).read_bytes() != MARK_TEXT:   # (changed by hand)
            (staging / MARK).unlink(missing_ok=True)                # (it may be a link to the live one)
            (staging / MARK).write_bytes(MARK_TEXT)
        for rel in touched:                             # what the new site no longer holds
            os.unlink(present[rel])
            folder = os.path.dirname(present[rel])
            while folder != staging_at and not os.listdir(folder):    # and the folders it leaves empty
                os.rmdir(folder)
                folder = os.path.dirname(folder)
        folders = {f"{staging_at}/{rel.rpartition('/')[0]}".rstrip("/") for rel in present.keys() & files.keys()}
        folders.add(staging_at)
        for rel in sorted(files):
            data = files[rel]
            if rel.startswith("/") or ".." in rel and ".." in rel.split("/"):
                raise BuildError(Problem(rel, 0, "output path leaves the output folder"))
            target = f"{staging_at}/{rel}"
            hashes[rel] = sha256_of(data)
            if rel in present:
                if rel in spare and spare[rel][0] == hashes[rel] and _intact(target, spare[rel], before):
                    continue                            # the spare holds it as it should be
                os.unlink(target)
            elif os.path.isdir(target):                 # a folder there, a file now
                shutil.rmtree(target)
            touched.add(rel)
            parent = os.path.dirname(target)
            if parent not in folders:
                os.makedirs(parent, exist_ok=True)
                folders.add(parent)
            if rel in last and last[rel][0] == hashes[rel] and _intact(f"{out_at}/{rel}", last[rel], before):
                if _link(f"{out_at}/{rel}", target):
                    linked.add(rel)
            else:
                with open(target, "wb") as handle:
                    handle.write(bytes_of(data))      # (a Stored file checked against its hash as it is read)
    except OSError as exc:          # a full disk names no file: name the folder the author chose
        shutil.rmtree(staging, ignore_errors=True)
        exc.filename = exc.filename if exc.filename and ".sitegen-tmp-" not in str(exc.filename) else str(out)
        raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    os.chmod(staging, 0o755)
    if not out.exists():
        os.replace(staging, out)
    elif _exchange(staging, out):
        _keep(staging, kept)                            # the previous site: the next build's spare
    else:                                               # no atomic exchange here: two renames
        old = out.with_name(_staging_prefix(out) + "old")
        os.replace(out, old)
        os.replace(staging, out)
        _keep(old, kept)
    hashes[MARK] = sha256_of(MARK_TEXT)
    touched.add(MARK)
    # A file left as it was keeps the state just checked; one replaced (or sharing its inode with
    # one replaced, in the other site) is looked at again: a link made or dropped changes its ctime.
    records = {rel: [digest, *(file_state(f"{out_at}/{rel}") if rel in touched else spare[rel][1:])]
               for rel, digest in sorted(hashes.items())}
    # The site just replaced, now the spare, as the last build recorded it: the next build looks at
    # each file's state before it takes one as so. A file linked to just now is known to be so,
    # in its new state; one not linked but replaced in the new site was not looked at.
    spare_records = {}
    if _marked(kept):
        for rel in sorted(last.keys() - {MARK}):
            if rel not in touched:
                spare_records[rel] = last[rel]
            elif rel in linked:
                spare_records[rel] = [last[rel][0], *file_state(f"{kept}/{rel}")]
    return records, spare_records
