"""The build, phase by phase: config -> compute -> content -> check -> render -> write.

First, the last build's stamp (core/stamp.py): when every input and output file
is in the state that build left it in, there is nothing to do, and the build
stops having hashed nothing and imported no phase. Otherwise the build holds
the locks of its output folder and cache from start to end. Before any phase
runs, the inputs are fingerprinted; when they and the output folder are
exactly as the last successful build left them (a file touched, not changed),
there is nothing to do either. Phases are imported only when they run. After
the labs ran, the sources are fingerprinted again: a lab that changed one
fails the build.
"""
from __future__ import annotations

import collections
import gc
import os
from pathlib import Path

from ..core import stamp
from ..core.cachedir import MEMO, STAMP, STATE, cache_folder
from ..core.errors import BuildError, Collector, DamagedFile, Problem, SourcesChanged, disk_full, os_problem
from ..core.sources import SKIPPED, SOURCES

# Imported here only what a build that finds nothing changed needs (stamp.py): the phases, and the
# rest of the build's own machinery, are imported when they run.
ATTEMPTS = 3      # builds tried while sources change under them (SourcesChanged), then it is said
LAB_SOURCES = ("site.yaml", "compute/", "frozen/")      # what labs' keys are made of, in the project


# What a build did: its output folder, files and bytes; the labs run this time (`computed`), read
# from the cache (`cached`) or from the project's frozen/ (`frozen`); what `freeze` froze (`froze`: frozen/<id>
# folders); whether it found nothing to do (`unchanged`: inputs and output as last time); the
# Problems that --strict would make errors (`warnings`); the pages rendered anew (`rendered`: the
# others were unchanged); (lab, cell) of the labs computed from a checkpoint after that cell; and
# (lab, seconds until its results.json was final, seconds until its process ended) of those computed;
# whether the pages rendered were patched into the last site (`patched`: patch.py).
BuildReport = collections.namedtuple(
    "BuildReport", "out files bytes computed cached frozen froze unchanged warnings rendered resumed timings patched "
    "notes", defaults=((), (), (), (), False, (), (), (), (), False, ()))


def build_key(out: Path, preview: bool, strict: bool, base_url: str | None, solutions: str) -> list:
    """How a build was asked to build, besides its sources: the same, and the same sources, make the same site."""
    return [str(out), preview, strict, base_url, solutions, os.environ.get("SOURCE_DATE_EPOCH", "")]


def fingerprint(snapshot: dict[str, str], key: list) -> str:
    """A hash of everything a build reads (`snapshot`: each file's hash; the installed distributions), and
    of how it was asked to build (`key`)."""
    import json
    from ..core.memo import digest, environment, installed_digest, makers_digest
    return digest(makers_digest(), json.dumps(environment(), sort_keys=True), installed_digest(), *key,
                  json.dumps(snapshot, sort_keys=True))


