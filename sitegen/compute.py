"""Phase 2: run each lab's cells and keep what they made, cached on content.

A lab runs in a process of its own, forked from a warm lab host (labhost.py),
in an empty working folder that is the only place it may write, cell by cell
(labrun.py): the printed output of each cell is captured and every PNG a cell
saves is its figure. The files the lab wrote become its artifacts. The cache
key is a hash of everything that can change them (the script, the project
modules it imports, the labs it reads, the harness that runs it, the
Python/NumPy/Matplotlib/Pillow versions, the fonts figures fall back on),
never a time. A lab that runs past
its timeout is stopped with everything it started. The build process itself
never imports NumPy or Matplotlib.
"""
from __future__ import annotations

import ast
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .artifacts import Artifacts, load_entry, sha256
from .cells import Cell, read_cells
from .errors import BuildError, Collector, LabFailure, Problem
from .figurefonts import locate
from .freeze import load_frozen
from .labhost import LabHost
from .memo import GENERATOR, TEMPORARY, Memo, environment

if TYPE_CHECKING:
    from .config import Lab, SiteConfig

# How a lab is run and what is kept of it: a change to any of these may change a byte of its artifacts.
HARNESS = ("compute.py", "artifacts.py", "labrun.py", "labhost.py", "sandbox.py", "cells.py", "labbackend.py",
           "figurefonts.py")
DEFAULT_TIMEOUT = 600           # seconds a lab may run, unless site.yaml or --timeout says otherwise


# -- cache keys ---------------------------------------------------------------

def _statements(tree: ast.AST):
    """Every statement, nested ones included: imports are statements, so expressions
    (most of a lab's tree) need no visit: ten times faster than ast.walk."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(reversed(getattr(node, field, ())))


def _imported_names(data: bytes, memo: Memo) -> list[str]:
    """The modules a script's source imports (absolute imports, with `from` names), remembered
    under the source's hash: an unchanged script is not parsed again."""
    def parse() -> bytes:
        try:
            tree = ast.parse(data)
        except SyntaxError:
            return b"[]"        # the run reports it with file:line
        names = []
        for node in _statements(tree):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        return json.dumps(names).encode()
    return json.loads(memo.get("imports", (sys.version, hashlib.sha256(data).hexdigest()), parse))


def _local_imports(script: Path, root: Path, seen: set[Path], memo: Memo) -> None:
    """Add to `seen` the script and every project module it imports, recursively."""
    if script in seen:
        return
    seen.add(script)
    for name in _imported_names(script.read_bytes(), memo):
        rel = Path(*name.split("."))
        for base in (script.parent, root):
            for candidate in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
                if candidate.is_file():
                    _local_imports(candidate.resolve(), root, seen, memo)


def source_key(cfg: SiteConfig, lab: Lab, input_keys=(), memo: Memo | None = None) -> str:
    """What the author wrote that a lab's artifacts follow from: its script, the project modules it
    imports, how its cells are shown (`display`), and the source keys of the labs it reads. A frozen lab is reused while this holds."""
    files: set[Path] = set()
    _local_imports(lab.script, cfg.root, files, memo or Memo(None))
    digest = hashlib.sha256(json.dumps(list(input_keys)).encode())
    if lab.display != "script":
        digest.update(f"display={lab.display}\0".encode())
    for path in sorted(files):
        digest.update(str(path.relative_to(cfg.root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def lab_key(cfg: SiteConfig, lab: Lab, env: dict | None = None, input_keys=(), source: str | None = None) -> str:
    """The cache key: the lab's source key, its inputs' keys, the harness and the versions it runs with."""
    digest = hashlib.sha256((source or source_key(cfg, lab)).encode())
    for name in HARNESS:                                 # how labs are run
        digest.update(name.encode() + b"\0" + (GENERATOR / name).read_bytes() + b"\0")
    digest.update(json.dumps(env or environment(), sort_keys=True).encode())
    digest.update(json.dumps(list(input_keys)).encode())    # labs it reads
    return digest.hexdigest()


def _font_files(cfg: SiteConfig, memo: Memo) -> dict:
    """The fonts figures fall back on, by content (hashed once per file state, not every build)."""
    if not cfg.figure_fonts:
        return {}
    fonts = {}
    for spec in cfg.figure_fonts:
        path = locate(spec)
        stat = path.stat()
        fonts[spec] = memo.get("font-sha256", (str(path), stat.st_size, stat.st_mtime_ns),
                               lambda: sha256(path.read_bytes()).encode()).decode()
    return {"figure_fonts": fonts}


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
    try:
        results = json.loads(files["results.json"].read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote a results.json that is not valid JSON "
                                 f"({exc}): write it with json.dump")) from None
    if not isinstance(results, dict):
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id}'s results.json must hold an object "
                                 f"({{\"key\": value, ...}}), not {type(results).__name__}"))
    bad = _non_finite(results)
    if bad:
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} failed: non-finite values (NaN or inf) in "
                                 f"results.json at {', '.join(bad[:5])}"))
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
        self.env = {**environment(), **_font_files(cfg, memo)}
        self.workers = max(1, jobs or os.cpu_count() or 1)
        self.artifacts: dict[str, Artifacts] = {}
        self.todo: list[_Job] = []
        self.running: dict[str, _Job] = {}       # lab id -> its job
        self.failures: list[BuildError] = []
        keys: dict[str, str] = {}
        sources: dict[str, str] = {}
        stale = Collector()
        for lab in _in_dependency_order(cfg.labs):
            cells = read_cells(lab.script, cfg.root)
            sources[lab.id] = source_key(cfg, lab, [sources[name] for name in lab.inputs], memo)
            if lab.id not in refreeze and (frozen := load_frozen(cfg, lab, cells, sources[lab.id], stale)):
                self.artifacts[lab.id] = frozen
                keys[lab.id] = frozen.provenance["cache_key"]
                continue
            keys[lab.id] = lab_key(cfg, lab, self.env, [keys[name] for name in lab.inputs], sources[lab.id])
            entry = self.cache_dir / "labs" / lab.id / keys[lab.id]
            found = load_entry(lab, cells, entry, False) if use_cache else None
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
        self.host = self.host or LabHost()
        self._launch_ready()
        return self

    def _launch_ready(self) -> None:
        for job in list(self.todo):
            if len(self.running) >= self.workers:
                break
            if not all(name in self.artifacts for name in job.lab.inputs):
                continue
            self.todo.remove(job)
            job.entry.parent.mkdir(parents=True, exist_ok=True)
            job.staging = Path(tempfile.mkdtemp(prefix=TEMPORARY, dir=job.entry.parent))
            work = job.staging / "work"
            work.mkdir()
            for name in job.lab.inputs:          # what this lab reads: inputs/<lab>/results.json
                (work / "inputs" / name).mkdir(parents=True)
                shutil.copyfile(self.artifacts[name].files["results.json"], work / "inputs" / name / "results.json")
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

    def finish(self) -> dict[str, Artifacts]:
        if not self.running and self.todo:
            self.start()
        while self.running:
            lab_id, exitcode = self._wait()
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
