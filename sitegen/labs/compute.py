"""Phase 2: run each lab's cells and keep what they made, cached on content.

A lab runs in a process of its own, forked from a warm lab host (labhost.py),
in an empty working folder that is the only place it may write, cell by cell
(labrun.py): the printed output of each cell is captured and every PNG a cell
saves is its figure. The files the lab wrote become its artifacts (labstore.py),
cached under a hash of everything that can change them (labkeys.py). A lab that
reads another starts as soon as that one's results.json is final, while its
figures are still being encoded, or sooner, on its preview's (LabScheduler). A lab that runs past its timeout is stopped
with everything it started. The build process itself never imports NumPy or
Matplotlib.
"""
from __future__ import annotations

import functools
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .artifacts import Artifacts, load_entry
from ..project.cells import Cell
from ..core.errors import DISK_FULL, BuildError, Problem, SourcesChanged, disk_full
from . import labreads
from .freeze import stale_frozen
from .labjobs import RESULT, PREVIEW, SECONDS, Job, input_of, longest_first, made_from, plan_jobs
from .labkeys import font_files
from .labstore import input_bytes, read_results, remove, store, written
from .runs import NO_SPACE, LabResult, LabRun
from .sandbox import Access
from .warm import modules_for
from ..core.cachedir import MEMO
from ..core.memo import TEMPORARY, Memo, environment
from ..core.sources import read_bytes
from ..core.stored import sha256_of
from ..project.nbsource import runs_as_notebook

if TYPE_CHECKING:
    from ..project.config import Lab, SiteConfig
    from .labhost import LabHost
    from .resume import KeptLabs

DEFAULT_TIMEOUT = 600           # seconds a lab may run, unless site.yaml or --timeout says otherwise


