"""Phase 6: the only code that touches the output folder.

Files go to a sibling `<out>.tmp-*` folder first; only when all are written
is it swapped in for the old output, so a failed or killed build leaves the
last good site whole. It refuses output folders that hold anything else of
value (the project, a source folder, home, /).
"""
from __future__ import annotations

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


def recover(out: Path) -> None:
    """After a build killed mid-swap, put the last good site back."""
    old = out.with_name(out.name + ".old")
    if old.is_dir() and not out.exists():
        os.replace(old, out)
    if old.is_dir():
        shutil.rmtree(old)
    for stale in out.parent.glob(out.name + ".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)


def write_site(files: dict[str, bytes], out: Path) -> None:
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
        old = out.with_name(out.name + ".old")
        if out.exists():
            os.replace(out, old)
        os.replace(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
