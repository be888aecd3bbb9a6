"""Phase 2: run each lab's cells and keep what they made, cached on content.

A lab runs in a process of its own, forked from a warm lab host (NumPy and
Matplotlib already imported), in an empty working folder, cell by cell: the printed output of each cell is captured and
every PNG a cell saves is its figure. The files the lab wrote become its
artifacts. The cache key is a hash of everything that can change them (the
script, the project modules it imports, the labs it reads, this harness, the
Python/NumPy/Matplotlib versions), never a time. The build process itself
never imports NumPy or Matplotlib.
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import json
import math
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import traceback
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from .cells import Cell, cell_code, read_cells
from .errors import BuildError, LabFailure, Problem
from .memo import environment

if TYPE_CHECKING:
    from .config import Lab, SiteConfig

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class CellOutput:
    name: str
    stdout: str
    figures: tuple[str, ...]    # artifact names of the PNGs this cell saved


@dataclass(frozen=True)
class Artifacts:
    lab: Lab
    cells: tuple[Cell, ...]
    outputs: dict[str, CellOutput]
    files: dict[str, Path]      # artifact name -> file in the cache entry
    provenance: dict
    recomputed: bool            # False when read from the cache

    @property
    def figures(self) -> list[str]:
        return [f for out in self.outputs.values() for f in out.figures]

    def figure_path(self, name: str) -> str:
        """Published path of a figure: figure-01.png, figure-02.png, ... in order."""
        return f"{self.lab.images}/figure-{self.figures.index(name) + 1:02d}.png"

    @cached_property
    def results(self) -> dict:
        """The lab's results.json, parsed once."""
        return json.loads(self.files["results.json"].read_text(encoding="utf-8"))


# -- cache keys ---------------------------------------------------------------

