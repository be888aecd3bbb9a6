"""A/B: this checkout against another commit, in one spell of the machine.

    python bench/ab.py f5fb642                 the course: no change, a clean build, two prose edits, a lab's last cell
    python bench/ab.py f5fb642 --labs 40       and a prose edit of a synthetic course (bench.py's)
    python bench/ab.py f5fb642 --labs 200 --notes   ... whose labs have a notes page each (402 pages)
    python bench/ab.py f5fb642 --pages 3000    and a course of 3,000 prose pages: no change, a prose edit
    python bench/ab.py f5fb642 --serve 30      and `serve`: save -> reloaded page in Chromium (serveloop.py),
                                               the median and p95 of 30 saves a side, in alternating rounds
    python bench/ab.py f5fb642 --book          and the book of 8 real notebooks (notebookbook.py's): clean,
                                               no change, a word of prose, the last code cell of two edited

The other commit is checked out in a temporary worktree. Each side builds its
own copies of the courses (their caches are kept apart: two generators may key
labs differently), and the two sides run alternately, pair by pair, so that a
slow spell of this machine (10-25 % from one to the next) weighs on both alike.
Prints each scenario's median on both sides and the median of the pair-by-pair
ratios, after / before. The repository is only read.
"""
from __future__ import annotations

import argparse
import atexit
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import REPO, append, build_command, clean, copy_repo, make_course, make_pages, run_once  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the commit to compare this checkout with (before)")
    parser.add_argument("--pairs", type=int, default=9, help="alternating pairs per scenario (median)")
    parser.add_argument("--labs", type=int, default=0, help="also a synthetic course of this many labs")
    parser.add_argument("--notes", action="store_true", help="each of its labs with a notes page too")
    parser.add_argument("--pages", type=int, default=0, help="also a course of this many prose pages")
    parser.add_argument("--serve", type=int, default=0, metavar="SAVES",
                        help="also serve's save -> reloaded page, this many saves a side (serveloop.py)")
    parser.add_argument("--book", action="store_true", help="also the book of real notebooks (notebookbook.py's)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    atexit.register(shutil.rmtree, tmp, True)
    before = tmp / "before"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(before), args.commit],
                   check=True, capture_output=True)
    atexit.register(subprocess.run, ["git", "-C", str(REPO), "worktree", "remove", "--force", str(before)],
                    capture_output=True)
    trees = {"before": before, "after": REPO}
    courses = {side: copy_repo(tmp / f"course-{side}", tree) for side, tree in trees.items()}
    scenarios = [("no change: the course", courses, lambda root: lambda pair: None),
                 ("clean build: the course (3 labs)", courses, clean),
                 ("prose edit: the course's lab page", courses, "content/course/lab09.md"),
                 ("prose edit: the course's guide", courses, "content/course/guide.md"),
                 ("the lab's last cell edited (2 labs read it)", courses, "compute/lab09_vision_attention.py")]
    if args.labs:
        synthetic = {side: make_course(tmp / f"labs-{side}", args.labs, args.notes, tree)
                     for side, tree in trees.items()}
        pages = args.labs * (2 if args.notes else 1) + 2
        scenarios.append((f"prose edit: {args.labs} labs ({pages} pages), one lab page", synthetic,
                          "content/labs/lab07.md"))
    if args.pages:
        prose = {side: make_pages(tmp / f"pages-{side}", args.pages) for side in trees}
        scenarios += [(f"no change: {args.pages} prose pages", prose, lambda root: lambda pair: None),
                      (f"prose edit: {args.pages} prose pages, one of them", prose, "content/notes/n0007.md")]
    if args.book:
        scenarios += book_scenarios(tmp, trees)

    for _, roots, _ in scenarios:           # labs computed, caches and outputs made, before timing
        for side, root in roots.items():
            run_once(build_command(root, tree=trees[side]))
    print(f"A/B against {args.commit}, {args.pairs} alternating pairs each, wall time of a fresh process\n")
    print(f"| {'scenario':<50} | {'before':>8} | {'after':>8} | after/before |")
    print(f"|{'-' * 52}|{'-' * 9}:|{'-' * 9}:|-------------:|")
    for name, roots, how in scenarios:
        times = {"before": [], "after": []}
        for pair in range(args.pairs):
            for side in ("before", "after") if pair % 2 == 0 else ("after", "before"):
                prepare = how(roots[side]) if callable(how) else append(
                    roots[side] / how, "\nprint('edit {t}')\n" if how.endswith(".py") else "\n句 {t}。\n")
                prepare(pair)
                times[side].append(run_once(build_command(roots[side], tree=trees[side])))
        ratio = statistics.median(a / b for b, a in zip(times["before"], times["after"]))
        print(f"| {name:<50} | {statistics.median(times['before']):>6.3f} s | "
              f"{statistics.median(times['after']):>6.3f} s | {ratio:>11.2f}× |")
    if args.serve:
        serve_rows(tmp, trees, args.serve)
    return 0


def book_scenarios(tmp: Path, trees: dict[str, Path]) -> list:
    """notebookbook.py's rows, each side with its own copy of the book."""
    from notebookbook import BOOK, EDITED, edit_cell, lay
    books = {side: tmp / f"book-{side}" for side in trees}
    notebooks = {side: lay(root) for side, root in books.items()}

    def edit(index: int, kind: str):
        def how(root: Path):
            side = next(side for side, book in books.items() if book == root)
            text = " Edited {}." if kind == "markdown" else "\nbench_edit_{} = 0\n"
            return lambda pair: edit_cell(notebooks[side][index], kind, text.format(pair))
        return how
    first = Path(BOOK[EDITED[0]][1]).name
    return [("clean build: the notebook book (8 notebooks)", books, clean),
            ("no change: the notebook book", books, lambda root: lambda pair: None),
            (f"prose edit: {first}", books, edit(EDITED[0], "markdown")),
            *((f"last code cell edited: {Path(BOOK[index][1]).name}", books, edit(index, "code")) for index in EDITED)]


def serve_rows(tmp: Path, trees: dict[str, Path], saves: int, rounds: int = 3) -> None:
    """serve's save -> reloaded page on the course's guide, each side `saves` times in all, in
    `rounds` alternating rounds (a fresh serve each); the median and p95 of each side's latencies."""
    import serveloop
    if reason := serveloop.missing():
        print(f"(serve rows left out: they need {reason})")
        return
    latencies: dict[str, list[float]] = {"before": [], "after": []}
    for n in range(rounds):
        for side in ("before", "after") if n % 2 == 0 else ("after", "before"):
            root = copy_repo(tmp / f"serve-{side}-{n}", trees[side])
            (root / "tools").mkdir(exist_ok=True)       # (serve runs the project's pinned emulator)
            (root / "tools/node_modules").symlink_to(REPO / "tools/node_modules")
            found = serveloop.measure(root, "content/course/guide.md", "course/guide", saves // rounds, tree=trees[side])
            latencies[side] += found["latencies"]
    for label, measure in (("median", statistics.median), ("p95", lambda values: serveloop.percentile(values, 0.95))):
        before, after = measure(latencies["before"]), measure(latencies["after"])
        name = f"serve: save -> reloaded guide, {label} of {len(latencies['after'])}"
        print(f"| {name:<50} | {before:>6.3f} s | {after:>6.3f} s | {after / before:>11.2f}× |")


if __name__ == "__main__":
    sys.exit(main())
