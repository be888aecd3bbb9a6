"""Where the time of an edit goes: the interpreter, imports, each phase of the build.

    python bench/editprofile.py                           the course, its guide page
    python bench/editprofile.py --page content/course/lab09.md
    python bench/editprofile.py --page compute/lab09_vision_attention.py   a line printed at the lab's end
    python bench/editprofile.py --labs 200                a synthetic course (bench.py's), a lab page
    python bench/editprofile.py --pages 3000              a course of 3,000 prose pages (bench.py's), one of them
    python bench/editprofile.py --pages 3000 --paths      the same prose edit patched in (commands/patch.py)
                                                          and through the whole pipeline, alternately
    python bench/editprofile.py --book                    the notebook book (notebookbook.py's): a line
                                                          appended to the last code cell of a notebook;
                                                          then that notebook's run replayed in this process
                                                          (no sandbox), timed by part: the shell's start,
                                                          each cell, output conversion, figures, results

Copies the course (or makes the synthetic one) in a temporary folder, builds it
once, then `--runs` times appends a sentence to the page and rebuilds in a fresh
process that imports every module a build uses first (timed), then times each
phase function. Prints the median of each part, beside the median wall time of
plain `python build.py` runs of the same edit.

With --paths, it times instead `python build.py` runs of the edit patched into the last site and,
alternately, of the same kind of edit built by the whole pipeline (patch.py told to decline it):
their ratio is what deleting patch.py would cost a prose edit (the engine issue's goal: at most 1.1).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PHASES = [("sitegen.core.sources", "take_snapshot"), ("sitegen.commands.pipeline", "fingerprint"), ("sitegen.project.config", "load_config"),
          ("sitegen.labs.compute", "LabScheduler"), ("sitegen.labs.compute", "LabScheduler.finish"),
          ("sitegen.pages.content", "load_pages"), ("sitegen.pages.check", "check_site"),
          ("sitegen.render.render", "render_site"), ("sitegen.publish.htmlcheck", "check_rendered"), ("sitegen.publish.write", "write_site"),
          ("sitegen.commands.patch", "patch")]        # (a prose edit patched in: its load_pages is counted twice)
# Parts of "the rest" (timed, but printed below it): what a build does besides its phases.
UPKEEP = [("sitegen.commands.pipeline", "as_last_time"), ("sitegen.core.memo", "read_pickled"),
          ("sitegen.pages.nbpage", "notebook_pages"), ("sitegen.render.render", "while_labs_run"),
          ("sitegen.core.memo", "Memo.prune"), ("sitegen.commands.pipeline", "_stamp"),
          ("sitegen.pages.outputs", "render_outputs"), ("sitegen.pages.outputs", "safe_html"),
          ("sitegen.render.notebook", "build_notebook"),
          ("sitegen.publish.write", "recover"), ("sitegen.core.memo", "clear_temporaries")]
MODULES = ["sitegen.commands.pipeline", "sitegen.project.config", "sitegen.labs.compute", "sitegen.pages.content", "sitegen.pages.check",
           "sitegen.render.render", "sitegen.publish.write", "sitegen.publish.htmlcheck", "sitegen.render.search", "sitegen.render.notebook", "markdown.extensions.codehilite",
           "markdown.extensions.toc", "markdown.extensions.attr_list", "markdown.extensions.tables",
           "markdown.extensions.fenced_code", "markdown.extensions.sane_lists", "sitegen.commands.patch"]


def child(root: str, whole: bool = False) -> None:
    """One build, timed by part (`whole`: patch.py declining the edit); prints a JSON object of milliseconds."""
    import importlib
    started = time.perf_counter()
    sys.path.insert(0, str(REPO))
    for name in MODULES:
        importlib.import_module(name)
    times = {"imports": time.perf_counter() - started}
    for module_name, name in sorted(PHASES + UPKEEP, key=lambda phase: "." not in phase[1]):   # (methods before their class)
        module = importlib.import_module(module_name)
        if "." in name:                            # a method: timed on its class
            module = getattr(module, name.split(".")[0])
        real = getattr(module, name.split(".")[-1])

        def timed(*args, _real=real, _name=name, **kwargs):
            begun = time.perf_counter()
            try:
                return _real(*args, **kwargs)
            finally:
                times[_name] = times.get(_name, 0.0) + time.perf_counter() - begun
        setattr(module, name.split(".")[-1], timed)
    if whole:
        importlib.import_module("sitegen.commands.patch").patch = lambda *args, **kwargs: None
    begun = time.perf_counter()
    sys.modules["sitegen.commands.pipeline"].build(Path(root))
    times["build"] = time.perf_counter() - begun
    print(json.dumps({k: v * 1000 for k, v in times.items()}))


# `python build.py ARGS...` with patch.py declining every edit: the whole pipeline builds it.
UNPATCHED = ("import os, runpy, sys; sys.argv = sys.argv[1:]; sys.path.insert(0, os.path.dirname(sys.argv[0])); "
             "import sitegen.commands.patch as patch; patch.patch = lambda *args, **kwargs: None; "
             "runpy.run_path(sys.argv[0], run_name='__main__')")


def compare_paths(root: Path, page: Path, runs: int, bench) -> None:
    """Median wall time of a prose edit patched in and built whole, `runs` of each, alternately."""
    command = bench.build_command(root)
    walls: dict[str, list[float]] = {"patched": [], "whole": []}
    for i in range(runs):
        for mode, run in (("patched", command), ("whole", [sys.executable, "-c", UNPATCHED, *command[1:]])):
            time.sleep(0.2)
            page.write_text(page.read_text(encoding="utf-8") + f"\n第{i}{mode}句。\n", encoding="utf-8")
            walls[mode].append(bench.run_once(run) * 1000)
    patched, whole = (statistics.median(walls[mode]) for mode in ("patched", "whole"))
    print(f"edit of {page.relative_to(root)}, median of {runs} each, alternately:")
    print(f"  {patched:7.0f} ms  patched into the last site (commands/patch.py)")
    print(f"  {whole:7.0f} ms  built by the whole pipeline")
    print(f"  {whole / patched:7.2f}×    whole ÷ patched (goal before patch.py goes: ≤ 1.10)")


def lab_insides(notebook: Path, runs: int) -> list[str]:
    """The notebook's run as its lab process makes it, replayed here (no fork, no sandbox: what those
    add is the build's "LabScheduler.finish" less this), median of `runs`, by part."""
    code = f"""
import json, shutil, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, {str(REPO)!r})
started = time.perf_counter()
from sitegen.labs.warm import modules_for, warm
from sitegen.project.nbsource import cells_of, load
notebook = Path({str(notebook)!r})
root = notebook.parents[2] if (notebook.parents[2] / "site.yaml").exists() else notebook.parents[1]
source = load(root, str(notebook.relative_to(root)), None, None)
warm(modules_for([cell.source for cell in cells_of(source)], jupyter=True))  # (what the lab host imports for it)
from sitegen.labs import labipython, labrun
times = {{"host's imports": time.perf_counter() - started}}
cells = []
def timed(owner, name, key=None):
    real = getattr(owner, name)
    def wrapper(*args, **kwargs):
        begun = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent = time.perf_counter() - begun
            if key == "cell":
                cells.append(spent)
            else:
                times[key or name] = times.get(key or name, 0.0) + spent
    setattr(owner, name, wrapper)
timed(labipython.NotebookShell, "__init__", "the shell's start (IPython)")
timed(labipython.NotebookShell, "run", "cell")
timed(labipython.NotebookShell, "_kept", "output conversion")
timed(labipython.NotebookShell, "_format", "representations (IPython's formatters)")
timed(labrun, "_quantized", "figures re-encoded (in threads)")
timed(labrun, "_pngs", "the folder's PNGs, listed before and after each cell")
timed(labrun, "namespace_results", "results.json from the namespace")
from sitegen.project.nbsource import lay_folder
with tempfile.TemporaryDirectory() as tmp:
    work, _, _ = lay_folder(root, str(notebook.relative_to(root)), Path(tmp))     # (as its lab's: links)
    begun = time.perf_counter()
    labrun.run_cells(str(notebook), cells_of(source), str(work), display="jupyter")
    times["run_cells, in all"] = time.perf_counter() - begun
times["its cells, in all"] = sum(cells)
slowest = sorted(cells, reverse=True)[:3]
print(json.dumps({{"times": times, "cells": len(cells), "slowest": slowest}}))
"""
    found = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", code], cwd=notebook.parent, capture_output=True, text=True,
                              env={**__import__("os").environ, "MPLBACKEND": "Agg"})
        if done.returncode != 0:
            sys.exit(done.stderr[-3000:])
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    lines = [f"\n{notebook.name} run as its lab runs it, in this process, median of {runs}:"]
    for key in found[0]["times"]:
        lines.append(f"  {statistics.median(f['times'].get(key, 0.0) for f in found) * 1000:7.0f} ms  {key}")
    lines.append(f"  ({found[0]['cells']} cells; the slowest: "
                 f"{', '.join(f'{s * 1000:.0f} ms' for s in found[0]['slowest'])})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", help="the page to edit (default: the guide, or lab07's page)")
    parser.add_argument("--labs", type=int, default=0, help="a synthetic course of this many labs (bench.py's)")
    parser.add_argument("--pages", type=int, default=0, help="a course of this many prose pages (bench.py's)")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--book", action="store_true", help="the notebook book (notebookbook.py's), a notebook's code edit")
    parser.add_argument("--paths", action="store_true", help="time the edit patched in and built whole, alternately")
    parser.add_argument("--whole", action="store_true", help="time the parts with patch.py declining the edit")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.whole)
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench
    env = bench.ENV
    with tempfile.TemporaryDirectory(prefix="editprofile-") as tmp:
        if args.book:
            import notebookbook
            root = Path(tmp) / "book"
            laid = notebookbook.lay(root)
            page = root / args.page if args.page else laid[notebookbook.EDITED[0]]
        elif args.pages:
            root = bench.make_pages(Path(tmp) / "course", args.pages)
            page = root / (args.page or "content/notes/n0007.md")
        elif args.labs:
            root = bench.make_course(Path(tmp) / "course", args.labs)
            page = root / (args.page or "content/labs/lab07.md")
        else:
            root = bench.copy_repo(Path(tmp) / "course")
            page = root / (args.page or "content/course/guide.md")
        subprocess.run(bench.build_command(root), env=env, check=True, capture_output=True)
        if args.paths:
            compare_paths(root, page, args.runs, bench)
            return 0
        wall, parts, start = [], [], []
        for i in range(args.runs):
            for mode in ("plain", "parts"):
                time.sleep(0.2)
                if page.suffix == ".ipynb":
                    notebookbook.edit_cell(page, "code", f"\nedit_{i}_{mode} = {i}\n")
                else:
                    edit = f"\nprint('edit {i} {mode}')\n" if page.suffix == ".py" else f"\n第{i}{mode}句。\n"
                    page.write_text(page.read_text(encoding="utf-8") + edit, encoding="utf-8")
                if mode == "plain":
                    wall.append(bench.run_once(bench.build_command(root)) * 1000)
                else:
                    done = subprocess.run([sys.executable, __file__, "--child", str(root), *(["--whole"] if args.whole else [])], env=env, check=True,
                                          capture_output=True, text=True)
                    parts.append(json.loads(done.stdout.strip().splitlines()[-1]))
            start.append(bench.run_once([sys.executable, "-c", "pass"]) * 1000)
        insides = lab_insides(page, args.runs) if page.suffix == ".ipynb" else []
    median = {key: statistics.median(p.get(key, 0.0) for p in parts) for key in parts[0]}
    phases = sum(median.get(name, 0.0) for _, name in PHASES if name not in ("take_snapshot", "fingerprint"))
    print(f"edit of {page.relative_to(root)}, median of {args.runs}: {statistics.median(wall):.0f} ms "
          f"wall (python build.py)\n")
    print(f"  {statistics.median(start):6.1f} ms  the interpreter starting (python -c pass)")
    print(f"  {median['imports']:6.1f} ms  importing the build's modules, Jinja2 and Markdown")
    for _, name in PHASES:
        print(f"  {median.get(name, 0.0):6.1f} ms  {name}")
    rest = median["build"] - phases - median.get("take_snapshot", 0.0) - median.get("fingerprint", 0.0)
    print(f"  {rest:6.1f} ms  the rest of build(): locks, the lab host, state and memo upkeep, of which")
    for _, name in UPKEEP:
        print(f"  {median.get(name, 0.0):13.1f} ms  {name}")
    print("\n".join(insides))
    return 0


if __name__ == "__main__":
    sys.exit(main())
