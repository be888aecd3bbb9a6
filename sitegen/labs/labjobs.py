"""What a build does for each lab, decided before any runs: take its entry from the cache (or frozen/'s),
wait for the labs it reads to say whether their results are as its entry was made from, or run it.

A lab's key is its own source's (labkeys.py): the labs it reads are not in it. Its entry is reused
while the bytes it was given of them are the same (early cut-off: made_from), however their code
changed; a lab whose inputs are still to run waits with its entry in hand (Job.cached), and the
scheduler (compute.py) decides once they are final. A Job is one lab's run as the scheduler drives it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import labplan
from . import labreads
from .artifacts import Artifacts, load_entry
from .freeze import FROZEN, load_frozen, stale_frozen
from .labkeys import lab_key, source_key
from .labstore import input_bytes, remove
from ..core import installed
from ..core.cachedir import LABS
from ..core.errors import BuildError, Collector
from ..core.memo import Memo
from ..core.stored import sha256_of
from ..project.cells import Cell, read_cells
from ..project.needs import missing_packages
from ..project.nbsource import runs_as_notebook

if TYPE_CHECKING:
    from ..project.config import Lab, SiteConfig
    from .resume import KeptLabs

PREVIEW = "preview:"      # the lab host knows a lab's preview run by this and the lab's id
SECONDS = "seconds"       # in a lab's entry: how long its run took (when it must run again: which first)


RESULT = "run.json"      # what a lab's run reports (runs.LabResult), in its folder


@dataclass
class Job:
    lab: Lab
    cells: tuple[Cell, ...]
    key: str
    source: str                          # its source key
    entry: Path
    cached: Artifacts | None = None      # its cache entry, current but for its inputs, which are still to run:
    #                                      taken if they give it the same bytes it was made from (early cut-off)
    frozen: bool = False                 # `cached` is frozen/'s: if they give it other bytes, the build fails
    preview: bool = False                # a run drawing no figure, only to hand its results.json on sooner
    # -- its run, as the scheduler drives it --
    staging: Path | None = None
    started: float = 0.0                 # time.monotonic() when it was launched
    stopped_after: float | None = None   # seconds it ran when its timeout stopped it
    announced: bool = False              # its results.json is final (its figures may still be encoding)
    results_after: float | None = None   # seconds from its launch until then
    ended_after: float | None = None     # seconds from its launch until its process ended
    given: dict[str, bytes] = field(default_factory=dict)   # inputs it got from previews, not yet confirmed
    early: bytes | None = None           # what its readers will get, held back while `given` is unconfirmed
    discarded: bool = False              # a preview gave it inputs the real run did not make: it runs again
    read: dict[str, str] = field(default_factory=dict)    # lab id -> SHA-256 of the inputs it was given
    provided: dict[str, str] = field(default_factory=dict)  # the files laid in its folder -> SHA-256
    identity: str = ""                   # under serve: what else a checkpoint of it must match (resume.py)
    resume: int = 0                      # under serve: the cell it was resumed after (0: its first)
    links: list = field(default_factory=list)             # a notebook's neighbours laid beside it (nbsource.py)
    folder: int | None = None            # a descriptor of `staging`, what the build reads it through (labstore.written)

    @property
    def result(self) -> Path:
        return self.staging / RESULT

    def release(self) -> None:
        """Its folder let go: the descriptor closed, the folder gone (not what a link in its place names)."""
        if self.folder is not None:
            os.close(self.folder)
            self.folder = None
        if self.staging is not None:
            remove(self.staging)

    @property
    def name(self) -> str:
        """The lab host's name for it."""
        return PREVIEW + self.lab.id if self.preview else self.lab.id

    def anew(self, preview: bool = False) -> Job:
        """The same lab to run from the start (or its preview)."""
        return Job(self.lab, self.cells, self.key, self.source, self.entry, preview=preview)


