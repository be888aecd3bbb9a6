"""The build, phase by phase: config -> compute -> content -> check -> render -> write.

Before any phase runs, the inputs are fingerprinted; when they and the output
folder are exactly as the last successful build left them, there is nothing to
do, and the build stops without importing NumPy, Matplotlib or Jinja. Phases
are imported only when they run.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError, Problem
from .memo import digest, environment, generator_digest
from .write import check_output_folder

SOURCES = ("site.yaml", "content", "compute", "templates", "static")
STATE = "last-build.json"


@dataclass(frozen=True)
class BuildReport:
    out: Path
    files: int
    bytes: int
    computed: tuple[str, ...] = ()     # labs run this time
    cached: tuple[str, ...] = ()       # labs read from the cache
    unchanged: bool = False            # nothing to do: inputs and output as last time
    warnings: tuple = ()               # Problems that --strict would make errors


def fingerprint(root: Path, out: Path, *options) -> str:
    """A hash of everything a build reads, and of how it was asked to build."""
    parts = [generator_digest(), json.dumps(environment(), sort_keys=True), str(out), *options,
             os.environ.get("SOURCE_DATE_EPOCH", "")]
    for name in SOURCES:
        path = root / name
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if "__pycache__" not in file.parts and file.exists():
                parts += [file.relative_to(root).as_posix(), file.read_bytes()]
    return digest(*parts)


def _tree(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


def _unchanged(state_file: Path, key: str, out: Path) -> dict | None:
    try:
        state = json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if state.get("fingerprint") != key or not out.is_dir() or _tree(out) != state.get("files"):
        return None
    return state


def build(root: Path, out: Path | None = None, *, cache: Path | None = None,
          use_cache: bool = True, jobs: int | None = None, preview: bool = False,
          strict: bool = False, base_url: str | None = None) -> BuildReport:
    root = Path(root).resolve()
    out = check_output_folder(out or root / "dist", root)
    cache = Path(cache or root / ".cache")
    key = fingerprint(root, out, preview, strict, base_url)
    state_file = cache / STATE
    if use_cache and (state := _unchanged(state_file, key, out)):
        return BuildReport(out=out, files=len(state["files"]), bytes=state["bytes"], unchanged=True)

    from .compute import LabHost, LabScheduler
    # Labs may have to run: their host starts importing NumPy and Matplotlib now,
    # while this process reads the configuration and works out which must.
    host = LabHost()
    try:
        from .config import load_config
        cfg = load_config(root)
        if base_url:
            cfg = dataclasses.replace(cfg, base_url=base_url.rstrip("/"))
        labs = LabScheduler(cfg, cache, use_cache=use_cache, jobs=jobs, host=host)
    except BaseException:
        host.stop()
        raise
    with labs:
        labs.start()
        # While labs compute in their own processes, do the rest of the reading here.
        from .check import check_pages_limits, check_rendered, check_site
        from .content import load_pages
        from .memo import Memo
        from .render import highlighted, pygments_css, render_site, warm_up
        from .write import write_site
        pages = load_pages(cfg.content_dir)
        memo = Memo(cache / "memo")
        pygments_css(memo)
        if labs.computing:
            warm_up(cfg, memo)
        for job in labs.computing:
            for cell in job.cells:
                highlighted(memo, cell.source)
        if any(job.lab.notebook for job in labs.computing):
            from .notebook import load_nbformat
            load_nbformat()
        artifacts = labs.finish()
    check_site(cfg, pages, artifacts, memo)
    files = render_site(cfg, pages, artifacts, preview=preview, memo=memo)
    warnings = check_rendered(cfg, pages, files)
    if strict and warnings:
        raise BuildError([Problem(w.path, w.line, w.message + " (a warning; --strict makes it an error)")
                          for w in warnings])
    check_pages_limits(files)
    write_site(files, out)
    memo.prune()
    total = sum(map(len, files.values()))
    state = {"fingerprint": key, "bytes": total,
             "files": {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())}}
    cache.mkdir(parents=True, exist_ok=True)
    (cache / (STATE + ".tmp")).write_text(json.dumps(state, indent=1), encoding="utf-8")
    os.replace(cache / (STATE + ".tmp"), state_file)
    return BuildReport(out=out, files=len(files), bytes=total,
                       computed=tuple(a.lab.id for a in artifacts.values() if a.recomputed),
                       cached=tuple(a.lab.id for a in artifacts.values() if not a.recomputed),
                       warnings=tuple(warnings))
