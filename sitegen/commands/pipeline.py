"""The build, phase by phase: config -> compute -> content -> check -> render -> write.

A build holds the locks of its output folder and cache from start to end.
Before any phase runs, the inputs are fingerprinted; when they and the output
folder are exactly as the last successful build left them, there is nothing to
do, and the build stops without importing NumPy, Matplotlib or Jinja. Phases
are imported only when they run. After the labs ran, the sources are
fingerprinted again: a lab that changed one fails the build.
"""
from __future__ import annotations

import dataclasses
import gc
import json
import os
import pickle
from pathlib import Path
from typing import NamedTuple

from ..core.errors import BuildError, Problem, SourcesChanged, os_problem
from ..core.lock import one_build
from ..core.memo import Memo, clear_temporaries, digest, environment, makers_digest, read_pickled
from ..labs.labreads import stale
from ..core.sources import changed, snapshot, source_files
from ..core.stored import size_of
from ..publish.write import check_output_folder, check_replaceable, output_intact, recover, write_site

ATTEMPTS = 3      # builds tried while sources change under them (SourcesChanged), then it is said
STATE = "last-build.pickle"      # what the last build read and wrote (pickled: JSON costs three times more)
LAB_SOURCES = ("site.yaml", "compute/", "frozen/")      # what labs' keys are made of, in the project


class BuildReport(NamedTuple):
    out: Path
    files: int
    bytes: int
    computed: tuple[str, ...] = ()     # labs run this time
    cached: tuple[str, ...] = ()       # labs read from the cache
    frozen: tuple[str, ...] = ()       # labs read from the project's frozen/
    stored: tuple[str, ...] = ()       # what `freeze` stored: frozen/<id> folders
    unchanged: bool = False            # nothing to do: inputs and output as last time
    warnings: tuple = ()               # Problems that --strict would make errors
    rendered: tuple[str, ...] = ()     # pages rendered anew (the others were unchanged)
    resumed: tuple = ()                # (lab, cell) of the labs computed from a checkpoint after that cell


def fingerprint(sources: dict[str, str], out: Path, *options) -> str:
    """A hash of everything a build reads (`sources`: each file's hash), and of how it was asked to build."""
    return digest(makers_digest(), json.dumps(environment(), sort_keys=True), str(out), *options,
                  os.environ.get("SOURCE_DATE_EPOCH", ""), json.dumps(sources, sort_keys=True))


def build(root: Path, out: Path | None = None, *, cache: Path | None = None, **options) -> BuildReport:
    """Build the site at `root` into `out`, one build at a time; see _build for the options."""
    root = Path(root).resolve()
    out = check_output_folder(out or root / "dist", root)
    cache = Path(cache or root / ".cache")
    # The build keeps what it read (pages, results, remembered files) to the end, and frees the
    # rest by reference counting: the cycle collector would walk all of it again and again, for
    # a fifth of a prose edit on a large course. It is back on once the build is over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with one_build(out, cache):
            check_replaceable(out)
            recover(out)                    # what a killed build left: its staging folders
            clear_temporaries(cache)        # and its half-written cache entries
            for attempt in range(ATTEMPTS):
                try:
                    return _build(root, out, cache, **options)
                except SourcesChanged:      # an author saved a file as the build read it: again, on
                    if attempt == ATTEMPTS - 1:     # what is there now (it published nothing)
                        raise
    except OSError as exc:                  # disk full, read-only, no permission: say which file
        problem = os_problem(exc, root)
        if problem is None:
            raise
        raise BuildError(problem) from None
    finally:
        if collecting:
            gc.enable()


