"""Phase 2: run each lab's cells and keep what they made, cached on content.

A lab runs in a process of its own, forked from a warm lab host (labhost.py),
in an empty working folder that is the only place it may write, cell by cell
(labrun.py): the printed output of each cell is captured and every PNG a cell
saves is its figure. The files the lab wrote become its artifacts, cached
under a hash of everything that can change them (labkeys.py). A lab that
reads another starts as soon as that one's results.json is final, while its
figures are still being encoded. A lab that runs past its timeout is stopped
with everything it started. The build process itself never imports NumPy or
Matplotlib.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .artifacts import Artifacts, load_entry, sha256
from .cells import Cell, read_cells
from .errors import BuildError, Collector, LabFailure, Problem
from .freeze import load_frozen
from .labkeys import font_files, lab_key, source_key
from .memo import TEMPORARY, Memo, environment

if TYPE_CHECKING:
    from .config import Lab, SiteConfig
    from .labhost import LabHost

DEFAULT_TIMEOUT = 600           # seconds a lab may run, unless site.yaml or --timeout says otherwise


def _non_finite(value, path="") -> list[str]:
    if isinstance(value, float):
        return [] if math.isfinite(value) else [path or "(top)"]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _non_finite(v, f"{path}[{i}]")]
    return []


def computed_at() -> str:
    from datetime import datetime, timezone
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch else datetime.now(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def read_results(data: bytes) -> dict | str:
    """A lab's results.json as an object, or what is wrong with it."""
    try:
        results = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        return f"wrote a results.json that is not valid JSON ({exc}): write it with json.dump"
    if not isinstance(results, dict):
        return f"wrote a results.json that holds {type(results).__name__}, not an object ({{\"key\": value, ...}})"
    bad = _non_finite(results)
    if bad:
        return f"failed: non-finite values (NaN or inf) in results.json at {', '.join(bad[:5])}"
    return results


def input_bytes(results: dict) -> bytes:
    """What labs that read this one find in inputs/<id>/results.json: its results as it wrote them,
    without the build's provenance (which hashes its figures, encoded after its cells have run)."""
    return json.dumps({k: v for k, v in results.items() if k != "provenance"}, indent=2).encode()