def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _statements(tree: ast.AST):
    """Every statement, nested ones included: imports are statements, so expressions
    (most of a lab's tree) need no visit: ten times faster than ast.walk."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(reversed(getattr(node, field, ())))


def _local_imports(script: Path, root: Path, seen: set[Path]) -> None:
    """Add to `seen` the script and every project module it imports, recursively."""
    if script in seen:
        return
    seen.add(script)
    try:
        tree = ast.parse(script.read_bytes())
    except SyntaxError:
        return  # the run reports it with file:line
    for node in _statements(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            rel = Path(*name.split("."))
            for base in (script.parent, root):
                for candidate in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
                    if candidate.is_file():
                        _local_imports(candidate.resolve(), root, seen)


def lab_key(cfg: SiteConfig, lab: Lab, env: dict | None = None, input_keys=()) -> str:
    files: set[Path] = set()
    _local_imports(lab.script, cfg.root, files)
    digest = hashlib.sha256()
    digest.update(Path(__file__).read_bytes())          # how labs are run
    digest.update(json.dumps(env or environment(), sort_keys=True).encode())
    digest.update(json.dumps(list(input_keys)).encode())    # labs it reads
    for path in sorted(files):
        digest.update(str(path.relative_to(cfg.root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# -- running a lab (inside a worker process) ---------------------------------

def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in folder.rglob("*") if p.is_file()}


def _failure(script: str, exc: BaseException) -> dict:
    line = getattr(exc, "lineno", 0) if isinstance(exc, SyntaxError) else 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == script:
            line = frame.lineno or line
    message = f"{type(exc).__name__}: {exc}".rstrip(": ")
    return {"line": line, "message": message,
            "trace": "".join(traceback.format_exception(exc))}


def run_cells(script: str, cells: tuple[Cell, ...], workdir: str) -> dict:
    """Execute cells in order in `workdir`; what each printed and which PNGs it saved."""
    os.chdir(workdir)
    os.environ["MPLBACKEND"] = LAB_BACKEND
    sys.path.insert(0, str(Path(script).parent))
    import warnings
    from concurrent.futures import ThreadPoolExecutor
    warnings.filterwarnings("ignore", message=".*non-interactive.*")
    namespace = {"__name__": "__main__", "__file__": script}
    folder, results = Path(workdir), []
    # Figures are re-encoded in threads while the next cells run (Pillow and zlib
    # release the GIL), from a snapshot of their bytes: a file the lab writes
    # again later is re-encoded again at the end.
    threads, encoding = ThreadPoolExecutor(2), {}
    for cell in cells:
        before = _snapshot(folder)
        stdout = io.StringIO()
        try:
            with contextlib.redirect_stdout(stdout):
                exec(compile(cell_code(cell), script, "exec"), namespace)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported
            threads.shutdown(cancel_futures=True)
            return {"cells": results, "error": _failure(script, exc)}
        after = _snapshot(folder)
        figures = sorted(p for p, stamp in after.items()
                         if p.endswith(".png") and before.get(p) != stamp)
        results.append({"name": cell.name, "stdout": stdout.getvalue(), "figures": figures})
        for name in figures:
            data = (folder / name).read_bytes()
            encoding[name] = (data, threads.submit(_quantized, data))
    files = sorted(folder.rglob("*"))
    for path in files:                  # first what needs no figure, while the last ones are encoded
        if path.suffix == ".npz":
            _normalize_zip(path)
            bad = _non_finite_arrays(path)
            if bad:
                threads.shutdown(cancel_futures=True)
                return {"cells": results, "error": {"line": 0, "trace": "", "message":
                        f"non-finite values (NaN or inf) in {path.name}: {', '.join(bad)}"}}
    for path in files:
        if path.suffix == ".png":
            data = path.read_bytes()
            snapshot, future = encoding.get(str(path.relative_to(folder)), (None, None))
            path.write_bytes(future.result() if snapshot == data else _quantized(data))
    threads.shutdown()
    return {"cells": results, "error": None}


def _non_finite_arrays(path: Path) -> list[str]:
    """Names of the numeric arrays in an .npz that hold NaN or inf (NumPy is loaded here)."""
    import numpy as np
    with np.load(path) as data:
        return [name for name in data.files
                if np.issubdtype(data[name].dtype, np.number) and not np.isfinite(data[name]).all()]


PRELOAD = ("numpy", "matplotlib.pyplot", "PIL.Image", "sitegen.labbackend")
LAB_BACKEND = "module://sitegen.labbackend"      # Agg, with fast intermediate PNGs


def _preload() -> None:
    """Import what labs use once, in the lab host, so that every lab forked from it starts warm.

    Each lab still gets a process of its own (forked from this clean state),
    so no lab sees another's global state: the bytes do not depend on which
    labs share a worker or run in parallel.
    """
    os.environ["MPLBACKEND"] = LAB_BACKEND
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass    # the lab reports what it misses


# -- normalising what a lab wrote ----------------------------------------------

def _quantized(data: bytes) -> bytes:
    """The PNG re-encoded with 256 colours and without text chunks (no version strings).

    Plots have few colours: this is about a third of matplotlib's size and
    looks the same. Opaque figures use median cut (octree is several times
    faster but bands colour bars); ones with transparency keep it. zlib level 6:
    level 9 would be 7% smaller and cost 80 ms more per lab.
    """
    from PIL import Image
    with Image.open(io.BytesIO(data)) as image:
        image.load()
    if image.mode == "RGBA" and image.getextrema()[3][0] == 255:
        image = _median_cut(image)
    elif image.mode == "RGB":
        image = image.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    elif image.mode == "RGBA":
        image = image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue()


def _median_cut(image):
    """An opaque RGBA figure in 256 colours: its background colour kept exactly,
    the other 255 chosen by median cut among the pixels that are not background.

    Most of a plot is background; leaving it out of the median cut makes it two
    to six times faster (it is the part of a lab the build adds, and runs for
    every figure), and spends all 255 other colours on what is drawn.
    """
    import numpy as np
    from PIL import Image
    rgba = np.asarray(image)
    pixels = rgba.view(np.uint32)[..., 0]                       # one 32-bit word per RGBA pixel
    drawn = pixels != pixels[0, 0]                              # a figure's corner is its face colour
    if not drawn.any():
        return image.convert("RGB").quantize(1)
    colours = np.ascontiguousarray(pixels[drawn].view(np.uint8).reshape(1, -1, 4)[..., :3])
    strip = Image.fromarray(colours, "RGB").quantize(255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    index = np.full(pixels.shape, 255, dtype=np.uint8)
    index[drawn] = np.asarray(strip)[0]
    palette = strip.getpalette()[:255 * 3]
    result = Image.fromarray(index, "P")
    result.putpalette(palette + [0] * (255 * 3 - len(palette)) + rgba[0, 0, :3].tolist())
    return result


def _normalize_zip(path: Path) -> None:
    """Rewrite a zip (.npz) with fixed member times so equal data gives equal bytes."""
    import zipfile
    with zipfile.ZipFile(path) as source:
        members = [(info.filename, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w") as target:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            target.writestr(info, data, compresslevel=9)


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


def _store(cfg, lab, key, env, rel_script, run, work, staging) -> None:
    if run["error"]:
        err = run["error"]
        raise LabFailure(Problem(rel_script, err["line"], f"lab {lab.id} failed: {err['message']}"), err["trace"])
    files: dict[str, Path] = {}
    for path in sorted(p for p in work.rglob("*") if p.is_file() and p.relative_to(work).parts[0] != "inputs"):
        if path.name in files:
            raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote two files named {path.name!r}: "
                                     "give every artifact a distinct file name"))
        files[path.name] = path
    if "results.json" not in files:
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote no results.json"))
    results = json.loads(files["results.json"].read_text(encoding="utf-8"))
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
                  "script_sha256": _sha256(lab.script.read_bytes()),
                  "seed": results.get("seed"), **env, "computed_at": computed_at(),
                  "cache_key": key,
                  "artifacts": {name: _sha256((out / name).read_bytes())
                                for name in sorted(files) if name != "results.json"}}
    results["provenance"] = provenance
    (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    manifest = {"cells": [{**c, "figures": [Path(f).name for f in c["figures"]]} for c in run["cells"]],
                "provenance": provenance,
                "files": {name: _sha256((out / name).read_bytes()) for name in sorted(files)}}
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(work)


def _load(lab: Lab, cells: tuple[Cell, ...], entry: Path, recomputed: bool) -> Artifacts | None:
    """An intact cache entry as Artifacts, or None when missing or damaged."""
    try:
        manifest = json.loads((entry / "manifest.json").read_text(encoding="utf-8"))
        files = {name: entry / "files" / name for name in manifest["files"]}
        for name, digest in manifest["files"].items():
            if _sha256(files[name].read_bytes()) != digest:
                return None
        outputs = {c["name"]: CellOutput(c["name"], c["stdout"], tuple(c["figures"])) for c in manifest["cells"]}
        if [c.name for c in cells] != list(outputs):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Artifacts(lab, cells, outputs, files, manifest["provenance"], recomputed)


def _run_lab(script: str, cells: tuple[Cell, ...], workdir: str, result: str) -> None:
    """Body of a lab's process: run it, write what it printed and saved to `result` (JSON)."""
    try:
        run = run_cells(script, cells, workdir)
    except BaseException as exc:  # noqa: BLE001 - a harness failure is reported like a lab's
        run = {"cells": [], "error": _failure(script, exc)}
    Path(result + ".tmp").write_text(json.dumps(run), encoding="utf-8")
    os.replace(result + ".tmp", result)


