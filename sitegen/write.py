"""Phase 6: the only code that touches the output folder.

Files go to a sibling `<out>.tmp-*` folder first; only when all are written
is it swapped in for the old output, so a failed or killed build leaves the
last good site whole. It refuses output folders that hold anything else of
value (the project, a source folder, home, /).
"""
from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from pathlib import Path

from .errors import BuildError, Problem

SOURCE_FOLDERS = ("content", "compute", "templates", "static", "tests", "sitegen", ".git")


def check_output_folder(out: Path, root: Path) -> Path:
    out = Path(os.path.abspath(out))
    forbidden = {Path("/"), Path.home().resolve(), root} | {root / name for name in SOURCE_FOLDERS}
    if out.resolve() in forbidden or out.resolve() in root.parents:
        raise BuildError(Problem(str(out), 0, "refusing to use this folder as the output: the build "
                                              "replaces it whole; choose a folder of its own, e.g. dist"))
    for source in (root / name for name in SOURCE_FOLDERS):
        if source in out.resolve().parents:
            raise BuildError(Problem(str(out), 0, f"refusing to write the site inside {source.name}/; "
                                                  "choose a folder of its own, e.g. dist"))
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise BuildError(Problem(str(out), 0, "the output path exists and is not a plain folder"))
    return out


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
    """Clear what a killed build left beside the output: its own staging folders only."""
    old = out.with_name(out.name + ".old")
    if old.is_dir() and not out.exists():     # killed between the two renames of the fallback
        os.replace(old, out)
    for stale in [old, *out.parent.glob(out.name + ".tmp-*")]:
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)


def write_site(files: dict[str, bytes], out: Path) -> None:
    """Write every file into a staging folder beside `out`, then swap it in at once.

    With an atomic exchange there is no moment without a complete `out`; a
    build killed at any point leaves the previous site as it was.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    recover(out)
    staging = Path(tempfile.mkdtemp(prefix=out.name + ".tmp-", dir=out.parent))
    try:
        for rel in sorted(files):
            target = staging / rel
            if staging not in target.resolve().parents:
                raise BuildError(Problem(rel, 0, "output path leaves the output folder"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[rel])
        os.chmod(staging, 0o755)
        if not out.exists():
            os.replace(staging, out)
        elif not _exchange(staging, out):        # no atomic exchange here: two renames
            old = out.with_name(out.name + ".old")
            os.replace(out, old)
            os.replace(staging, out)
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)   # after an exchange: the previous site
