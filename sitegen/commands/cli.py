"""The command line: `python build.py` (a course's front, as in this repository) or `sitegen` (the
command `pip install` of the generator makes), in the course's folder, writes dist/.

    python build.py               build into dist/ (labs cached in .cache/)
    python build.py --no-cache    recompute every lab
    python build.py --out DIR     build into another folder
    python build.py --debug       show the full traceback of a failing lab
    python build.py --timeout S   stop any lab still running after S seconds
    python build.py --solutions   an instructor's build: every exercise's hints and solution shown
    python build.py --no-solutions  a student's build: solutions left out of the site entirely
    python build.py serve         build, preview with Cloudflare's emulator, rebuild on change
    python build.py info          the Pages project and address from site.yaml, as name=value lines
    python build.py info outputs  the files a build of this site must write, one per line (for a CI check)
    python build.py freeze [LAB]  build, and store the labs' results in frozen/ (commit it): a build
                                  elsewhere reuses them while the lab's code is unchanged
    python build.py new site DIR [--title T] [--language en]  start a course of its own in DIR: pages, a lab, the
                                  deploy workflow, requirements.txt naming this generator
    python build.py new lab ID    start a lab: compute/ID.py, its page and its site.yaml entry
    python build.py new page PATH start a page: content/PATH.md
    python build.py import NB.ipynb [--id ID] [--page PATH]
                                  a notebook as a lab: its script, its page, its site.yaml entry
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path


class Progress:
    """Which labs are running and for how long: a line kept up to date on a terminal,
    and a line every minute elsewhere (a CI log), so that a long lab is never silent."""

    def __init__(self, stream=sys.stderr):
        self.stream, self.tty, self.shown, self.next_log = stream, stream.isatty(), False, 60.0

    def __call__(self, running: dict[str, float]) -> None:
        longest = max(running.values(), default=0)
        text = "computing " + ", ".join(f"{lab} ({seconds:.0f} s)" for lab, seconds in sorted(running.items()))
        if self.tty and longest >= 2:
            self.stream.write(f"\r\033[K{text}")
            self.stream.flush()
            self.shown = True
        elif not self.tty and longest >= self.next_log:
            print(text, file=self.stream, flush=True)
            self.next_log += 60

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


NEXT = "list the page under nav: or sequence: in site.yaml so that readers find it, and run: python build.py"


def told(problems, root: Path) -> list:
    """Problems as their authors find their places: a notebook's by its cell and the line in it too."""
    if not any(problem.path.endswith(".ipynb") for problem in problems):
        return list(problems)
    from sitegen.project.nbsource import in_notebook_terms    # (only then: a no-change build imports little)
    return in_notebook_terms(problems, root)