def _host(conn, builds_end) -> None:
    """The lab host's loop: warm up, then fork one process per lab asked for, report each as done.

    Each lab's process holds the write end of a pipe and closes it once its
    result is written, so the build hears of it before the process has torn
    itself down (a few milliseconds with NumPy and Matplotlib loaded).
    """
    from multiprocessing.connection import wait
    builds_end.close()          # so that the build's death reads as end of file here
    children: dict[int, tuple[str, int, str]] = {}     # pipe's read end -> (job id, pid, result file)
    ending: set[int] = set()                          # pids that reported and are exiting

    def stop(*_):
        for pid in {pid for _, pid, _ in children.values()} | ending:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    _preload()
    while True:
        for ready in wait([conn, *children]):
            if ready is conn:
                try:
                    job_id, script, cells, workdir, result = conn.recv()
                except EOFError:             # the build ended or died: so do its labs
                    stop()
                done_read, done_write = os.pipe()
                pid = os.fork()
                if pid == 0:
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    status = 1
                    try:
                        conn.close()
                        os.close(done_read)
                        _run_lab(script, cells, workdir, result)
                        os.close(done_write)
                        status = 0
                    finally:
                        os._exit(status)
                os.close(done_write)
                children[done_read] = (job_id, pid, result)
            else:
                job_id, pid, result = children.pop(ready)
                os.close(ready)
                if os.path.exists(result):
                    ending.add(pid)
                    conn.send((job_id, 0))
                else:                        # it died without a result: say how
                    _, status = os.waitpid(pid, 0)
                    conn.send((job_id, os.waitstatus_to_exitcode(status)))
        for pid in list(ending):
            if os.waitpid(pid, os.WNOHANG)[0]:
                ending.discard(pid)


