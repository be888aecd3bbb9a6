"""Benchmark the build against the floor: the seed script itself, all measured in this run.

    python bench/bench.py              median of 3 runs each (7 of each rebuild)
    python bench/bench.py --runs 5 --labs 40 --big 200 --saves 30

Prints one table: wall time of each scenario (a fresh `python build.py`
process, as an author runs it), its ratio to the seed script's own run time,
and the goal. The seed script and the clean build of the lab alone are run
alternately (at least 7 pairs), and so are the lab's own script and that
build (the lab now does more than the seed: its overhead is measured against
its own run); the seed's own time varies by ±10% from one spell to the next
on this machine. Then synthetic courses of copies of the lab (40 with a page each,
200 with two), a course of 3,000 prose pages (a no-change build and a prose edit), and `serve`'s save -> reloaded page in Chromium (bench/serveloop.py): a prose
edit, and a last-cell edit of a lab whose first cell takes 10 s (resumed from its checkpoint). Sites are
built in a temporary folder; the repository is only read.
"""
from __future__ import annotations

import argparse
import atexit
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from sitegen.core.sources import SOURCES  # noqa: E402 - the project's own list of what a site is made of
sys.path.insert(0, str(Path(__file__).resolve().parent))
import serveloop  # noqa: E402
SEED = REPO / "tests/course/golden/seed_lab09.py"
LAB = REPO / "compute/lab09_vision_attention.py"
PAGE = REPO / "content/course/lab09.md"


# As on an author's machine, Python keeps the generator's bytecode between runs (in a folder of
# the benchmark's own: the repository is only read), whatever PYTHONDONTWRITEBYTECODE says here.
PYCACHE = tempfile.mkdtemp(prefix="bench-pycache-")
atexit.register(shutil.rmtree, PYCACHE, True)
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "MPLBACKEND": "Agg",
       "PYTHONPYCACHEPREFIX": PYCACHE}


