"""Phase 2: run each lab's cells and keep what they made, cached on content.

A lab runs in a worker process, in an empty working folder, cell by cell: the
printed output of each cell is captured and every PNG a cell saves is its
figure. The files the lab wrote become its artifacts. The cache key is a hash
of everything that can change them (the script, the project modules it
imports, this harness, the Python/NumPy/Matplotlib versions), never a time.
NumPy and Matplotlib are imported only inside the worker, so a build whose
labs are all cached never imports them.
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
import sys
import tempfile
import traceback
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from datetime import datetime, timezone
from pathlib import Path

from .cells import Cell, cell_code, read_cells
from .config import Lab, SiteConfig
from .errors import BuildError, LabFailure, Problem
from .memo import environment

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


def _local_imports(script: Path, root: Path, seen: set[Path]) -> None:
    """Add to `seen` the script and every project module it imports, recursively."""
    if script in seen:
        return
    seen.add(script)
    try:
        tree = ast.parse(script.read_bytes())
    except SyntaxError:
        return  # the run reports it with file:line
    for node in ast.walk(tree):
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
    os.environ["MPLBACKEND"] = "Agg"
    sys.path.insert(0, str(Path(script).parent))
    import warnings
    warnings.filterwarnings("ignore", message=".*non-interactive.*")
    namespace = {"__name__": "__main__", "__file__": script}
    folder, results = Path(workdir), []
    for cell in cells:
        before = _snapshot(folder)
        stdout = io.StringIO()
        try:
            with contextlib.redirect_stdout(stdout):
                exec(compile(cell_code(cell), script, "exec"), namespace)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported
            return {"cells": results, "error": _failure(script, exc)}
        after = _snapshot(folder)
        figures = sorted(p for p, stamp in after.items()
                         if p.endswith(".png") and before.get(p) != stamp)
        results.append({"name": cell.name, "stdout": stdout.getvalue(), "figures": figures})
    normalize = {".png": _normalize_png, ".npz": _normalize_zip}
    with ThreadPoolExecutor(2) as threads:    # Pillow and zlib release the GIL: use both cores
        list(threads.map(lambda p: normalize[p.suffix](p),
                         [p for p in sorted(folder.rglob("*")) if p.suffix in normalize]))
    return {"cells": results, "error": None}


PRELOAD = ("numpy", "matplotlib.pyplot", "PIL.Image")


def _preload() -> None:
    """Import what labs use once, in the parent, so that every forked lab starts warm.

    Each lab still gets a process of its own (forked from this clean state),
    so no lab sees another's global state: the bytes do not depend on which
    labs share a worker or run in parallel.
    """
    os.environ["MPLBACKEND"] = "Agg"
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass    # the lab reports what it misses


# -- normalising what a lab wrote ----------------------------------------------

def _normalize_png(path: Path) -> None:
    """Re-encode as a 256-colour palette PNG without text chunks (no version strings).

    Plots have few colours: this is about a third of matplotlib's size and
    looks the same. Opaque figures use median cut; ones with transparency keep it.
    """
    from PIL import Image
    with Image.open(path) as image:
        image.load()
    if image.mode == "RGBA" and image.getextrema()[3][0] == 255:
        image = image.convert("RGB")
    if image.mode == "RGB":
        image = image.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    elif image.mode == "RGBA":
        image = image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    image.save(path, format="PNG", compress_level=9)


def _normalize_zip(path: Path) -> None:
    """Rewrite a zip (.npz) with fixed member times so equal data gives equal bytes."""
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
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id}: non-finite values (NaN or inf) in "
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


def _run_wave(cfg, env, todo, artifacts, pool) -> list[BuildError]:
    """Compute labs whose inputs are ready, in parallel; store each into the cache."""
    stagings, failures = [], []
    try:
        for lab, _, _, entry in todo:
            entry.parent.mkdir(parents=True, exist_ok=True)
            stagings.append(Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent)))
            for name in lab.inputs:      # what this lab reads: inputs/<lab>/results.json
                target = stagings[-1] / "work" / "inputs" / name
                target.mkdir(parents=True)
                shutil.copyfile(artifacts[name].files["results.json"], target / "results.json")
            (stagings[-1] / "work").mkdir(exist_ok=True)
        runs = [pool.apply_async(run_cells, (str(lab.script), cells, str(staging / "work")))
                for (lab, cells, _, _), staging in zip(todo, stagings)]
        for (lab, cells, key, entry), staging, run in zip(todo, stagings, runs):
            try:
                _store(cfg, lab, key, env, str(lab.script.relative_to(cfg.root)),
                       run.get(), staging / "work", staging)
            except BuildError as exc:
                failures.append(exc)
                continue
            for old in entry.parent.iterdir():   # one entry per lab: drop stale keys
                if old.name != staging.name and not old.name.startswith(".tmp-"):
                    shutil.rmtree(old)
            os.replace(staging, entry)
            artifacts[lab.id] = _load(lab, cells, entry, True)
    finally:
        for staging in stagings:
            shutil.rmtree(staging, ignore_errors=True)
    return failures


def compute_labs(cfg: SiteConfig, cache_dir: Path, *, use_cache: bool = True,
                 jobs: int | None = None) -> dict[str, Artifacts]:
    """Artifacts for every lab: from the cache when intact and current, else computed.

    Labs run in waves: a lab whose `inputs` are other labs waits for them, and
    its cache key includes theirs. Each wave's labs run in a pool of worker
    processes (one per core by default); each result is stored under a
    temporary name and renamed into the cache.
    """
    env = environment()
    artifacts: dict[str, Artifacts] = {}
    keys: dict[str, str] = {}
    failures: list[BuildError] = []
    pending = list(cfg.labs)
    pool = None
    try:
        while pending:
            wave = [lab for lab in pending if all(name in artifacts for name in lab.inputs)]
            if not wave:
                break            # what is left depends on a lab that failed
            pending = [lab for lab in pending if lab not in wave]
            todo = []
            for lab in wave:
                cells = read_cells(lab.script, cfg.root)
                keys[lab.id] = lab_key(cfg, lab, env, [keys[name] for name in lab.inputs])
                entry = cache_dir / "labs" / lab.id / keys[lab.id]
                found = _load(lab, cells, entry, False) if use_cache else None
                if found is None:
                    todo.append((lab, cells, keys[lab.id], entry))
                else:
                    artifacts[lab.id] = found
            if todo:
                if pool is None:
                    _preload()
                    workers = max(1, min(len(cfg.labs), jobs or os.cpu_count() or 1))
                    pool = multiprocessing.get_context("fork").Pool(workers, maxtasksperchild=1)
                failures += _run_wave(cfg, env, todo, artifacts, pool)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    if failures:
        raise failures[0] if len(failures) == 1 else BuildError([p for exc in failures for p in exc.problems])
    return {lab.id: artifacts[lab.id] for lab in cfg.labs}