class LabHost:
    """A process that imports NumPy and Matplotlib at once, then forks a fresh process per lab.

    The build starts it as soon as it knows something changed, so the imports
    run while the build reads its configuration and works out which labs must
    run; it is stopped at once when none must. The build itself never imports
    what labs use. Each lab's process writes its result to a file and the host
    reports when it is done.
    """

    def __init__(self):
        context = multiprocessing.get_context("fork")
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_host, args=(theirs, self.conn), daemon=True)
        self.process.start()
        theirs.close()

    def run(self, job_id: str, script: str, cells: tuple[Cell, ...], workdir: Path, result: Path) -> None:
        self.conn.send((job_id, script, cells, str(workdir), str(result)))

    def finished(self) -> tuple[str, int]:
        """(job id, exit code) of the next lab to be done: 0 once its result is written."""
        return self.conn.recv()

    def stop(self) -> None:
        """End the host and any lab it still runs."""
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()
        self.conn.close()

@dataclass
class _Job:
    lab: Lab
    cells: tuple[Cell, ...]
    key: str
    entry: Path
    staging: Path | None = None

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
    """

    def __init__(self, cfg: SiteConfig, cache_dir: Path, *, use_cache: bool = True, jobs: int | None = None,
                 host: LabHost | None = None):
        # Resolved: each lab runs in its own working folder, so relative paths would point elsewhere.
        self.cfg, self.cache_dir, self.host = cfg, Path(cache_dir).resolve(), host
        self.env = environment()
        self.workers = max(1, jobs or os.cpu_count() or 1)
        self.artifacts: dict[str, Artifacts] = {}
        self.todo: list[_Job] = []
        self.running: dict[str, _Job] = {}       # lab id -> its job
        self.failures: list[BuildError] = []
        keys: dict[str, str] = {}
        for lab in _in_dependency_order(cfg.labs):
            cells = read_cells(lab.script, cfg.root)
            keys[lab.id] = lab_key(cfg, lab, self.env, [keys[name] for name in lab.inputs])
            entry = self.cache_dir / "labs" / lab.id / keys[lab.id]
            found = _load(lab, cells, entry, False) if use_cache else None
            if found is None:
                self.todo.append(_Job(lab, cells, keys[lab.id], entry))
            else:
                self.artifacts[lab.id] = found

    @property
    def computing(self) -> list[_Job]:
        """The labs this build computes (waiting or running): each job's lab and cells."""
        return self.todo + list(self.running.values())

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
            job.staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=job.entry.parent))
            work = job.staging / "work"
            work.mkdir()
            for name in job.lab.inputs:          # what this lab reads: inputs/<lab>/results.json
                (work / "inputs" / name).mkdir(parents=True)
                shutil.copyfile(self.artifacts[name].files["results.json"], work / "inputs" / name / "results.json")
            self.host.run(job.lab.id, str(job.lab.script), job.cells, work, job.result)
            self.running[job.lab.id] = job

    def finish(self) -> dict[str, Artifacts]:
        if not self.running and self.todo:
            self.start()
        while self.running:
            lab_id, exitcode = self.host.finished()
            job = self.running.pop(lab_id)
            try:
                run = json.loads(job.result.read_text(encoding="utf-8"))
                job.result.unlink()
            except (OSError, ValueError):
                run = {"cells": [], "error": {"line": 0, "trace": "", "message":
                       f"the lab's process ended without a result (exit code {exitcode})"}}
            try:
                _store(self.cfg, job.lab, job.key, self.env, str(job.lab.script.relative_to(self.cfg.root)),
                       run, job.staging / "work", job.staging)
                for old in job.entry.parent.iterdir():   # one entry per lab: drop stale keys
                    if old.name != job.staging.name and not old.name.startswith(".tmp-"):
                        shutil.rmtree(old)
                os.replace(job.staging, job.entry)
                self.artifacts[job.lab.id] = _load(job.lab, job.cells, job.entry, True)
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


def compute_labs(cfg: SiteConfig, cache_dir: Path, *, use_cache: bool = True,
                 jobs: int | None = None) -> dict[str, Artifacts]:
    """Artifacts for every lab: from the cache when intact and current, else computed."""
    with LabScheduler(cfg, cache_dir, use_cache=use_cache, jobs=jobs) as labs:
        return labs.start().finish()