def run_once(command: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{result.stderr[-2000:]}")
    return elapsed


def timed(command: list[str], cwd: Path | None = None, prepare=None, runs: int = 3) -> float:
    """Median wall time of `runs` runs; `prepare(i)` runs before each, untimed."""
    times = []
    for i in range(runs):
        if prepare:
            prepare(i)
        times.append(run_once(command, cwd))
    return statistics.median(times)


def cpu_seconds(command: list[str], cwd: Path | None = None, prepare=None) -> float:
    """Processor time (user and system) of one run and every process it waited for: what a
    machine must spend on it, however many cores it has."""
    if prepare:
        prepare(0)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_once(command, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def timed_against_floor(floor: list[str], floor_cwd: Path, command: list[str], prepare, runs: int):
    """Medians of the floor and of a command, run alternately, so that a slow spell of the
    machine weighs on both alike; and the median of their ratios, pair by pair."""
    floors, times = [], []
    for i in range(runs):
        floors.append(run_once(floor, floor_cwd))
        prepare(i)
        times.append(run_once(command))
    return (statistics.median(floors), statistics.median(times),
            statistics.median(t / f for f, t in zip(floors, times)))


def build_command(root: Path, *extra: str, tree: Path = REPO) -> list[str]:
    """`python build.py` of this checkout (or of `tree`, another commit's worktree) on `root`."""
    return [sys.executable, str(tree / "build.py"), "--root", str(root), "--out", str(root / "dist"),
            "--cache", str(root / ".cache"), *extra]


def copy_repo(target: Path, tree: Path = REPO) -> Path:
    """A copy of the course as `tree` (this checkout, or another commit's worktree) has it."""
    target.mkdir(parents=True)
    for part in SOURCES:
        source = tree / part
        if not source.exists():
            continue
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, target / part)
    return target


def make_course(target: Path, labs: int, notes: bool = False, tree: Path = REPO) -> Path:
    """A course of `labs` copies of the real lab, each with its own seed and page, and with
    `notes` a second page each (a copy of the guide, prose and lists); with `tree`'s templates/ and
    static/ where it has them (a generator from before its theme moved into the package needs them)."""
    for part in ("templates", "static"):
        if (tree / part).is_dir():
            shutil.copytree(tree / part, target / part)
    (target / "compute").mkdir(parents=True, exist_ok=True)
    (target / "content/labs").mkdir(parents=True)
    code, page = LAB.read_text(encoding="utf-8"), PAGE.read_text(encoding="utf-8")
    page = re.sub(r"^(parent|url): .*\n", "", page, flags=re.M)          # each copy publishes at its own path
    unlinked = r"(?<!!)\[([^\]]*)\]\((?!https?:)[^)]*\)"
    page = re.sub(unlinked, r"\1", page)     # no links to pages it lacks
    guide = re.sub(unlinked, r"\1", (REPO / "content/course/guide.md").read_text(encoding="utf-8"))
    entries, items = [], []
    for n in range(labs):
        lab = f"lab{n:02d}"
        (target / f"compute/{lab}.py").write_text(code.replace("SEED = 20260918", f"SEED = {20260918 + n}"),
                                                  encoding="utf-8")
        (target / f"content/labs/{lab}.md").write_text(page.replace("lab: lab09", f"lab: {lab}").replace("::: widget lab09", f"::: widget {lab}"), encoding="utf-8")
        entries.append(f"  - id: {lab}\n    title: Lab {n}\n    script: compute/{lab}.py\n"
                       f"    images: labs/images/{lab}\n    downloads: labs/materials/{lab}\n"
                       f"    notebook: labs/materials/{lab}.ipynb\n    page: labs/{lab}.md\n"
                       "    widget:\n      script: explorer.js\n      needs: [image, structure, permutation]\n")
        items.append(f"- [Lab {n}](labs/{lab}.md)")
        if notes:
            (target / f"content/labs/{lab}-notes.md").write_text(
                re.sub(r"^title: .*$", f"title: Lab {n} 笔记", guide, count=1, flags=re.M), encoding="utf-8")
            items.append(f"- [Lab {n} 笔记](labs/{lab}-notes.md)")
    (target / "site.yaml").write_text(
        "site:\n  title: 合成课程\n  base_url: https://example.pages.dev\n  language: zh-CN\n"
        "  figure_fonts: [zhplot:fonts/NotoSansSC-Regular.ttf]\n\nlabs:\n"
        + "".join(entries), encoding="utf-8")
    (target / "content/index.md").write_text("---\ntitle: 合成课程\n---\n" + "\n".join(items) + "\n",
                                             encoding="utf-8")
    (target / "content/404.md").write_text("---\ntitle: 没有找到\n---\n[首页](/)\n", encoding="utf-8")
    return target


def make_pages(target: Path, pages: int) -> Path:
    """A course of `pages` prose pages (copies of the guide, links to pages it lacks removed), all in
    its reading sequence, and no lab: what a prose edit and a no-change build cost at that size."""
    (target / "content/notes").mkdir(parents=True)
    guide = re.sub(r"(?<!!)\[([^\]]*)\]\((?!https?:)[^)]*\)", r"\1", (REPO / "content/course/guide.md").read_text(encoding="utf-8"))
    guide = re.sub(r"^(parent|url): .*\n", "", guide, flags=re.M)
    for n in range(pages):
        (target / f"content/notes/n{n:04d}.md").write_text(guide.replace("title: ", f"title: 第 {n} 篇 ", 1),
                                                            encoding="utf-8")
    (target / "site.yaml").write_text("site:\n  title: 大课程\n  base_url: https://example.pages.dev\n  language: zh-CN\n"
                                      "sequence:\n" + "".join(f"  - notes/n{n:04d}.md\n" for n in range(pages)),
                                      encoding="utf-8")
    (target / "content/index.md").write_text("---\ntitle: 首页\n---\n从[第一篇](notes/n0000.md)开始。\n", encoding="utf-8")
    (target / "content/404.md").write_text("---\ntitle: 没有找到\n---\n[首页](/)\n", encoding="utf-8")
    return target


def longest_chain(site: Path, tmp: Path, runs: int) -> tuple[float, list[str]]:
    """The course's bound besides its processor time: its longest chain of labs that read each other,
    each lab run alone as a student runs it (a reader given the results.json it reads, from the
    built site), median of `runs`. Returns its seconds and its labs, in order."""
    import yaml
    labs = {lab["id"]: lab for lab in yaml.safe_load((site / "site.yaml").read_text(encoding="utf-8"))["labs"]}
    alone: dict[str, float] = {}
    for lab_id, lab in labs.items():
        folder = tmp / f"alone-{lab_id}"
        for name in lab.get("inputs", []):
            (folder / "inputs" / name).mkdir(parents=True, exist_ok=True)
            shutil.copy(site / "dist" / labs[name]["downloads"] / "results.json", folder / "inputs" / name)
        folder.mkdir(exist_ok=True)
        alone[lab_id] = timed([sys.executable, str(site / lab["script"])], folder, runs=runs)
    chains: dict[str, tuple[float, list[str]]] = {}

    def chain(lab_id: str) -> tuple[float, list[str]]:
        if lab_id not in chains:
            before = max((chain(name) for name in labs[lab_id].get("inputs", [])), default=(0.0, []))
            chains[lab_id] = (before[0] + alone[lab_id], [*before[1], lab_id])
        return chains[lab_id]
    return max(chain(lab_id) for lab_id in labs)


def chain_in_build(site: Path, runs: int) -> tuple[float, list[str]]:
    """The same chain as the build runs it (its warm lab host, no interpreter started per lab): each
    lab's seconds until its results.json was final, and the last lab's until its process ended, from
    clean builds with one lab at a time (--jobs 1), median of `runs`."""
    import json
    import yaml
    labs = {lab["id"]: lab for lab in yaml.safe_load((site / "site.yaml").read_text(encoding="utf-8"))["labs"]}
    script = ("import json, sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
              "from sitegen.commands.pipeline import build;"
              "r = build(Path(sys.argv[2]), Path(sys.argv[2]) / 'dist', cache=Path(sys.argv[2]) / '.cache', jobs=1);"
              "print(json.dumps(r.timings))")
    seen = []
    for i in range(runs):
        clean(site)(i)
        done = subprocess.run([sys.executable, "-c", script, str(REPO), str(site)], capture_output=True, text=True,
                              env=ENV, check=True)
        seen.append({lab: (results, total) for lab, results, total in json.loads(done.stdout.splitlines()[-1])})
    took = {lab: tuple(statistics.median(run[lab][k] for run in seen) for k in (0, 1)) for lab in labs}
    ready: dict[str, tuple[float, list[str]]] = {}

    def until_results(lab_id: str) -> tuple[float, list[str]]:
        if lab_id not in ready:
            before = max((until_results(name) for name in labs[lab_id].get("inputs", [])), default=(0.0, []))
            ready[lab_id] = (before[0] + took[lab_id][0], [*before[1], lab_id])
        return ready[lab_id]

    def until_done(lab_id: str) -> tuple[float, list[str]]:
        before = max((until_results(name) for name in labs[lab_id].get("inputs", [])), default=(0.0, []))
        return before[0] + took[lab_id][1], [*before[1], lab_id]
    return max(until_done(lab_id) for lab_id in labs)


def clean(root: Path):
    def prepare(_):
        for name in ("dist", ".cache"):
            shutil.rmtree(root / name, ignore_errors=True)
    return prepare


def append(path: Path, text: str):
    def prepare(i):
        path.write_text(path.read_text(encoding="utf-8") + text.format(i=i, t=time.time_ns()), encoding="utf-8")
    return prepare


def page_weight(dist: Path, page: str) -> tuple[int, list[str]]:
    """Bytes of the page and everything it loads (stylesheets, scripts, images)."""
    html = (dist / page).read_text(encoding="utf-8")
    refs = re.findall(r'<(?:link rel="stylesheet"|script[^>]*|img)[^>]*?(?:href|src)="([^"]+)"', html)
    base = (dist / page).parent
    files = [(base / ref).resolve() for ref in refs]
    return len(html.encode()) + sum(f.stat().st_size for f in files), [str(f.relative_to(dist)) for f in files]


def search_per_page(course: Path) -> tuple[int, int, int]:
    """(labs, HTML pages, bytes of search.json) of a built synthetic course."""
    dist = course / "dist"
    return (len(list((course / "compute").glob("*.py"))), len(list(dist.rglob("*.html"))),
            (dist / "search.json").stat().st_size)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per scenario (median)")
    parser.add_argument("--labs", type=int, default=40, help="labs in the synthetic course")
    parser.add_argument("--big", type=int, default=200, help="labs in the large synthetic course (0: none)")
    parser.add_argument("--pages", type=int, default=3000, help="pages of the prose-only course (0: none)")
    parser.add_argument("--saves", type=int, default=30, help="saves in the serve loop (0: not measured)")
    args = parser.parse_args()
    rows: list[tuple[str, float | None, str, str]] = []
    # Rebuilds take a fraction of a second, and this machine's noise is as large: more runs of them.
    quick = max(args.runs, 7)
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        tmp = Path(tmp)
        (tmp / "seed").mkdir()
        one = make_course(tmp / "one", 1)
        floor, alone, ratio = timed_against_floor([sys.executable, str(SEED)], tmp / "seed", build_command(one),
                                                  clean(one), runs=max(args.runs, 7))
        rows.append(("seed script (the floor)", floor, "", "1.00×"))
        # The lab has grown past the seed (a stacked phone figure, worked values): its own run,
        # as a student runs it, is what the build's overhead is measured against.
        (tmp / "lab").mkdir()
        lab_floor, _, lab_ratio = timed_against_floor([sys.executable, str(LAB)], tmp / "lab", build_command(one),
                                                      clean(one), runs=max(args.runs, 5))
        rows.append(("the lab's own script, run alone", lab_floor, "", ""))
        rows.append(("clean build: the seed lab alone, as a site", alone, "≤ 1.2× lab",
                     f"{ratio:.2f}× seed, {lab_ratio:.2f}× lab (pair by pair)"))
        site = copy_repo(tmp / "site")
        whole = timed(build_command(site), prepare=clean(site), runs=args.runs)
        cpu = (cpu_seconds([sys.executable, str(SEED)], tmp / "seed"),
               statistics.median(cpu_seconds(build_command(site), prepare=clean(site)) for _ in range(args.runs)))
        chain, chained = longest_chain(site, tmp, args.runs)
        inside, along = chain_in_build(site, args.runs)
        bound = max(chain, cpu[1] / os.cpu_count())
        rows.append(("the course's bound: its longest chain of labs, run alone", chain, "",
                     f"{' → '.join(chained)}; its processor time ÷ {os.cpu_count()} cores: {cpu[1] / os.cpu_count():.2f} s"))
        rows.append(("the same chain as the build runs it (--jobs 1)", inside, "",
                     f"{' → '.join(along)}: no interpreter started per lab"))
        rows.append(("clean build: the whole course site (3 labs)", whole, "≤ 1.1× bound",
                     f"{whole / bound:.2f}× its bound; {whole / max(inside, cpu[1] / os.cpu_count()):.2f}× the "
                     f"bound as the build runs labs; {cpu[1]:.2f} s of processor time, {cpu[1] / cpu[0]:.2f}× the seed's"))
        rows.append(("no-change rebuild", timed(build_command(site), runs=quick), "≤ 0.07× seed", ""))
        rows.append(("rebuild after a prose edit (guide page)",
                     timed(build_command(site), prepare=append(site / "content/course/guide.md", "\n句 {t}。\n"),
                           runs=quick), "≤ 0.15 s", ""))
        rows.append(("rebuild after a prose edit (lab page)",
                     timed(build_command(site), prepare=append(site / "content/course/lab09.md", "\n句 {t}。\n"),
                           runs=quick), "≤ 0.15 s", ""))
        # Its last cell edited: the lab runs again, and the two labs reading its results.json are
        # reused, since their bytes are the same (early cut-off).
        edited = timed(build_command(site), prepare=append(site / "compute/lab09_vision_attention.py",
                                                           "\nprint('edit {t}')\n"), runs=args.runs)
        rows.append(("rebuild after an edit to the lab's last cell (2 labs read it)", edited, "≤ 1.1× lab",
                     f"{edited / lab_floor:.2f}× the lab's own run"))
        course = make_course(tmp / "course", args.labs)
        serial = timed(build_command(course, "--jobs", "1"), prepare=clean(course), runs=args.runs)
        parallel = timed(build_command(course), prepare=clean(course), runs=args.runs)
        rows.append((f"{args.labs}-lab course, clean, serial (--jobs 1)", serial, "", ""))
        rows.append((f"{args.labs}-lab course, clean, parallel ({os.cpu_count()} cores)", parallel,
                     "≤ 0.65× serial", f"{parallel / serial:.2f}× serial"))
        rows.append((f"{args.labs}-lab course, no change", timed(build_command(course), runs=quick), "≤ 1 s", ""))
        rows.append((f"{args.labs}-lab course, prose edit (one lab page)",
                     timed(build_command(course), prepare=append(course / "content/labs/lab07.md", "\n句 {t}。\n"),
                           runs=quick), "≤ 0.2 s", ""))
        sizes = [search_per_page(course)]
        # A page as large as a teacher may write one: 1 MB of prose with 10,000 formulas, built anew
        # (its formulas' MathML made again: a fresh cache, the labs' entries kept).
        (site / "content/course/formulas.md").write_text(
            "---\ntitle: 公式很多的一页\n---\n" + "".join(
                f"第 {i} 个：$x_{{{i}}}^2 + \\alpha = {i}$，以及一些说明文字让这一行更长一点点。\n" for i in range(10_000)),
            encoding="utf-8")
        formulas = append(site / "content/course/formulas.md", "\n句 {t}。\n")

        def anew(i):                # (an edit too: else the build would find nothing changed and stop)
            shutil.rmtree(site / ".cache/memo", ignore_errors=True)
            formulas(i)
        rows.append(("a 1 MB page of 10,000 formulas, its memo cleared", timed(build_command(site), prepare=anew,
                                                                              runs=args.runs), "linear", ""))
        (site / "content/course/formulas.md").unlink()
        if args.big:
            big = make_course(tmp / "big", args.big, notes=True)
            pages = len(list((big / "content").rglob("*.md")))
            rows.append((f"{args.big}-lab course ({pages} pages), clean, parallel (once)",
                         timed(build_command(big), prepare=clean(big), runs=1), "", ""))
            rows.append((f"{args.big}-lab course, no change", timed(build_command(big), runs=quick), "≤ 0.3 s", ""))
            rows.append((f"{args.big}-lab course, prose edit (one lab page)",
                         timed(build_command(big), prepare=append(big / "content/labs/lab07.md", "\n句 {t}。\n"),
                               runs=quick), "≤ 0.3 s", ""))
            sizes.append(search_per_page(big))
        if args.pages:
            prose = make_pages(tmp / "pages", args.pages)
            rows.append((f"{args.pages}-page course, clean (once)", timed(build_command(prose), runs=1), "", ""))
            time.sleep(0.2)         # (what was just written settles: stored.py)
            run_once(build_command(prose))
            rows.append((f"{args.pages}-page course, no change", timed(build_command(prose), runs=quick),
                         "≤ 0.05× seed", ""))
            rows.append((f"{args.pages}-page course, prose edit (one page)",
                         timed(build_command(prose), prepare=append(prose / "content/notes/n0007.md", "\n句 {t}。\n"),
                               runs=quick), "≤ 0.2× seed", ""))
        # The largest process any build so far ran (a lab's or the build's own), in MiB.
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        weight, files = page_weight(site / "dist", "course/lab11.html")
        serve = None
        if args.saves and not serveloop.missing():
            serve = serveloop.measure(serveloop.copy_course(tmp / "serve"), "content/course/guide.md",
                                      "course/guide", args.saves, ENV)
            (tmp / "slowlab").mkdir()
            slow = serveloop.measure_slow_lab(tmp / "slowlab", args.saves, ENV)

    print(f"Benchmark on this machine ({os.cpu_count()} cores, Python {sys.version.split()[0]}), "
          f"median of {args.runs} runs ({quick} of each rebuild), wall time of a fresh process\n")
    print(f"| {'scenario':<58} | {'time':>8} | {'× floor':>8} | {'goal':<14} | note |")
    print(f"|{'-' * 60}|{'-' * 10}:|{'-' * 9}:|{'-' * 16}|------|")
    for name, seconds, goal, note in rows:
        print(f"| {name:<58} | {seconds:>6.2f} s | {seconds / floor:>7.2f}× | {goal:<14} | {note} |")
    print(f"\nlargest process of any build (labs included): {peak:.0f} MiB resident at its peak")
    for labs, pages, size in sizes:
        print(f"{labs}-lab course: search.json {size / 1024:.0f} KiB for {pages} pages "
              f"({size / pages / 1024:.1f} KiB per page)")
    print(f"lab page loads {weight / 1024:.0f} KiB uncompressed (goal ≤ 300 KB): "
          f"the HTML and {', '.join(f.rsplit('/', 1)[-1] for f in files)}")
    if serve:
        lat = serve["latencies"]
        print(f"serve, save -> reloaded page in Chromium, {len(lat)} saves of the guide: median "
              f"{statistics.median(lat):.3f} s, p95 {serveloop.percentile(lat, 0.95):.3f} s (goal ≤ 0.3 s), "
              f"of which the rebuild (median) {statistics.median(serve['rebuilds']):.3f} s")
        lat = slow["latencies"]
        print(f"serve, save -> reloaded page in Chromium, {len(lat)} saves of the last cell of a lab whose first "
              f"takes {serveloop.SLOW_START} s: median {statistics.median(lat):.3f} s, p95 "
              f"{serveloop.percentile(lat, 0.95):.3f} s = {serveloop.percentile(lat, 0.95) / slow['alone']:.3f}× the "
              f"lab's own run ({slow['alone']:.2f} s; goal ≤ 0.1×); {slow['resumed']} builds resumed at the edited cell")
    else:
        print(f"serve: not measured ({serveloop.missing() or '--saves 0'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