def build(root: Path, out: Path | None = None, *, cache: Path | None = None, use_cache: bool = True,
          preview: bool = False, strict: bool = False, base_url: str | None = None, solutions: str | None = None,
          freeze: tuple[str, ...] | None = None, **options) -> BuildReport:
    """Build the site at `root` into `out`, one build at a time; see _build for the options (`solutions`
    None: as site.yaml says)."""
    root = Path(root).resolve()
    cache = cache_folder(root, cache)
    key = build_key(Path(os.path.abspath(out or root / "dist")), preview, strict, base_url, solutions)
    if use_cache and freeze is None and (report := as_last_time(root, cache, key)) is not None:
        return report
    from ..core.lock import one_build
    from ..core.memo import GENERATOR, clear_temporaries
    from ..labs.labreads import BuildRecorder, recording
    from ..publish.write import check_output_folder, check_replaceable, recover, written_folders
    out = check_output_folder(out or root / "dist", root)
    # What the build itself reads of the project besides its sources (set once they are listed).
    own = BuildRecorder(str(root), tuple(map(str, (cache, *written_folders(out), GENERATOR))), {})
    # The build keeps what it read (pages, results, remembered files) to the end, and frees the
    # rest by reference counting: the cycle collector would walk all of it again and again, for
    # a fifth of a prose edit on a large course. It is back on once the build is over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with one_build(out, cache), recording(own):
            check_replaceable(out)
            recover(out)                    # what a killed build left: its staging folders
            clear_temporaries(cache)        # and its half-written cache entries
            verify, forgot = False, None
            for attempt in range(ATTEMPTS):
                try:
                    report = _build(root, out, cache, key, own, use_cache=use_cache, preview=preview, strict=strict,
                                    base_url=base_url, solutions=solutions, freeze=freeze, verify=verify, **options)
                    return report if forgot is None else report._replace(warnings=(*report.warnings, forgot))
                except SourcesChanged:      # an author saved a file as the build read it: again, on
                    if attempt == ATTEMPTS - 1:     # what is there now (it published nothing)
                        raise
                except DamagedFile:         # a kept file changed since it was kept (it published nothing):
                    if verify:              # again, taking none from the memo unchecked; said if it was not
                        raise
                    verify = True
                except (BuildError, OSError, ImportError):
                    raise                   # the author's to mend, the disk's, a package missing
                except Exception as exc:    # a bug of ours, perhaps in what the last build remembered: that
                    if forgot is not None or not use_cache:     # goes, and the build runs again without it;
                        raise               # a bug that survives it is said as one (cli.py)
                    forgot = forget_last_build(cache, exc)
    except OSError as exc:                  # disk full, read-only, no permission: say which file
        problem = os_problem(exc, root)
        if problem is None:
            raise
        raise BuildError(problem) from None
    finally:
        if collecting:
            gc.enable()


def forget_last_build(cache: Path, exc: Exception) -> Problem:
    """Drop what the last build remembered besides the labs' entries (the memo and its state: cheap to
    make again; the labs' entries are checked by their own hashes), after `exc` was raised using it.
    What a build says of it: not the author's mistake, so never an error under --strict."""
    import shutil
    shutil.rmtree(cache / MEMO, ignore_errors=True)
    for name in (STATE, STAMP):
        (cache / name).unlink(missing_ok=True)
    return Problem(str(cache), 0, f"what the last build remembered led to an error ({type(exc).__name__}: {exc}); "
                                  f"it was dropped and the site built without it. This is a bug in the generator: "
                                  f"please report it")


def as_last_time(root: Path, cache: Path, key: list) -> BuildReport | None:
    """The last build's report, when its stamp finds every input and output as it left them, and
    asked to build as then (`key`); else None. Takes no lock: it only reads, and a build that
    replaces the output writes its stamp only after it (a mix of the two never matches)."""
    found = stamp.unchanged(cache, str(root), key[0], key, SOURCES, SKIPPED)
    if found is None:
        return None
    if found["reads"]:
        from ..labs.labreads import stale
        if stale(root, found["reads"], {}):          # (none of them is a source)
            return None
    count, size, warnings = found["report"]
    return BuildReport(out=Path(key[0]), files=count, bytes=size, unchanged=True,
                       warnings=tuple(Problem(*w) for w in warnings))     # said again


def _stamp(root: Path, cache: Path, key: list, files: dict[str, str], source_states: dict, reads: dict,
           outputs: dict, report: tuple) -> None:
    """The stamp of a build that succeeded (stamp.py), for as_last_time."""
    from ..core.memo import generator_states
    # (The project's own: the theme's files the generator supplies are its, in generator_states,
    # though the generator may lie inside the project, as in its own repository.)
    own = [rel for rel, path in files.items() if path == f"{root}/{rel}"]
    project = {rel: tuple(source_states[rel][1:]) for rel in own if rel in source_states}
    if len(project) < len(own):
        project = None      # a source's state had not settled: no stamp until it has
    stamp.write(cache, key, generator_states(), project, reads, outputs, report)


