"""Frozen labs: computed once where they can be, committed in frozen/<id>/, reused elsewhere.

Cloudflare Pages' builder has 20 minutes and no GPU; a lab that needs more is
frozen with `python build.py freeze LAB` and its cache entry committed. A
build reuses it while the lab's source key (its script, the project modules it
imports) is the one it was frozen with and the labs it reads give it the bytes
it was frozen on, whatever versions the build runs with (as Quarto's freeze),
and otherwise fails naming the lab: never stale numbers, silently.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .artifacts import Artifacts, load_entry
from ..project.cells import Cell
from ..core.errors import BuildError, Collector, Problem
from .labreads import stale, portable_reads
from ..core.memo import TEMPORARY

if TYPE_CHECKING:
    from ..project.config import Lab, SiteConfig

FROZEN = "frozen"       # the project's folder of frozen labs: frozen/<lab id>/ is a cache entry, committed


def load_frozen(cfg: SiteConfig, lab: Lab, cells: tuple[Cell, ...], source: str, problems: Collector,
                snapshot: dict[str, str]) -> Artifacts | None:
    """The lab's frozen artifacts when frozen/<id>/ holds them and they follow from its current
    source and the files it read as they are now (`snapshot`: the build's); a Problem
    (never stale numbers) when it holds them for another; else None."""
    folder = cfg.root / FROZEN / lab.id
    if not (folder / "manifest.json").exists():
        return None
    found = load_entry(lab, cells, folder, False)
    if found is not None:           # (whatever versions of the packages it imported the build runs with)
        found = dataclasses.replace(found, reads=portable_reads(found.reads or {}))
    where = f"{FROZEN}/{lab.id}"
    if found is None:
        problems.add(where, 0, f"lab {lab.id} is frozen, but {where} is damaged or its cells differ from the "
                               f"script's: run `python build.py freeze {lab.id}` again")
    elif found.provenance.get("source_key") != source or (edited := stale(cfg.root, found.reads, snapshot)):
        what = f"{', '.join(edited)} changed" if found.provenance.get("source_key") == source else \
            "its script (or a module it imports) changed"
        problems.add(where, 0, f"lab {lab.id} is frozen, but {what} since: run `python build.py freeze "
                               f"{lab.id}` where it can be computed and commit {where}, or delete {where} "
                               "to compute it in every build")
        return None
    return found


def stale_frozen(lab: Lab) -> Problem:
    """A frozen lab whose inputs (the results of the labs it reads) are not what it was frozen on."""
    where = f"{FROZEN}/{lab.id}"
    return Problem(where, 0, f"lab {lab.id} is frozen, but the results of {', '.join(lab.inputs)}, which it "
                             f"reads, changed since: run `python build.py freeze {lab.id}` where it can be "
                             f"computed and commit {where}, or delete {where} to compute it in every build")


def is_frozen(cfg: SiteConfig, art: Artifacts) -> bool:
    """Read from frozen/ rather than computed or cached."""
    return art.entry is not None and str(art.entry).startswith(f"{cfg.root / FROZEN}{os.sep}")   # (Path.parents costs more)


def freeze(cfg: SiteConfig, artifacts: dict[str, Artifacts], ids) -> list[str]:
    """Store these labs' artifacts in frozen/<id>/ (replacing only a folder frozen before); their paths."""
    froze = []
    for lab_id in ids:
        art = artifacts[lab_id]
        folder = cfg.root / FROZEN / lab_id
        folder.parent.mkdir(exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=TEMPORARY, dir=folder.parent))
        try:
            shutil.copytree(art.entry, staging / "entry")
            if folder.exists():
                if not (folder / "manifest.json").is_file():
                    raise BuildError(Problem(f"{FROZEN}/{lab_id}", 0, "exists but holds no frozen lab: move it "
                                                                      "away, then freeze again"))
                shutil.rmtree(folder)
            os.replace(staging / "entry", folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        froze.append(f"{FROZEN}/{lab_id}")
    return froze
