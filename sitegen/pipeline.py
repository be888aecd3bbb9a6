"""The build, phase by phase: config -> compute -> content -> check -> render -> write."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .check import check_links, check_pages_limits, check_site
from .compute import compute_labs
from .config import load_config
from .content import load_pages
from .render import render_site
from .write import check_output_folder, write_site


@dataclass(frozen=True)
class BuildReport:
    out: Path
    files: int
    bytes: int
    computed: tuple[str, ...]     # labs run this time
    cached: tuple[str, ...]       # labs read from the cache


def build(root: Path, out: Path | None = None, *, cache: Path | None = None,
          use_cache: bool = True, jobs: int | None = None, preview: bool = False) -> BuildReport:
    cfg = load_config(root)
    out = check_output_folder(out or cfg.root / "dist", cfg.root)
    pages = load_pages(cfg.content_dir)
    artifacts = compute_labs(cfg, cache or cfg.root / ".cache", use_cache=use_cache, jobs=jobs)
    check_site(cfg, pages, artifacts)
    files = render_site(cfg, pages, artifacts, preview=preview)
    check_links(cfg, pages, files)
    check_pages_limits(files)
    write_site(files, out)
    return BuildReport(out=out, files=len(files), bytes=sum(map(len, files.values())),
                       computed=tuple(a.lab.id for a in artifacts.values() if a.recomputed),
                       cached=tuple(a.lab.id for a in artifacts.values() if not a.recomputed))