def _build(root: Path, out: Path, cache: Path, key: list, own, *, use_cache: bool, preview: bool, strict: bool,
           base_url: str | None, solutions: str | None, freeze: tuple[str, ...] | None, jobs: int | None = None,
           timeout: float | None = None, progress=None, kept=None, verify: bool = False) -> BuildReport:
    """`key`: build_key of the options; `own`: the BuildRecorder of what it reads. `freeze`: store these labs (all when empty) in frozen/ after the build, computing them anew
    rather than reusing frozen/ (and from the cache when current). `solutions`: exercises' solutions
    folded (a reader opens them), shown (an instructor's build) or omitted (left out of the site);
    None: as site.yaml says (config.SOLUTIONS).
    `kept`: serve's lab host and checkpoints (resume.KeptLabs), kept from build to build. `verify`: check
    every file the memo hands out by its hash (after one was found changed), not only those read."""
    from ..core.memo import Memo, read_pickled
    from ..core.sources import changed, take_snapshot, source_files
    from ..labs.labreads import stale
    from ..publish.write import output_intact
    last = read_pickled(cache / STATE)               # ({} as after no build)
    found = source_files(root)
    own.known, own.reads = found, {}        # (a build tried again reads anew)
    snapshot, source_states = take_snapshot(found, last.get("source_states") if use_cache else None)
    fingerprinted = fingerprint(snapshot, key)
    if (use_cache and freeze is None and last.get("fingerprint") == fingerprinted
            and (intact := output_intact(out, last.get("files", {}))) is not None
            and not stale(root, last.get("reads", {}), snapshot)):
        # (touched but not changed: the stamp holds the states now, for the next build to stop sooner)
        _stamp(root, cache, key, found, source_states, last.get("reads", {}), intact,
               (last["count"], last["bytes"], last.get("warnings", [])))
        return BuildReport(out=out, files=last["count"], bytes=last["bytes"], unchanged=True,
                           warnings=tuple(Problem(*w) for w in last.get("warnings", ())))     # said again

    edited = changed(last.get("sources", {}), snapshot) if last and use_cache else None
    # When what labs are made of changed since the last build, labs may have to run: their host
    # starts first, importing what the edited labs import, while this process reads the configuration
    # and works out which must (no edit of theirs is patched in). After an edit elsewhere (a page, a
    # template), only if one must.
    from ..project.nbsource import edits_notebook
    host = None
    if kept is None and (edited is None or any(rel.startswith(LAB_SOURCES) for rel in edited)
                         or edits_notebook(root, edited)):
        from ..labs.labhost import LabHost
        from ..labs.warm import modules_edited
        host = LabHost(warm=modules_edited(root, edited or ()))
    # An edit to pages' prose alone, all else as the last build found it: patched into its site (patch.py).
    if (edited and host is None and freeze is None and not verify and "patch" in last
            and fingerprint({**snapshot, **{rel: last["sources"].get(rel) for rel in edited}}, key) == last["fingerprint"]
            and not stale(root, last.get("reads", {}), snapshot)):
        from .patch import patch
        memo = Memo(cache / MEMO, whole=False)        # (it reads a few entries: from their files)
        # (the .md files that are notebooks are the last build's: only prose pages were edited, none a notebook)
        info = _patch_info(last)
        cfg = _config(root, memo, snapshot, base_url, frozenset(info.get("text_notebooks", ())))
        patched = patch(out, cfg, memo, last, info, snapshot, edited, solutions or cfg.solutions, preview)
        if patched is not None:
            files, rendered, info = patched
            warnings = [Problem(*w) for w in last.get("warnings", ())]
            written, total = _publish(files, warnings, out, last, strict=strict, use_cache=use_cache)
            _save_state(root, cache, key, found, snapshot, source_states, fingerprinted, files, total, written,
                    warnings, {**last.get("reads", {}), **own.reads}, info)
            return BuildReport(out=out, files=len(files), bytes=total, warnings=tuple(warnings), rendered=rendered,
                               cached=tuple(lab for lab in info["labs"] if lab not in info["frozen"]),
                               frozen=info["frozen"], patched=True)

    from ..labs.compute import LabScheduler
    from ..project.nbsource import text_notebooks
    if kept is not None:
        host = kept.lab_host()
    try:
        memo = Memo(cache / MEMO, verify)
        cfg = _config(root, memo, snapshot, base_url)
        solutions = solutions or cfg.solutions
        to_freeze = _labs_named(cfg, freeze) if freeze is not None else ()
        labs = LabScheduler(cfg, cache, use_cache=use_cache, jobs=jobs, host=host, timeout=timeout,
                            progress=progress, refreeze=frozenset(to_freeze), memo=memo,
                            snapshot=snapshot, kept=kept)
    except BaseException:
        if host is not None:
            host.stop()
        raise
    with labs:
        labs.start()
        # While labs compute in their own processes, do the rest of the reading here.
        from ..pages.check import check_site
        from ..pages.labels import site_labels
        from ..pages.shared import Shared
        from ..project.bibliography import site_bibliography
        from ..publish.htmlcheck import check_rendered
        from ..pages.content import load_pages
        from ..render.render import render_site, while_labs_run
        from ..pages.nbpage import notebook_pages
        from ..project.books import book_notes
        try:
            pages = sorted(load_pages(cfg.content_dir, snapshot, memo, text_notebooks(root, snapshot, memo))
                           + notebook_pages(root, snapshot, memo),
                           key=lambda page: page.source.split("/"))
            while_labs_run(cfg, memo, labs.pending, pages, snapshot, solutions)
        except OSError as exc:
            if disk_full(exc):              # a lab may have filled it: then its failure is what is said
                labs.finish()
            raise
        artifacts = labs.finish()
    if labs.computed and (touched := changed(snapshot, take_snapshot(source_files(root), source_states)[0])):
        if not labs.unconfined:             # no lab could write there: the author saved it meanwhile
            raise SourcesChanged(touched)
        ran = ", ".join(labs.unconfined)
        raise BuildError([Problem(rel, 0, f"changed while lab {ran} ran: a lab may write only in its own working "
                                          "folder (if you edited the file meanwhile, build again)")
                          for rel in touched])
    shared, said = Shared(site_labels(pages, cfg.vocabulary.words), site_bibliography(cfg, snapshot, memo)), Collector()
    sitemap, looked_up = check_site(cfg, pages, artifacts, snapshot, shared, said, memo)
    files = render_site(cfg, pages, artifacts, sitemap, snapshot, preview=preview, memo=memo, solutions=solutions,
                        shared=shared)
    warnings = [Problem(page.source, line, message) for page in pages for line, message in page.notes] \
        + said.problems + list(check_rendered(cfg, pages, files, memo)) + book_notes(root, snapshot, memo)
    written, total = _publish(files, warnings, out, last, strict=strict, use_cache=use_cache)
    memo.prune(sweep=bool(_patch_info(last).get("patches")))     # (what patched builds left, too)
    from ..labs.freeze import freeze as store_frozen, is_frozen
    from ..pages.check import check_context
    from .patch import patch_info
    froze = store_frozen(cfg, artifacts, to_freeze)
    frozen = tuple(a.lab.id for a in artifacts.values() if is_frozen(cfg, a))
    # what labs and the build read outside the sources (the fingerprint has the rest): checked as it is
    reads = {**own.reads, **{rel: seen for art in artifacts.values() for rel, seen in (art.reads or {}).items()
                             if rel not in snapshot}}
    _save_state(root, cache, key, found, snapshot, source_states, fingerprinted, files, total, written, warnings, reads,
            patch_info(files, check_context(cfg, sitemap), sitemap, shared.labels.kept(looked_up), list(artifacts),
                       frozen, text_notebooks(root, snapshot, memo),
                       {rel for art in artifacts.values() for rel in (art.reads or {}) if rel in snapshot}))
    return BuildReport(out=out, files=len(files), bytes=total,
                       computed=tuple(a.lab.id for a in artifacts.values() if a.recomputed),
                       cached=tuple(a.lab.id for a in artifacts.values() if not a.recomputed and a.lab.id not in frozen),
                       frozen=frozen, froze=tuple(froze), warnings=tuple(warnings), rendered=files.rendered,
                       resumed=tuple(kept.resumed.items()) if kept is not None else (),
                       timings=tuple((lab, *seconds) for lab, seconds in labs.timings.items()),
                       notes=_confinement_notes(cfg, labs) if labs.computed else ())