def _build(root: Path, out: Path, cache: Path, *, use_cache: bool = True, jobs: int | None = None,
           preview: bool = False, strict: bool = False, base_url: str | None = None,
           timeout: float | None = None, progress=None, freeze: tuple[str, ...] | None = None,
           solutions: str = "folded", kept=None) -> BuildReport:
    """`freeze`: store these labs (all when empty) in frozen/ after the build, computing them anew
    rather than reusing frozen/ (and from the cache when current). `solutions`: exercises' solutions
    folded (a reader opens them), shown (an instructor's build) or omitted (left out of the site).
    `kept`: serve's lab host and checkpoints (resume.KeptLabs), kept from build to build."""
    state_file = cache / STATE
    last = read_pickled(state_file)               # ({} as after no build)
    sources, source_states = snapshot(source_files(root), last.get("source_states") if use_cache else None)
    key = fingerprint(sources, out, preview, strict, base_url, solutions)
    if (use_cache and freeze is None and last.get("fingerprint") == key and output_intact(out, last.get("files", {}))
            and not stale(root, last.get("reads", {}), sources)):
        return BuildReport(out=out, files=last["count"], bytes=last["bytes"], unchanged=True,
                           warnings=tuple(Problem(*w) for w in last.get("warnings", ())))     # said again

    from ..labs.compute import LabScheduler
    # When what labs are made of changed since the last build, labs may have to run: their host
    # starts importing NumPy and Matplotlib now, while this process reads the configuration and
    # works out which must. After an edit elsewhere (a page, a template), only if one must.
    edited = changed(last.get("sources", {}), sources) if last and use_cache else None
    host = None
    if kept is not None:
        host = kept.lab_host()
    elif edited is None or any(rel.startswith(LAB_SOURCES) or rel.endswith(".ipynb") for rel in edited):
        from ..labs.labhost import LabHost
        host = LabHost()
    try:
        from ..project.config import load_config
        memo = Memo(cache / "memo")
        cfg = load_config(root, memo, sources)
        if base_url:
            cfg = dataclasses.replace(cfg, base_url=base_url.rstrip("/"))
        to_freeze = _labs_named(cfg, freeze) if freeze is not None else ()
        labs = LabScheduler(cfg, cache, use_cache=use_cache, jobs=jobs, host=host, timeout=timeout,
                            progress=progress, refreeze=frozenset(to_freeze), memo=memo,
                            hashes=sources, kept=kept)
    except BaseException:
        if host is not None:
            host.stop()
        raise
    with labs:
        labs.start()
        # While labs compute in their own processes, do the rest of the reading here.
        from ..pages.check import check_site
        from ..publish.htmlcheck import check_pages_limits, check_rendered
        from ..pages.content import load_pages
        from ..render.render import render_site, while_labs_run
        from ..pages.nbpage import notebook_pages
        pages = sorted(load_pages(cfg.content_dir, sources, memo) + notebook_pages(root, sources, memo),
                       key=lambda page: page.source.split("/"))
        while_labs_run(cfg, memo, labs.pending, pages, sources)
        artifacts = labs.finish()
    if labs.computed and (touched := changed(sources, snapshot(source_files(root), source_states)[0])):
        if not labs.unconfined:             # no lab could write there: the author saved it meanwhile
            raise SourcesChanged(touched)
        ran = ", ".join(labs.unconfined)
        raise BuildError([Problem(rel, 0, f"changed while lab {ran} ran: a lab may write only in its own working "
                                          "folder (if you edited the file meanwhile, build again)")
                          for rel in touched])
    sitemap = check_site(cfg, pages, artifacts, sources, memo)
    files = render_site(cfg, pages, artifacts, sitemap, sources, preview=preview, memo=memo, solutions=solutions)
    warnings = [Problem(page.source, line, message) for page in pages for line, message in page.notes] \
        + list(check_rendered(cfg, pages, files, memo))
    if strict and warnings:
        raise BuildError([Problem(w.path, w.line, w.message + " (a warning; --strict makes it an error)")
                          for w in warnings])
    check_pages_limits(files)
    written, spare = write_site(files, out, last.get("files") if use_cache else None,
                                last.get("spare") if use_cache else None)
    memo.prune()
    from ..labs.freeze import freeze as store_frozen, is_frozen
    stored = store_frozen(cfg, artifacts, to_freeze)
    total = sum(map(size_of, files.values()))
    state = {"fingerprint": key, "bytes": total, "count": len(files), "files": written, "spare": spare,
             "sources": sources, "source_states": source_states, "warnings": [tuple(w) for w in warnings],
             # what labs read outside the sources (the fingerprint has the rest): checked as it is
             "reads": {rel: seen for art in artifacts.values() for rel, seen in (art.reads or {}).items()
                       if rel not in sources}}
    cache.mkdir(parents=True, exist_ok=True)
    (cache / (STATE + ".tmp")).write_bytes(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(cache / (STATE + ".tmp"), state_file)
    frozen = tuple(a.lab.id for a in artifacts.values() if is_frozen(cfg, a))
    return BuildReport(out=out, files=len(files), bytes=total,
                       computed=tuple(a.lab.id for a in artifacts.values() if a.recomputed),
                       cached=tuple(a.lab.id for a in artifacts.values() if not a.recomputed and a.lab.id not in frozen),
                       frozen=frozen, stored=tuple(stored), warnings=tuple(warnings), rendered=files.rendered,
                       resumed=tuple(kept.resumed.items()) if kept is not None else ())


def compute_only(root: Path, lab_ids: list[str], cache: Path | None = None) -> dict:
    """Compute these labs and the labs they read (from the cache where current), holding the
    build's locks, without building the site: their Artifacts by id."""
    from ..labs.compute import compute_labs
    from ..project.config import load_config
    root = Path(root).resolve()
    cache = Path(cache or root / ".cache")
    with one_build(check_output_folder(root / "dist", root), cache):
        clear_temporaries(cache)
        cfg = load_config(root)
        wanted, todo = set(), list(lab_ids)
        while todo:
            lab = cfg.lab(todo.pop())
            wanted.add(lab.id)
            todo += [name for name in lab.inputs if name not in wanted]
        return compute_labs(dataclasses.replace(cfg, labs=type(cfg.labs)(lab for lab in cfg.labs if lab.id in wanted)),
                            cache)


def _labs_named(cfg, names: tuple[str, ...]) -> tuple[str, ...]:
    """The labs `python build.py freeze NAME...` names (all of them when none), checked."""
    known = [lab.id for lab in cfg.labs]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise BuildError(Problem("site.yaml", 0, f"freeze: no lab {', '.join(map(repr, unknown))} "
                                                 f"(labs: {', '.join(known) or 'none'})"))
    return tuple(names) or tuple(known)


def promised_outputs(root: Path) -> list[str]:
    """What a build of the site at `root` must write, whatever the course: the home and 404 pages, the
    headers and search index, and every page site.yaml names (nav, sequence, labs) with each lab's
    notebook download. A deploy check reads this rather than a list of one course's files."""
    from ..project.config import load_config
    from ..pages.content import load_pages
    from ..pages.nbpage import notebook_pages
    root = Path(root).resolve()
    sources = snapshot(source_files(root))[0]
    cfg = load_config(root, None, sources)
    published = {page.content_path: page.output for page in
                 load_pages(cfg.content_dir, sources) + notebook_pages(root, sources)}
    named = [item.page for item in cfg.nav if item.page] + list(cfg.sequence) + [lab.page for lab in cfg.labs]
    outputs = ["index.html", "404.html", "_headers", "search.json"] + [published[page] for page in named]
    outputs += [lab.notebook for lab in cfg.labs if lab.notebook]
    return list(dict.fromkeys(outputs))