def _store(lab, key, source, env, rel_script, run, work, staging) -> None:
    if run["error"]:
        err = run["error"]
        raise LabFailure(Problem(rel_script, err["line"], f"lab {lab.id} failed: {err['message']}"), err["trace"])
    files: dict[str, Path] = {}
    for path in sorted(p for p in work.rglob("*") if p.relative_to(work).parts[0] != "inputs"):
        if path.is_symlink():
            raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote a symlink {path.relative_to(work)} -> "
                                     f"{os.readlink(path)}: a lab's outputs must be files it wrote itself"))
        if not path.is_file():
            continue
        if path.name in files:
            raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote two files named {path.name!r}: "
                                     "give every artifact a distinct file name"))
        files[path.name] = path
    if "results.json" not in files:
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote no results.json"))
    results = read_results(files["results.json"].read_bytes())
    if isinstance(results, str):
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} {results}"))
    out = staging / "files"
    out.mkdir()
    for name, path in files.items():
        if name != "results.json":
            shutil.move(path, out / name)
    provenance = {"lab": lab.id, "script": rel_script,
                  "script_sha256": sha256(lab.script.read_bytes()),
                  "seed": results.get("seed"), **env, "computed_at": computed_at(),
                  "cache_key": key, "source_key": source,
                  "artifacts": {name: sha256((out / name).read_bytes())
                                for name in sorted(files) if name != "results.json"}}
    results["provenance"] = provenance
    (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    manifest = {"cells": [{**c, "figures": [Path(f).name for f in c["figures"]]} for c in run["cells"]],
                "provenance": provenance,
                "files": {name: sha256((out / name).read_bytes()) for name in sorted(files)}}
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(work)


@dataclass
class _Job:
    lab: Lab
    cells: tuple[Cell, ...]
    key: str
    source: str                          # its source key
    entry: Path
    staging: Path | None = None
    started: float = 0.0                 # time.monotonic() when it was launched
    stopped_after: float | None = None   # seconds it ran when its timeout stopped it
    announced: bool = False              # its results.json is final (its figures may still be encoding)

    @property
    def result(self) -> Path:
        return self.staging / "run.json"


class LabScheduler:
    """Computes the labs the cache lacks, each in a fresh process forked from the lab host.

    All cache keys are known up front (a lab's key includes its inputs' keys),
    so `start()` knows what must run, launches what is ready and returns at
    once: the caller does its own work while labs compute, then `finish()`
    stores each result as it arrives and launches the labs that waited for it.
    At most `jobs` labs run at once. The host (`LabHost`, started by the caller
    as early as it can, or here) is stopped as soon as no lab is left to run.
    A lab still running after its timeout (`timeout` overrides every lab's)
    is stopped; `progress`, if given, is called about twice a second with the
    seconds each running lab has run.
    """

    TICK = 0.5

    def __init__(self, cfg: SiteConfig, cache_dir: Path, *, use_cache: bool = True, jobs: int | None = None,
                 host: LabHost | None = None, timeout: float | None = None, progress=None,
                 refreeze: frozenset[str] = frozenset(), memo: Memo | None = None):
        # Resolved: each lab runs in its own working folder, so relative paths would point elsewhere.
        self.cfg, self.cache_dir, self.host = cfg, Path(cache_dir).resolve(), host
        self.timeout, self.progress = timeout, progress
        self.computed: list[str] = []            # labs launched by this build
        memo = memo or Memo(self.cache_dir / "memo")
        self.env = {**environment(), **font_files(cfg, memo)}
        self.workers = max(1, jobs or os.cpu_count() or 1)
        self.artifacts: dict[str, Artifacts] = {}
        self.inputs: dict[str, bytes] = {}       # lab id -> what labs reading it get (input_bytes)
        self.todo: list[_Job] = []
        self.running: dict[str, _Job] = {}       # lab id -> its job
        self.failures: list[BuildError] = []
        keys: dict[str, str] = {}
        sources: dict[str, str] = {}
        stale, imports = Collector(), {}
        for lab in _in_dependency_order(cfg.labs):
            cells = read_cells(lab.script, cfg.root, memo)
            sources[lab.id] = source_key(cfg, lab, [sources[name] for name in lab.inputs], memo, imports)
            if lab.id not in refreeze and (frozen := load_frozen(cfg, lab, cells, sources[lab.id], stale)):
                self.artifacts[lab.id] = frozen
                keys[lab.id] = frozen.provenance["cache_key"]
                continue
            keys[lab.id] = lab_key(cfg, lab, self.env, [keys[name] for name in lab.inputs], sources[lab.id])
            entry = self.cache_dir / "labs" / lab.id / keys[lab.id]
            found = load_entry(lab, cells, entry, False, memo) if use_cache else None
            if found is None:
                self.todo.append(_Job(lab, cells, keys[lab.id], sources[lab.id], entry))
            else:
                self.artifacts[lab.id] = found
        stale.raise_if_any()

    @property
    def pending(self) -> list[tuple[Lab, tuple[Cell, ...]]]:
        """The labs this build computes (waiting or running), with their cells."""
        return [(job.lab, job.cells) for job in self.todo + list(self.running.values())]

    def __enter__(self) -> "LabScheduler":
        return self

    def __exit__(self, *exc) -> None:
        if self.host is not None:                # stops any lab still running (interrupted)
            self.host.stop()
        for job in list(self.running.values()) + self.todo:
            if job.staging is not None:
                shutil.rmtree(job.staging, ignore_errors=True)
        self.running.clear()

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

    def _input(self, name: str) -> bytes | None:
        """What labs reading lab `name` get, once its results.json is final (None before)."""
        if name not in self.inputs and name in self.artifacts:
            self.inputs[name] = input_bytes(json.loads(self.artifacts[name].files["results.json"].read_bytes()))
        return self.inputs.get(name)

    def _launch_ready(self) -> None:
        for job in list(self.todo):
            # A lab whose cells are done encodes its figures in threads: it no longer holds a worker.
            if sum(not running.announced for running in self.running.values()) >= self.workers:
                break
            if not all(self._input(name) is not None for name in job.lab.inputs):
                continue
            self.todo.remove(job)
            job.entry.parent.mkdir(parents=True, exist_ok=True)
            job.staging = Path(tempfile.mkdtemp(prefix=TEMPORARY, dir=job.entry.parent))
            work = job.staging / "work"
            work.mkdir()
            for name in job.lab.inputs:          # what this lab reads: inputs/<lab>/results.json
                (work / "inputs" / name).mkdir(parents=True)
                (work / "inputs" / name / "results.json").write_bytes(self._input(name))
            self.host.run(job.lab.id, str(job.lab.script), job.cells, job.lab.display, self.cfg.figure_fonts,
                          job.staging, work, job.result)
            job.started = time.monotonic()
            self.running[job.lab.id] = job
            self.computed.append(job.lab.id)

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
                    self.host.kill(job.lab.id)
            if self.progress:
                self.progress({lab_id: now - job.started for lab_id, job in self.running.items()})
        return done

    def _announced(self, job: _Job) -> None:
        """A running lab's results.json is final: the labs reading it may start."""
        from .labrun import EARLY_RESULTS
        job.announced = True
        try:
            results = read_results((job.staging / EARLY_RESULTS).read_bytes())
        except OSError:
            return
        if isinstance(results, dict):           # else its failure is reported once it is done
            self.inputs[job.lab.id] = input_bytes(results)
        self._launch_ready()

    def finish(self) -> dict[str, Artifacts]:
        if not self.running and self.todo:
            self.start()
        while self.running:
            from .labhost import INPUTS_READY
            lab_id, exitcode = self._wait()
            if exitcode == INPUTS_READY:
                self._announced(self.running[lab_id])
                continue
            job = self.running.pop(lab_id)
            try:
                if job.stopped_after is not None:
                    raise OSError("stopped")
                run = json.loads(job.result.read_text(encoding="utf-8"))
                job.result.unlink()
            except (OSError, ValueError):
                message = (f"the lab's process ended without a result (exit code {exitcode})"
                           if job.stopped_after is None else
                           f"stopped after {self.limit(job.lab):g} s, its timeout, with everything it had "
                           f"started: make it faster, or raise its `timeout:` (seconds) in site.yaml")
                run = {"cells": [], "error": {"line": 0, "trace": "", "message": message}}
            try:
                _store(job.lab, job.key, job.source, self.env, str(job.lab.script.relative_to(self.cfg.root)),
                       run, job.staging / "work", job.staging)
                for old in job.entry.parent.iterdir():   # one entry per lab: drop stale keys
                    if old.name != job.staging.name and not old.name.startswith(TEMPORARY):
                        shutil.rmtree(old)
                os.replace(job.staging, job.entry)
                self.artifacts[job.lab.id] = load_entry(job.lab, job.cells, job.entry, True)
            except BuildError as exc:
                self.failures.append(exc)
            finally:
                shutil.rmtree(job.staging, ignore_errors=True)
            self._launch_ready()
        if self.host is not None:
            self.host.stop()
        if self.failures:
            exc = self.failures
            raise exc[0] if len(exc) == 1 else BuildError([p for e in exc for p in e.problems])
        return {lab.id: self.artifacts[lab.id] for lab in self.cfg.labs}


def _in_dependency_order(labs) -> list[Lab]:
    done: set[str] = set()
    ordered: list[Lab] = []
    while len(ordered) < len(labs):
        for lab in labs:
            if lab.id not in done and set(lab.inputs) <= done:
                ordered.append(lab)
                done.add(lab.id)
    return ordered


def compute_labs(cfg: SiteConfig, cache_dir: Path, **options) -> dict[str, Artifacts]:
    """Artifacts for every lab: from the cache when intact and current, else computed."""
    with LabScheduler(cfg, cache_dir, **options) as labs:
        return labs.start().finish()