# What a lab reaches that the sandbox does not keep from it, said by the build that ran labs.
NOT_CONFINED = {"writes": "write anywhere the user may", "reads": "read every file the user may (.git/, .env, the home folder)",
                "network": "reach the network", "shm": "leave files in /dev/shm that outlive the build"}


def _confinement_notes(cfg, labs) -> tuple[str, ...]:
    missing = [NOT_CONFINED[what] for what in NOT_CONFINED if what in labs.not_confined]
    started = [f"lab {lab} ran {'a process' if event != 'os.fork' else 'a fork of itself'} ({event}), whose reading "
               "is not seen: it runs again whenever any source of the course changes" for lab, event in labs.unrecorded.items()]
    return tuple(filter(None, [*started, cfg.lab_access.said(), f"labs ran unconfined on this machine: they could {' and '.join(missing)} "
                               "(it takes Linux with Landlock, 5.13 or newer, and network namespaces; README.md says "
                               "what each confines)" if missing else ""]))


def _config(root: Path, memo, snapshot: dict[str, str], base_url: str | None, text_notebooks: frozenset | None = None):
    """site.yaml, with the address given on the command line (--base-url) if one was."""
    import dataclasses
    from ..project.config import load_config
    cfg = load_config(root, memo, snapshot, text_notebooks)
    return dataclasses.replace(cfg, base_url=base_url.rstrip("/")) if base_url else cfg