def default_memory() -> int:
    """MiB a lab may allocate unless site.yaml or its front matter says otherwise: half of this machine's
    memory (a lab that takes more is stopped with its name, not the build by the kernel)."""
    try:
        return max(1024, os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2 // 2**20)
    except (ValueError, OSError, AttributeError):
        return 4096
class LabScheduler:
    """Computes the labs the cache lacks, each in a fresh process forked from the lab host.

    All cache keys are known up front (a lab's key is its own source's, not
    its inputs'), so `start()` knows what may run, launches what is ready and
    returns at once; a lab that reads another whose entry the cache holds is
    reused, not run, once that lab's results.json is final and the same bytes
    as its entry was made from (early cut-off: an edit to that lab that leaves
    its results as they were runs none of its readers): the caller does its own work while labs compute, then `finish()`
    stores each result as it arrives and launches the labs that waited for it.
    At most `jobs` labs run at once. The host (`LabHost`, started by the caller
    as early as it can, or here) is stopped as soon as no lab is left to run.
    A lab still running after its timeout (`timeout` overrides every lab's)
    is stopped; `progress`, if given, is called about twice a second with the
    seconds each running lab has run.

    A lab that others read starts with a preview beside it when a worker is
    free: the same cells, drawing no figure (labrun.run_lab), so its
    results.json comes sooner and its readers start on it. What a reader made
    from a preview is kept only once the real run's results.json is the same;
    otherwise the reader runs again on the real one. So the output is the
    same, byte for byte, as when every lab waits for the ones it reads.
    """

    TICK = 0.5

    def __init__(self, cfg: SiteConfig, cache_dir: Path, *, use_cache: bool = True, jobs: int | None = None,
                 host: LabHost | None = None, timeout: float | None = None, progress=None,
                 refreeze: frozenset[str] = frozenset(), memo: Memo | None = None, snapshot: dict[str, str] | None = None,
                 kept: KeptLabs | None = None):
        # Resolved: each lab runs in its own working folder, so relative paths would point elsewhere.
        self.cfg, self.cache_dir, self.host = cfg, Path(cache_dir).resolve(), host
        self.timeout, self.progress = timeout, progress
        self.kept = kept                         # serve's: runs resume from checkpoints (resume.py)
        self.use_cache = use_cache
        self.computed: list[str] = []            # labs launched by this build
        self.timings: dict[str, tuple[float, float]] = {}   # of those stored: seconds from its launch until
        #                                          its results.json was final, and until its process ended
        self.unconfined: list[str] = []          # those of them that ran where nothing confined them
        self.not_confined: set[str] = set()      # what of them was not confined here (sandbox.Confinement)
        self.unrecorded: dict[str, str] = {}     # those whose reading was not all seen -> what they did
        memo = memo or Memo(self.cache_dir / MEMO)
        self.env = {**environment(), **font_files(cfg, memo)}        # (published in each lab's provenance)
        # How labs run: that, and what they may reach beyond the sources (site.yaml's lab_access, whose
        # paths are the teacher's machine's: in the keys, never in what is published).
        self.how = {**self.env, **({"lab_access": cfg.lab_access._asdict()} if any(cfg.lab_access) else {})}
        self.workers = max(1, jobs or os.cpu_count() or 1)
        self.snapshot = snapshot or {}               # the build's snapshot of the sources, as it started
        # What to do for each lab: take its entry (or frozen/'s), wait for the labs it reads, or run it
        # (labjobs.py); `inputs`: lab id -> what labs reading it get (input_bytes).
        self.artifacts, todo, self.inputs = plan_jobs(cfg, self.cache_dir, self.how, memo, snapshot,
                                                      use_cache=use_cache, kept=kept, refreeze=refreeze)
        self.todo = longest_first(todo)
        self.previewed: dict[str, bytes] = {}    # lab id -> the same, from its preview, until the real run's
        self.running: dict[str, Job] = {}        # the host's name for a job -> the job (previews included)
        self.held: dict[str, tuple[Job, int]] = {}  # lab id -> a finished job and its exit code, whose
        self.failures: list[BuildError] = []         # inputs from previews are not yet confirmed

    @property
    def pending(self) -> list[tuple[Lab, tuple[Cell, ...]]]:
        """The labs this build computes (waiting or running), with their cells."""
        jobs = self.todo + [job for job in self.running.values() if not job.preview]
        return [(job.lab, job.cells) for job in jobs + [job for job, _ in self.held.values()]]

    def __enter__(self) -> "LabScheduler":
        return self

    def __exit__(self, *exc) -> None:
        if self.host is not None:                # stops any lab still running (interrupted)
            self.host.stop()
        for job in list(self.running.values()) + self.todo + [job for job, _ in self.held.values()]:
            job.release()
        self.running.clear()
        self.held.clear()

    def start(self) -> "LabScheduler":
        if not self.todo:
            if self.host is not None:
                self.host.stop()
            return self
        if self.host is None:
            from .labhost import LabHost        # (a build that runs no lab never imports multiprocessing)
            self.host = LabHost()
        self._launch_ready()
        return self

    def _inputs_of(self, lab: Lab) -> dict[str, bytes | None]:
        return {name: self._input(name) for name in lab.inputs}

    def _input(self, name: str) -> bytes | None:
        """What labs reading lab `name` get, once its results.json is final (None before)."""
        if name not in self.inputs and name in self.artifacts:
            self.inputs[name] = input_of(self.artifacts[name])
        return self.inputs.get(name)

    def _busy(self) -> int:
        # A lab whose cells are done encodes its figures in threads: it no longer holds a worker.
        return sum(not job.announced for job in self.running.values())

    def _launch_ready(self) -> None:
        for job in list(self.todo):
            if job.cached is not None:          # decided once its inputs are final, not on a preview's
                inputs = self._inputs_of(job.lab)
                if any(data is None for data in inputs.values()):
                    continue
                if made_from(job.cached, inputs):
                    self.todo.remove(job)
                    self.artifacts[job.lab.id] = job.cached       # reused: its inputs' bytes are as they were
                    self._publish(job.lab.id, self._input(job.lab.id))
                    return self._launch_ready()                   # which may decide its readers
                if job.frozen:                                    # never run here: it says so
                    self.todo.remove(job)
                    self.failures.append(BuildError(stale_frozen(job.lab)))
                    return self._launch_ready()
                job.cached = None                                 # they changed: it runs
            if self._busy() >= self.workers:
                break
            inputs = {name: self._input(name) for name in job.lab.inputs}
            guessed = {name: self.previewed[name] for name, data in inputs.items()
                       if data is None and name in self.previewed}
            if any(data is None and name not in guessed for name, data in inputs.items()):
                continue
            self.todo.remove(job)
            job.given = guessed
            self._launch(job, {**inputs, **guessed})
            if job.lab.id not in self.computed:
                self.computed.append(job.lab.id)
            if (self.workers > 1 and not guessed and self._busy() < self.workers
                    and any(job.lab.id in waiting.lab.inputs for waiting in self.todo)):
                self._launch(job.anew(preview=True), inputs)

    def _launch(self, job: Job, inputs: dict[str, bytes]) -> None:
        job.entry.parent.mkdir(parents=True, exist_ok=True)
        keep = self.kept is not None and not job.preview
        if keep:            # always at one path, that a resumed run writes where the lab wrote
            writable, job.staging = self.kept.folder(job.lab.id)
        else:
            # At one path for each lab (and its preview): a lab that prints where it runs prints the same
            # in every build (a killed build's folder there is its own leftover; builds take turns).
            writable, job.staging = None, job.entry.parent / f"{TEMPORARY}{job.name}"
            remove(job.staging)
            job.staging.mkdir()
        # What the build reads of the lab's folder, it reads through this (labstore.written): under serve
        # the lab may write beside it, and rename it or put a link in its place.
        job.folder = os.open(job.staging, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        work = job.staging / "work"
        work.mkdir()
        job.read = {name: sha256_of(data) for name, data in inputs.items()}
        here, watch = work, (str(self.cfg.root), str(self.cache_dir))
        if runs_as_notebook(job.lab.script):    # a notebook page runs beside its neighbours (nbsource.py)
            from ..project.nbsource import lay_folder
            here, job.links, mirrors = lay_folder(self.cfg.root, str(job.lab.script.relative_to(self.cfg.root)), work)
            watch = (*watch, mirrors)
        laid = {}
        for name, rel in job.lab.data:           # files it declares: copied, to be published with it
            laid[here / name] = read_bytes(self.cfg.root / rel, rel, self.snapshot or None)
        for name, data in inputs.items():        # what this lab reads: inputs/<lab>/results.json
            laid[work / "inputs" / name / "results.json"] = data
        for path, data in laid.items():
            path.unlink(missing_ok=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        job.provided = {str(path): sha256_of(data) for path, data in laid.items()}
        if keep:
            from .resume import identity
            job.identity = identity(job.lab.script, job.lab.display, self.cfg.figure_fonts, self.how)
            if self.use_cache:
                job.resume = self.kept.resume_point(job.lab.id, job.identity, job.cells, job.provided,
                                                    self.cfg.root, self.snapshot)
        budget = self.host.keep if keep else 0
        self.host.run(job.name, LabRun(
            script=str(job.lab.script), cells=job.cells, display=job.lab.display, fonts=self.cfg.figure_fonts,
            staging=str(job.staging), workdir=str(here), result=str(job.result), preview=job.preview,
            watch=watch, provided=tuple(job.provided),
            access=self._access._replace(memory=(job.lab.memory or default_memory()) * 2**20),
            writable=str(writable) if writable else None, budget=budget, resume=job.resume if budget else 0,
            warm=modules_for((cell.source for cell in job.cells), job.lab.display == "jupyter")))
        job.started = time.monotonic()
        self.running[job.name] = job

    @functools.cached_property
    def _access(self) -> Access:
        """What labs may read, reach and see (sandbox.py): found once a lab runs, not by every build."""
        from .sandbox import readable_paths
        declared = self.cfg.lab_access
        return Access(tuple(readable_paths(str(self.cfg.root), (str(self.cache_dir),), declared.read)),
                      declared.network, declared.environment)

    def limit(self, lab: Lab) -> float:
        """Seconds the lab may run."""
        return self.timeout or lab.timeout or DEFAULT_TIMEOUT

    def _wait(self) -> tuple[str, int]:
        """The next lab done; meanwhile stop those past their timeout and report progress."""
        while (done := self.host.finished(self.TICK)) is None:
            now = time.monotonic()
            for job in self.running.values():
                if job.stopped_after is None and now - job.started > self.limit(job.lab):
                    job.stopped_after = now - job.started
                    self.host.kill(job.name)
            if self.progress:
                self.progress({job.lab.id: now - job.started for job in self.running.values() if not job.preview})
        return done

    def _announced(self, job: Job) -> None:
        """A running lab's results.json is final: the labs reading it may start."""
        from .labrun import EARLY_RESULTS
        try:
            results = read_results(written(job.folder, EARLY_RESULTS))
        except (OSError, ValueError):
            return
        if not isinstance(results, dict):       # its failure is reported once it is done
            return
        if job.preview:
            if job.lab.id not in self.inputs:
                self.previewed[job.lab.id] = input_bytes(results)
        elif job.given:
            job.early = input_bytes(results)
        else:
            self._publish(job.lab.id, input_bytes(results))

    def _publish(self, name: str, data: bytes) -> None:
        """Lab `name`'s results.json is final: its preview is no longer needed, and what its
        readers made from the preview is kept if the preview's was the same, else made again."""
        self.inputs[name] = data
        if PREVIEW + name in self.running:
            self.host.kill(PREVIEW + name)
        if self.previewed.pop(name, None) is None:
            return
        for job in [*self.running.values(), *(job for job, _ in self.held.values())]:
            if name not in job.given:
                continue
            if job.given.pop(name) == data:
                if not job.given:
                    self._confirmed(job)
            elif job.name in self.running:
                job.discarded = True
                self.host.kill(job.name)
            else:
                del self.held[job.lab.id]
                self._again(job)

    def _confirmed(self, job: Job) -> None:
        """Every input a job got from a preview was the real one's: what it made stands."""
        if job.early is not None:
            self._publish(job.lab.id, job.early)
        if job.lab.id in self.held:
            self._done(*self.held.pop(job.lab.id))

    def _again(self, job: Job) -> None:
        job.release()
        self.todo.insert(0, job.anew())

    def finish(self) -> dict[str, Artifacts]:
        if not self.running and self.todo:
            self.start()
        while any(not job.preview for job in self.running.values()):
            from .labhost import INPUTS_READY   # (a build that runs no lab never imports multiprocessing)
            name, exitcode = self._wait()
            job = self.running[name]
            if exitcode == INPUTS_READY:
                job.announced = True
                job.results_after = time.monotonic() - job.started
                if not job.discarded:
                    self._announced(job)
            else:
                del self.running[name]
                job.ended_after = time.monotonic() - job.started
                if job.preview:
                    job.release()
                elif job.discarded:
                    self._again(job)
                elif job.given:
                    self.held[job.lab.id] = (job, exitcode)
                else:
                    self._done(job, exitcode)
            self._launch_ready()
        if self.host is not None:
            self.host.stop()
        for job in [*self.running.values(), *(job for job, _ in self.held.values())]:
            job.release()                                       # previews; readers of a lab that failed
        self.running.clear()
        self.held.clear()
        if self.failures:
            exc = self.failures
            if any(isinstance(e, SourcesChanged) for e in exc):     # the build runs again: the rest may go
                raise SourcesChanged(sorted({p.path for e in exc if isinstance(e, SourcesChanged) for p in e.problems}))
            raise exc[0] if len(exc) == 1 else BuildError([p for e in exc for p in e.problems])
        return {lab.id: self.artifacts[lab.id] for lab in self.cfg.labs}

    def _done(self, job: Job, exitcode: int) -> None:
        """Store what a finished lab made (or its failure)."""
        try:
            if job.stopped_after is not None:
                raise OSError("stopped")
            run = LabResult.from_json(written(job.folder, RESULT).decode("utf-8"))
            os.unlink(RESULT, dir_fd=job.folder)
        except (OSError, ValueError, TypeError):
            message = (f"the lab's process ended without a result (exit code {exitcode})"
                       if job.stopped_after is None and exitcode != NO_SPACE else
                       f"its result could not be written: {DISK_FULL}"
                       if job.stopped_after is None else
                       f"stopped after {self.limit(job.lab):g} s, its timeout, with everything it had "
                       f"started: make it faster, or raise its `timeout:` (seconds) in "
                       + ("the notebook's front matter (a raw cell at its top: ---, timeout: 1200, ---)"
                          if runs_as_notebook(job.lab.script) else "site.yaml"))
            run = LabResult.failed(message)
            if self.kept is not None:
                self.kept.forget(job.lab.id, job.resume)
        else:                                   # serve's: where its next run may resume
            if self.kept is not None:
                self.kept.ran(job.lab.id, job.identity, job.cells, job.provided, run)
        # The installed distributions it imported are among what it read, at their versions now.
        run.reads = {**run.reads, **labreads.installed_reads(run.packages)}
        if labreads.PROJECT in run.reads:        # what it read is not all seen: keyed on every source
            self.unrecorded[job.lab.id] = run.reads[labreads.PROJECT]
            run.reads[labreads.PROJECT] = labreads.project_digest(self.snapshot)
        if not run.confined and job.lab.id not in self.unconfined:
            self.unconfined.append(job.lab.id)
        self.not_confined.update(run.unconfined)
        # What it read must be what the build's snapshot held when it started: else it ran on an edit
        # made meanwhile, and what it made must not be stored under a key made of the old text.
        edited = labreads.stale(self.cfg.root, run.reads, self.snapshot)
        if edited and not run.error:
            job.release()
            self.failures.append(SourcesChanged(edited))
            return
        run.inputs = job.read
        # The entry is made in a folder of the build's own: the lab's (which it could write, and which
        # something it started may still) is read, never moved into the cache (labstore.py).
        stored = job.entry.parent / f"{TEMPORARY}{job.name}.stored"
        shutil.rmtree(stored, ignore_errors=True)
        laid = frozenset(os.path.relpath(link, job.staging / "work") for link in job.links)  # (its neighbours)
        try:
            store(job.lab, job.key, job.source, self.env, str(job.lab.script.relative_to(self.cfg.root)),
                  run, job.folder, stored, laid)
            (stored / SECONDS).write_text(f"{job.ended_after or 0:.3f}", encoding="ascii")
            for old in job.entry.parent.iterdir():   # one entry per lab: drop stale keys
                if not old.name.startswith(TEMPORARY):
                    shutil.rmtree(old)
            os.replace(stored, job.entry)
            self.artifacts[job.lab.id] = load_entry(job.lab, job.cells, job.entry, True)
            self.timings[job.lab.id] = (job.results_after or job.ended_after, job.ended_after)
        except BuildError as exc:
            self.failures.append(exc)
        except OSError as exc:                  # the disk filled, perhaps by another lab: said with the others
            if not disk_full(exc):
                raise
            self.failures.append(BuildError(Problem(
                str(job.lab.script.relative_to(self.cfg.root)), 0,
                f"lab {job.lab.id}: what it made could not be stored: {exc.strerror}: {DISK_FULL}")))
        finally:
            job.release()
            shutil.rmtree(stored, ignore_errors=True)
        if job.lab.id not in self.inputs and job.lab.id in self.artifacts:   # it never said so before
            self._publish(job.lab.id, self._input(job.lab.id))


def compute_labs(cfg: SiteConfig, cache_dir: Path, **options) -> dict[str, Artifacts]:
    """Artifacts for every lab: from the cache when intact and current, else computed."""
    with LabScheduler(cfg, cache_dir, **options) as labs:
        return labs.start().finish()
