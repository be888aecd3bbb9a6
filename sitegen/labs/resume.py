"""serve's labs: one lab host kept from build to build, and where each lab's next run may resume.

Under `serve`, the host keeps a checkpoint of each lab's process after each cell
(checkpoint.py). When a lab must run again, the build resumes it from the last
checkpoint that still stands (`resume_point`): its cells up to there are the
same, and everything the lab had read by then is as it was: each file and
folder of the project (a data file, an imported module: labreads.py) and each
file the build lays in its folder (the results of a lab it reads, its data
files). A cell whose code is unchanged but whose input changed invalidates the
checkpoints from the first cell that read it. The run then goes on from there,
and what it makes is what a run from the first cell makes, byte for byte: the
same code on the same state (tests/test_resume.py).

A resumed lab must write where it wrote: its process is confined to one folder
for good (sandbox.py), so each lab's real runs under serve all happen at one
path, `<cache>/live/<lab>/run`, confined to the folder holding it.

Checkpoints cost memory as the lab's process goes on and their copy-on-write
pages part: after each build, the oldest are dropped until all of them fit in
the bound (`evict`; a lab's run ends its own oldest as it goes), and serve says
so. Where memory cannot be measured (no /proc: not Linux), none is taken. A
one-off build takes none.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import labreads
from .labstore import remove
from ..core.cachedir import LIVE
from ..core.stored import sha256_of

if TYPE_CHECKING:
    from ..project.cells import Cell
    from .labhost import LabHost
    from .runs import LabResult

MIB = 1 << 20


def default_budget() -> int:
    """Bytes all checkpoints may take: a quarter of this machine's memory, at most 2 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 4 << 30
    return min(2 << 30, total // 4)


@dataclass
class _Lineage:
    """A lab's last run under serve, as far as its checkpoints tell."""
    identity: str                        # what else its run follows from (script, display, fonts, versions)
    cells: tuple[Cell, ...]
    provided: dict[str, str]             # the files the build laid in its folder -> SHA-256
    checkpoints: list[dict]              # {"after", "pid", "reads", "provided", "born"}


class KeptLabs:
    """The host serve keeps, and what its checkpoints hold; `budget`: bytes they may take."""

    def __init__(self, cache: Path, budget: int | None = None):
        self.live = Path(cache).resolve() / LIVE
        self.budget = default_budget() if budget is None else budget
        self.host: LabHost | None = None
        self.signature = ""
        self.runs: dict[str, _Lineage] = {}
        self.born = 0
        self.resumed: dict[str, int] = {}    # this build's runs that resumed: lab id -> after which cell
        self.notes: list[str] = []           # this build's: why a lab took fewer checkpoints

    def lab_host(self) -> LabHost:
        """The kept host, started anew when what labs run with (the harness's code, any installed
        distribution's version: a checkpoint holds the modules it had imported) changed, or it died."""
        from ..core.installed import versions
        from .labkeys import harness_digest
        signature = json.dumps([harness_digest(), versions()], sort_keys=True)
        if self.host is not None and (signature != self.signature or not self.host.alive()):
            self.close()
        if self.host is None:
            from .labhost import LabHost
            # Where a process's memory cannot be read (not Linux), no bound could hold: none is kept.
            measurable = os.path.exists("/proc/self/smaps_rollup")
            self.host, self.signature = LabHost(keep=self.budget if measurable else 0), signature
        self.resumed, self.notes = {}, []
        return self.host

    def folder(self, lab: str) -> tuple[Path, Path]:
        """(the folder a lab's run is confined to, its staging folder in it, empty)."""
        writable = self.live / lab
        writable.mkdir(parents=True, exist_ok=True)
        staging = writable / "run"
        remove(staging)                 # (a link the lab left in its place is removed, not followed)
        staging.mkdir()
        return writable, staging

    def resume_point(self, lab: str, identity: str, cells: tuple[Cell, ...], provided: dict[str, str],
                     root: Path, snapshot: dict[str, str]) -> int:
        """The last cell after which a checkpoint of `lab` stands for a run of `cells` (0: none)."""
        last = self.runs.get(lab)
        if last is None or last.identity != identity:
            return 0
        same = 0
        while same < min(len(cells), len(last.cells)) and cells[same] == last.cells[same]:
            same += 1
        for point in reversed(last.checkpoints):
            if point["after"] > same:
                continue
            if labreads.stale(root, point["reads"], snapshot):
                continue                 # and so are the later ones: what they read includes it
            if any(provided.get(path) != last.provided.get(path) for path in point["provided"]):
                continue
            return point["after"]
        return 0

    def ran(self, lab: str, identity: str, cells: tuple[Cell, ...], provided: dict[str, str], run: LabResult) -> None:
        """A lab's run under serve ended, with its result `run`: its checkpoints are where it resumes."""
        old = {point["pid"]: point["born"] for point in self.runs[lab].checkpoints} if lab in self.runs else {}
        points = []
        for point in run.checkpoints:
            if point["pid"] not in old:
                self.born += 1
            points.append({**point, "born": old.get(point["pid"], self.born)})
        self.runs[lab] = _Lineage(identity, tuple(cells), dict(provided), points)
        if run.resumed:
            self.resumed[lab] = run.resumed
        if run.dropped:
            self.notes.append(f"{lab}: {run.dropped} of its oldest checkpoints ended while it ran, to stay "
                              f"within {self.budget / MIB:.0f} MiB (--checkpoint-memory)")
        if run.skipped:
            self.notes.append(f"{lab}: {run.skipped} (an edit after it runs the lab from an earlier cell)")

    def forget(self, lab: str, resumed: int = 0) -> None:
        """A lab's run, resumed after cell `resumed` (0: from its first), ended without a result: what
        the checkpoints it took hold is not known, and they go; the ones it was resumed from stand."""
        run = self.runs.get(lab)
        if run is not None:
            run.checkpoints = [point for point in run.checkpoints if point["after"] <= resumed]
        if self.host is not None and self.host.alive():
            self.host.drop(lab, above=resumed)

    def memory(self) -> dict[tuple[str, int], int]:
        """Each checkpoint's share of memory (its proportional set size), by (lab, after which cell), as the
        host measures the ones it holds: the processes it checked, never a pid a lab's result names. What
        the runs say of checkpoints the host does not hold goes."""
        held = self.host.measure() if self.host is not None and self.host.alive() else {}
        for lab, run in self.runs.items():
            run.checkpoints = [point for point in run.checkpoints if (lab, point["after"]) in held]
        return {(lab, point["after"]): held[lab, point["after"]]
                for lab, run in self.runs.items() for point in run.checkpoints}

    def evict(self) -> str | None:
        """Drop the oldest checkpoints until all fit in the budget; what was dropped, said. Measured
        again after each drop (the host waits for its process to end): the pages a dropped one shared
        now count for the others."""
        total, dropped = sum(self.memory().values()), []
        while total > self.budget and any(run.checkpoints for run in self.runs.values()):
            _, lab, point = min((point["born"], lab, point) for lab, run in self.runs.items()
                                   for point in run.checkpoints)
            self.runs[lab].checkpoints.remove(point)
            dropped.append((lab, point["after"]))
            self.host.drop(lab, [point["after"]])
            total = sum(self.memory().values())
        if not dropped:
            return None
        kept = sum(len(run.checkpoints) for run in self.runs.values())
        return (f"checkpoints: dropped the {len(dropped)} oldest ({', '.join(f'{lab} after cell {after}' for lab, after in dropped[:4])}"
                f"{' ...' if len(dropped) > 4 else ''}) to stay within {self.budget / MIB:.0f} MiB; "
                f"{kept} kept, {total / MIB:.0f} MiB")

    def close(self) -> None:
        """End the host and every checkpoint."""
        if self.host is not None:
            self.host.close()
        self.host, self.runs = None, {}


def identity(script: Path, display: str, fonts, env: dict) -> str:
    """What a lab's run follows from besides its cells and what it reads: a checkpoint of another
    never stands for it."""
    return sha256_of(json.dumps([str(script), display, list(fonts), env], sort_keys=True).encode())