def _publish(files: dict, warnings: list, out: Path, last: dict, *, strict: bool, use_cache: bool) -> tuple[tuple, int]:
    """Write the site (write.py), unless --strict makes a warning an error or Pages would refuse it:
    (what write_site returned, its bytes)."""
    from ..core.stored import size_of
    from ..publish.htmlcheck import check_pages_limits
    from ..publish.write import write_site
    if strict and warnings:
        raise BuildError([Problem(w.path, w.line, w.message + " (a warning; --strict makes it an error)")
                          for w in warnings])
    check_pages_limits(files)
    written = write_site(files, out, last.get("files") if use_cache else None, last.get("spare") if use_cache else None)
    return written, sum(map(size_of, files.values()))


def _save_state(root: Path, cache: Path, key: list, found: dict, snapshot: dict, source_states: dict, fingerprinted: str,
            files: dict, total: int, written: tuple, warnings: list, reads: dict, patch: dict) -> None:
    """The state of a build that succeeded (STATE), for the next build, and its stamp (stamp.py)."""
    import pickle
    state = {"fingerprint": fingerprinted, "bytes": total, "count": len(files), "files": written[0],
             "spare": written[1], "sources": snapshot, "source_states": source_states,
             "warnings": [tuple(w) for w in warnings], "reads": reads,
             "patch": pickle.dumps(patch, protocol=pickle.HIGHEST_PROTOCOL)}
    cache.mkdir(parents=True, exist_ok=True)
    (cache / (STATE + ".tmp")).write_bytes(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(cache / (STATE + ".tmp"), cache / STATE)
    _stamp(root, cache, key, found, source_states, reads, written[0], (len(files), total, state["warnings"]))


def _patch_info(last: dict) -> dict:
    """The last build's patch info (patch.patch_info), kept pickled in its state and read only by the
    builds that need it: its site map and labels would import the modules that define them before a
    lab's host could start."""
    import pickle
    found = last.get("patch", {})
    return found if isinstance(found, dict) else pickle.loads(found)      # (a dict: a state from before)


def compute_only(root: Path, lab_ids: list[str], cache: Path | None = None) -> dict:
    """Compute these labs and the labs they read (from the cache where current), holding the
    build's locks, without building the site: their Artifacts by id."""
    from ..labs.compute import compute_labs
    from ..project.config import load_config
    root = Path(root).resolve()
    cache = cache_folder(root, cache)
    import dataclasses
    from ..core.lock import one_build
    from ..core.memo import clear_temporaries
    from ..publish.write import check_output_folder
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
    from ..project.nbsource import text_notebooks
    from ..core.sources import take_snapshot, source_files
    root = Path(root).resolve()
    snapshot = take_snapshot(source_files(root))[0]
    cfg = load_config(root, None, snapshot)
    published = {page.content_path: page.output for page in
                 load_pages(cfg.content_dir, snapshot, None, text_notebooks(root, snapshot))
                 + notebook_pages(root, snapshot)}
    named = [item.page for item in cfg.nav if item.page] + list(cfg.sequence) + [lab.page for lab in cfg.labs]
    outputs = ["index.html", "404.html", "_headers", "search.json"] + [published[page] for page in named]
    outputs += [lab.notebook for lab in cfg.labs if lab.notebook]
    return list(dict.fromkeys(outputs))