def main(argv: list[str] | None = None, root: Path | None = None) -> int:
    """Run one command; `root`: the course's folder unless --root says otherwise (build.py's own
    folder for `python build.py`, the current folder for `sitegen`)."""
    root = root or Path.cwd()
    parser = argparse.ArgumentParser(description="Build the course site into a static folder.")
    parser.add_argument("command", nargs="?", choices=["build", "serve", "info", "freeze", "new", "import"], default="build",
                        help="build once (default), serve a live preview, or print site.yaml's project and "
                             "address (for a deploy script: `python build.py info >> $GITHUB_OUTPUT`)")
    parser.add_argument("names", nargs="*", help="freeze: the labs to freeze (default: every lab); "
                                                 "new: `site DIR`, `lab ID` or `page PATH`; import: notebooks")
    parser.add_argument("--page", help="new lab, import: the page's path in content/ (default: the lab's id)")
    parser.add_argument("--id", help="import: the lab's id (default: from the notebook's file name)")
    parser.add_argument("--title", help="new site: the course's title")
    parser.add_argument("--language", default="zh-CN", help="new site: the course's language (zh-CN, en, ...): its "
                                                            "interface's words and its starter pages (default zh-CN)")
    parser.add_argument("--port", type=int, default=8788, help="preview port (serve)")
    parser.add_argument("--checkpoint-memory", type=int, metavar="MIB",
                        help="serve: memory the labs' checkpoints may take, in MiB, so that an edit to a late cell "
                             "resumes after the cells before it (default: a quarter of this machine's, at most "
                             "2048; 0: none, every lab runs from its first cell)")
    parser.add_argument("--root", type=Path, default=root, help=f"project folder (default: {root})")
    parser.add_argument("--out", type=Path, help="output folder (default: ROOT/dist)")
    parser.add_argument("--cache", type=Path, help="lab cache folder (default: ROOT/.cache)")
    parser.add_argument("--no-cache", action="store_true", help="recompute every lab")
    parser.add_argument("--jobs", type=int, help="labs computed at once (default: one per core)")
    parser.add_argument("--debug", action="store_true", help="full traceback when a lab fails")
    parser.add_argument("--timeout", type=float, help="seconds any lab may run, whatever site.yaml says "
                                                      "(default: each lab's `timeout`, else 600)")
    parser.add_argument("--base-url", help="the site's address, instead of site.yaml's (e.g. a preview deployment)")
    answers = parser.add_mutually_exclusive_group()
    answers.add_argument("--solutions", dest="solutions", action="store_const", const="shown", default=None,
                         help="an instructor's build: every hint and solution of the exercises shown "
                              "(default: as site.yaml's `solutions:` says, else folded)")
    answers.add_argument("--no-solutions", dest="solutions", action="store_const", const="omitted",
                         help="a student's build: solutions left out of the site (hints stay, folded)")
    parser.add_argument("--strict", action="store_true",
                        help="treat warnings (missing alt text, empty sections, external links without rel) as errors")
    args = parser.parse_args(argv)

    from sitegen.core.cachedir import cache_folder
    from sitegen.core.errors import BuildError, LabFailure, missing_package
    from sitegen.commands.pipeline import build
    # Stopped by SIGTERM (a CI runner, `kill`, serve's supervisor) as by Ctrl-C: labs stopped, temporaries removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    kept = None
    if args.command == "serve":             # its lab host stays, with the labs' checkpoints (resume.py)
        from sitegen.labs.resume import MIB, KeptLabs
        kept = KeptLabs(cache_folder(args.root, args.cache),
                        None if args.checkpoint_memory is None else args.checkpoint_memory * MIB)

    def once(quiet: bool = False) -> bool:
        """Build once, and say what it did (`quiet`: not when it found nothing changed)."""
        start = time.perf_counter()
        progress = Progress()
        try:
            report = build(args.root, args.out, cache=args.cache, use_cache=not args.no_cache,
                           jobs=args.jobs, preview=args.command == "serve", strict=args.strict,
                           base_url=args.base_url, timeout=args.timeout, progress=progress, solutions=args.solutions,
                           freeze=tuple(args.names) if args.command == "freeze" else None, kept=kept)
        except KeyboardInterrupt:
            progress.clear()
            print("interrupted: the build stopped, and the previous output was left as it was", file=sys.stderr)
            raise
        except ModuleNotFoundError as exc:
            if (advice := missing_package(exc)) is None or args.debug:
                raise
            print(advice, file=sys.stderr)
            return False
        except BuildError as exc:
            progress.clear()
            if args.debug and isinstance(exc, LabFailure):
                print(exc.trace, file=sys.stderr)
            exc.problems = told(exc.problems, args.root)
            print(exc.report(), file=sys.stderr)
            print("build failed; the previous output was left as it was", file=sys.stderr)
            return False
        except Exception as exc:  # noqa: BLE001 - a bug in the generator, not in the site
            if args.debug:
                raise
            internal_error(exc, "the previous output was left as it was")
            return False
        progress.clear()
        if quiet and report.unchanged:
            return True
        for warning in told(report.warnings, args.root):
            print(f"warning: {warning}", file=sys.stderr)
        resumed, took = dict(report.resumed), {lab: total for lab, _, total in report.timings}

        def each(labs, how):             # the labs run are always named, with their time; the others, when few
            if how == "computed":
                return [f"{lab} computed" + (f" from cell {resumed[lab] + 1} on" if lab in resumed else "")
                        + (f" in {took[lab]:.1f} s" if lab in took else "") for lab in labs]
            return [f"{lab} {how}" for lab in labs] if len(labs) <= 6 else [f"{len(labs)} labs {how}"]
        labs = ", ".join(each(report.computed, "computed") + each(report.cached, "cached") + each(report.frozen, "frozen")
                         + (["nothing changed"] if report.unchanged else []))
        print(f"built {report.files} files ({report.bytes / 1024:.0f} KiB) into {report.out} "
              f"in {time.perf_counter() - start:.2f} s" + (f" [{labs}]" if labs else ""))
        for note in report.notes:
            print(f"note: {note}", file=sys.stderr)
        for folder in report.froze:
            print(f"froze {folder}: commit it, and builds elsewhere reuse it while the lab's code is unchanged")
        if kept is not None:
            for note in [*kept.notes, kept.evict()]:
                if note:
                    print(f"note: {note}", file=sys.stderr)
        return True

    try:
        if args.command == "new":
            from sitegen.commands.scaffold import new_lab, new_page, new_site
            if len(args.names) != 2 or args.names[0] not in ("site", "lab", "page"):
                parser.error("new takes `site DIR`, `lab ID` or `page PATH`")
            kind, name = args.names
            if kind == "site":
                made, notes = new_site(Path(name), args.title, args.language)
                print(f"wrote {len(made)} files into {name}; next: cd {name}, then README.md's first command", flush=True)
                for note in notes:
                    print(f"note: {note}", file=sys.stderr)
                return 0
            made = new_lab(args.root, name, args.page) if kind == "lab" else new_page(args.root, name)
            print("wrote " + ", ".join(made) + "; " + NEXT)
            return 0
        if args.command == "import":
            from sitegen.commands.importer import import_notebooks
            if not args.names:
                parser.error("import takes one or more notebooks: python build.py import NB.ipynb [--id ID]")
            made, notes = import_notebooks(args.root, [Path(n) for n in args.names], args.id, args.page, args.cache)
            for note in notes:
                print(f"note: {note}", file=sys.stderr)
            print("wrote " + ", ".join(made) + "; computed it; " + NEXT)
            return 0
        if args.command == "info":
            if args.names == ["outputs"]:
                from sitegen.commands.pipeline import promised_outputs
                print("\n".join(promised_outputs(args.root)))
                return 0
            from sitegen.project.config import load_config
            cfg = load_config(args.root)
            print(f"project={cfg.project}\nbase_url={args.base_url or cfg.base_url}")
            return 0
        if args.command == "serve":
            from sitegen.commands.serve import serve
            try:
                return serve(args.root.resolve(), (args.out or args.root / "dist").resolve(), args.port, once,
                             args.cache)
            finally:
                kept.close()
        return 0 if once() else 1
    except KeyboardInterrupt:
        return 130
    except BuildError as exc:
        print(exc.report(), file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        if (advice := missing_package(exc)) is None or args.debug:
            raise
        print(advice, file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug in the generator (info, new, import), not in the site
        if args.debug:
            raise
        internal_error(exc, f"`{args.command}` did not finish")
        return 1


def internal_error(exc: Exception, outcome: str) -> None:
    """A bug of ours, said as one: never a traceback in an author's terminal but with --debug."""
    print(f"internal error: {type(exc).__name__}: {exc}\nthis is a bug in the generator, not in your site; "
          f"{outcome}. Run with --debug for the traceback and report it.", file=sys.stderr)


def run(root: Path | None = None) -> None:
    """Run the command line and exit with its status (the `sitegen` command; build.py's)."""
    code = main(root=root)
    # Everything is written and the lab host has stopped: skip the interpreter's
    # teardown of the modules and objects a build leaves (25 ms of every build).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