def plan_jobs(cfg: SiteConfig, cache_dir: Path, how: dict, memo: Memo, snapshot: dict[str, str] | None, *,
              use_cache: bool, kept: KeptLabs | None, refreeze: frozenset[str]
              ) -> tuple[dict[str, Artifacts], list[Job], dict[str, bytes]]:
    """The labs' entries taken as they are (by id), the jobs left to do, in the labs' dependency order,
    and what the labs read of those taken (input_bytes, by id). `how`: how labs run (their key's);
    `snapshot`: the build's (None: no plan is remembered); `kept`: serve's (a one-off build
    runs what serve resumed); `refreeze`: the labs to compute anew rather than take from frozen/."""
    artifacts: dict[str, Artifacts] = {}
    inputs: dict[str, bytes] = {}
    todo: list[Job] = []
    # With the build's snapshot, what the last build found for every lab is taken as it is when all
    # it was found from is still so (labplan.py).
    plan = None if snapshot is None else (
        str(cfg.root), str(cache_dir), cfg.digest, repr(cfg.labs), json.dumps(how, sort_keys=True),
        use_cache, kept is not None, sorted(refreeze), sorted((rel, sha) for rel, sha in snapshot.items() if rel.startswith(FROZEN + "/")))
    if plan is not None and (found := labplan.recall(memo, plan, cfg.root, snapshot)) is not None:
        return found, todo, inputs
    snapshot = snapshot or {}

    def given(lab: Lab) -> dict[str, bytes]:
        for name in lab.inputs:
            if name not in inputs:
                inputs[name] = input_of(artifacts[name])
        return {name: inputs[name] for name in lab.inputs}

    stale, imports = Collector(), {}
    versions = installed.versions()             # (read once: not once a lab)
    for lab in in_dependency_order(cfg.labs):
        cells = lab_cells(cfg, lab, memo, snapshot)
        source = source_key(cfg, lab, memo, imports)
        waits = any(name not in artifacts for name in lab.inputs)      # decided once they are final
        if lab.id not in refreeze and (frozen := load_frozen(cfg, lab, cells, source, stale, snapshot)):
            if waits:
                todo.append(Job(lab, cells, frozen.provenance["cache_key"], source, frozen.entry,
                                cached=frozen, frozen=True))
            elif made_from(frozen, given(lab)):
                artifacts[lab.id] = frozen
            else:
                stale.problems.append(stale_frozen(lab))
            continue
        key = lab_key(cfg, lab, how, source)
        entry = cache_dir / LABS / lab.id / key
        found = load_entry(lab, cells, entry, False, memo) if use_cache else None
        if found is not None and labreads.stale(cfg.root, found.reads, snapshot, versions):
            found = None                # a file it read is not as it was
        if found is not None and found.resumed and kept is None:
            found = None                # serve resumed it: a one-off build runs it from its first cell
        if found is not None and not waits and not made_from(found, given(lab)):
            found = None                # the labs it reads gave other results than it was made from
        if found is None or waits:
            todo.append(Job(lab, cells, key, source, entry, cached=found))
        else:
            artifacts[lab.id] = found
    stale.raise_if_any()
    if missing := missing_packages(cfg.root, [(job.lab, job.cells) for job in todo]):
        raise BuildError(missing)
    if plan is not None and not todo:
        labplan.remember(memo, plan, cfg.root, snapshot, artifacts, imports)
    return artifacts, todo, inputs


def longest_first(todo: list[Job]) -> list[Job]:
    """The jobs, those whose last run took longest first (what its entry says, the stale one too), so
    that the longest does not start last on a free core and run on alone; a lab never run is taken as
    long as its cells are sure to take (`at_least`: a clean build of notebooks in the order of their
    names started a lecture of %timeit cells last, and it ran on alone for half the build);
    otherwise in the order given (a lab waits for those it reads wherever it stands)."""
    def took(job: Job) -> float:
        for entry in (job.entry.parent.iterdir() if job.entry.parent.is_dir() else ()):
            try:
                return float((entry / SECONDS).read_text(encoding="ascii"))
            except (OSError, ValueError):
                continue
        return at_least(job.cells)
    return sorted(todo, key=lambda job: -took(job))


TIMEIT_ROUND = 0.2      # seconds: IPython's %timeit runs as many loops as take this long, once to choose
#                         how many, then once per repeat (7 unless -r says), unless -n sets the loops


def at_least(cells: tuple[Cell, ...]) -> float:
    """Seconds the cells surely take: what their %timeit lines and %%timeit cells time (the rest
    of a lab's time is not known before it runs)."""
    seconds = 0.0
    for cell in cells:
        for line in cell.source.splitlines():
            if (timed := timeit_magic(line)) is not None and "-n" not in timed[1]:
                repeats = timed[1].get("-r", "7")
                seconds += TIMEIT_ROUND * (1 + (int(repeats) if repeats.isdigit() else 7))
    return seconds


def timeit_magic(line: str) -> tuple[str, dict[str, str], str] | None:
    """A line that times code with IPython: its magic (%timeit or %%timeit), its options (-n N, -r R,
    -p P, or -n10; -o, -q) and the statement it times; None for any other line. `t = %timeit -o f()`
    times f() too."""
    words = line.split()
    if words[1:3] == ["=", "%timeit"]:
        words = words[2:]
    if not words or words[0] not in ("%timeit", "%%timeit"):
        return None
    options, rest = {}, words[1:]
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        options[flag[:2]] = flag[2:] or (rest.pop(0) if flag in ("-n", "-r", "-p") and rest else "")
    return words[0], options, " ".join(rest)


def made_from(art: Artifacts, inputs: dict[str, bytes]) -> bool:
    """Whether a lab's entry was made from exactly these inputs' bytes."""
    return (art.inputs or {}) == {name: sha256_of(data) for name, data in inputs.items()}


def input_of(art: Artifacts) -> bytes:
    """What labs reading this lab's entry get (labstore.input_bytes of its results.json)."""
    return input_bytes(json.loads(art.files["results.json"].read_bytes()))


def lab_cells(cfg: SiteConfig, lab: Lab, memo: Memo | None, snapshot: dict[str, str] | None) -> tuple[Cell, ...]:
    """A lab's cells: its script's, or a notebook page's code cells (nbsource.py)."""
    if runs_as_notebook(lab.script):
        from ..project.nbsource import cells_of, load
        return cells_of(load(cfg.root, str(lab.script.relative_to(cfg.root)), snapshot, memo))
    return read_cells(lab.script, cfg.root, memo, snapshot)


def in_dependency_order(labs) -> list[Lab]:
    done: set[str] = set()
    ordered: list[Lab] = []
    while len(ordered) < len(labs):
        for lab in labs:
            if lab.id not in done and set(lab.inputs) <= done:
                ordered.append(lab)
                done.add(lab.id)
    return ordered
