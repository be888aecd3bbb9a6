"""A book of real teaching notebooks, none written here, built as one site against its floor: each
notebook's code run as a plain Python script, measured in the same run.

    python tests/corpus/corpus.py lay      # the notebook corpus, out of the fetched snapshots
    python bench/notebookbook.py           # median of 3 runs of each row
    python bench/notebookbook.py --runs 5 --jobs 2

The book is BOOK: eight notebooks of the corpus (pandas tables, SymPy, Matplotlib, plain text), each in
content/ with the files of its folder beside it, as its repository has them, each row a fresh
`python build.py` process.

Each has `allow_errors: true` (some teach by an error, or stumble on today's libraries: their cells show
the error, as in Jupyter). Rows:

- clean: an empty cache. Its floor is the notebooks' plain runs (run one after another, each timed):
  its bound is max(the longest, their processor time / the cores a build may use); printed beside
  the sum (the notebooks one after another) and the processor time the build's processes took;
- no-change: the same sources again;
- prose edit: a word appended to the first Markdown cell of one notebook;
- last-cell code edit: a line appended to the last code cell of that notebook; its floor is that
  notebook's plain run, alternated with the build (pairs), and the goal is 1.3x it + 0.3 s.

Beside each floor, the proposed one: IPython's run of the notebook (ipython_script), what a Jupyter
kernel pays to make the outputs a notebook page shows (reprs, tracebacks, figures), which the plain
run leaves out.

The plain run of a notebook is its code cells, each line that is IPython's own (a %magic, a !command)
left out (a %%timeit cell's body and a %timeit line's statement timed as IPython times them), in one
`python` process in the notebook's folder, with
Matplotlib's Agg backend.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests/corpus"))
from corpus import LAID, SUBTREE  # noqa: E402 - where the corpus's notebooks are laid

sys.path.insert(0, str(REPO))
from sitegen.labs.labjobs import timeit_magic  # noqa: E402 - the build's reading of a %timeit line
from sitegen.labs.labipython import IMAGES, SHOWN_FIRST  # noqa: E402 - which representations a lab makes

# (repository, notebook): what a course's notebooks are made of.
BOOK = [
    ("jakevdp/PythonDataScienceHandbook", "notebooks/03.01-Introducing-Pandas-Objects.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/03.07-Merge-and-Join.ipynb"),
    ("jrjohansson/scientific-python-lectures", "Lecture-5-Sympy.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/04.05-Histograms-and-Binnings.ipynb"),
    ("barbagroup/CFDPython", "lessons/01_Step_1.ipynb"),
    ("jrjohansson/scientific-python-lectures", "Lecture-2-Numpy.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/02.06-Boolean-Arrays-and-Masks.ipynb"),
    ("matplotlib/AnatomyOfMatplotlib", "AnatomyOfMatplotlib-Part1-Figures_Subplots_and_layouts.ipynb"),
]
EDITED = (0, 2)     # the notebooks whose last code cell is edited: pandas' (a second of code), SymPy's (the
                    # longest: its %%timeit cells run hundreds of loops); the first's prose is edited too
SITE = "site:\n  title: A book of notebooks\n  base_url: https://example.invalid\n  language: en\n"
# As on an author's machine: Python keeps bytecode beside the sources (not under a PYTHONPYCACHEPREFIX,
# where a lab, which may write only in its own folder, could keep none: each import compiled anew).
ENV = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")},
       "MPLBACKEND": "Agg"}


def source(repo: str, path: str) -> Path:
    return LAID / repo.replace("/", "+") / os.path.relpath(path, SUBTREE.get(repo, "") or ".")


def lay(root: Path) -> list[Path]:
    """The book's site in `root`: each notebook in content/<its repository's name>/ beside the files of
    its folder. Returns the notebooks as laid."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "content").mkdir(parents=True)
    (root / "site.yaml").write_text(SITE, encoding="utf-8")
    laid = []
    for repo, path in BOOK:
        notebook = source(repo, path)
        if not notebook.is_file():
            sys.exit(f"{notebook} is missing: fetch github:{repo}, then python tests/corpus/corpus.py lay")
        folder = root / "content" / repo.split("/")[1]
        if not folder.exists():
            shutil.copytree(notebook.parent, folder, ignore=shutil.ignore_patterns("*.ipynb", "*.md", "*.rst"))
        data = json.loads(notebook.read_text(encoding="utf-8"))       # (their lessons show errors: as Jupyter
        data["cells"].insert(0, {"cell_type": "raw", "metadata": {}, "source": "---\nallow_errors: true\n---"})
        (folder / notebook.name).write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
        laid.append(folder / notebook.name)
    links = "\n".join(f"- [{path.stem}]({path.relative_to(root / 'content').as_posix()})" for path in laid)
    (root / "content/index.md").write_text(f"---\ntitle: A book of notebooks\n---\n{links}\n", encoding="utf-8")
    (root / "content/404.md").write_text("---\ntitle: Not found\n---\nNo page here.\n", encoding="utf-8")
    return laid


def plain_script(notebook: Path) -> str:
    """The notebook's code cells as one plain script (IPython's own lines left out), each run on where
    the one before raised (as a notebook whose errors are its lesson runs). A `%%timeit` cell, or a
    `%timeit` line, times its code as IPython does (timeit's loops until 0.2 s, 7 repeats, or its -n and
    -r): that work is the notebook's."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    codes = []
    for cell in cells:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] != "code":
            continue
        first, _, body = text.lstrip().partition("\n")
        if first.startswith("%%timeit"):
            codes.append((_timing(first)[0], body))
            continue
        if first.startswith(("%%time", "%%capture")):               # (its body, once)
            text = body
        elif first.startswith("%%"):                                  # (another language's: not Python)
            continue
        for line in text.splitlines():
            if line.lstrip().startswith("%timeit "):
                codes.append(_timing(line.strip()))
        codes.append((None, "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("%", "!")))))
    return (f"import timeit\nCELLS = {codes!r}\nspace = {{'__name__': '__main__'}}\nfor timing, code in CELLS:\n"
            "    try:\n        if timing is None:\n            exec(compile(code, '<cell>', 'exec'), space)\n"
            "            continue\n        timer = timeit.Timer(code, globals=space)\n"
            "        timer.repeat(timing[1], timing[0] or timer.autorange()[0])\n"
            "    except Exception:\n        pass\n")


def _timing(magic: str) -> tuple[tuple[int, int], str]:
    """((loops, repeats), the statement) of a %timeit or %%timeit line (its -n and -r; 0 loops: as many
    as fill 0.2 s), read as the build reads it to order its labs."""
    _, options, statement = timeit_magic(magic)
    loops, repeats = options.get("-n", "0"), options.get("-r", "7")
    return (int(loops) if loops.isdigit() else 0, int(repeats) if repeats.isdigit() else 7), statement


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and processor seconds (its own and its children's) of one run (of a build: the lab
    processes, which its lab host does not wait for, are not in it), in `env` (else ENV)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env or ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)} in {cwd}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ipython_script(notebook: Path) -> str:
    """The notebook's code cells run in IPython's own shell, as a kernel runs them and nothing more:
    each output in every representation a kernel asks for (a table's HTML with its text) but an image
    where it has HTML, Markdown or LaTeX (a SymPy formula's PNG), which a lab does not make either,
    each error's traceback formatted (as text, as a page shows it), figures drawn by Matplotlib's inline backend where it is installed (as ipykernel
    does, once pyplot is imported); its !commands left out, as the plain run leaves them (a lab refuses
    them). No sandbox, no fork, no conversion of outputs: what a Jupyter kernel pays to make the
    outputs this notebook's page shows."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    codes = ["\n".join(line for line in ("".join(cell["source"]) if isinstance(cell["source"], list)
                                         else cell["source"]).splitlines() if not line.lstrip().startswith("!"))
             for cell in cells if cell["cell_type"] == "code"]
    return (f"CELLS = {codes!r}\nimport importlib.util, os\n"
            "if importlib.util.find_spec('matplotlib_inline'):        # (as ipykernel: once pyplot is imported)\n"
            "    os.environ['MPLBACKEND'] = 'module://matplotlib_inline.backend_inline'\n"
            "from IPython.core.interactiveshell import InteractiveShell\nfrom traitlets.config import Config\n"
            "config = Config()\nconfig.HistoryManager.enabled = False\nconfig.InteractiveShell.colors = 'nocolor'\n"
            "shell = InteractiveShell.instance(config=config)\n"
            "shell.display_formatter.active_types = list(shell.display_formatter.formatters)\n"
            f"every, images, first = shell.display_formatter.format, {list(IMAGES)!r}, {list(SHOWN_FIRST)!r}\n"
            "def format(obj, include=None, exclude=None):\n"
            "    data, metadata = every(obj, include, [*(exclude or ()), *images])\n"
            "    return (data, metadata) if any(mime in data for mime in first) else every(obj, include, exclude)\n"
            "shell.display_formatter.format = format\n"
            "for code in CELLS:\n    shell.run_cell(code, store_history=False)\n")


def ipython_run(notebook: Path) -> tuple[float, float]:
    return plain_run(notebook, ipython_script)


def plain_run(notebook: Path, script_of=plain_script) -> tuple[float, float]:
    script = notebook.parent / f".bench-{notebook.stem}.py"
    script.write_text(script_of(notebook), encoding="utf-8")
    try:
        return timed([sys.executable, script.name], notebook.parent)
    finally:
        script.unlink()


def build(root: Path, jobs: int | None) -> tuple[float, float]:
    return timed([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(root / "dist"),
                  "--cache", str(root / "cache"), *(["--jobs", str(jobs)] if jobs else [])], root)


def edit_cell(notebook: Path, kind: str, text: str) -> None:
    """Append `text` to the first Markdown cell (kind "markdown") or the last code cell of `notebook`."""
    data = json.loads(notebook.read_text(encoding="utf-8"))
    cells = [cell for cell in data["cells"] if cell["cell_type"] == kind]
    cell = cells[0] if kind == "markdown" else cells[-1]
    joined = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    cell["source"] = joined + text
    notebook.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="the build's --jobs (default: every core)")
    args = parser.parse_args()
    cores = args.jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="notebook-book-") as tmp:
        root = Path(tmp) / "book"
        notebooks = lay(root)
        plain = [plain_run(notebook) for notebook in notebooks]          # (a first run: imports into the OS cache)
        clean, plains, shells = [], [], []
        for _ in range(args.runs):
            plains.append([plain_run(notebook) for notebook in notebooks])
            shells.append([ipython_run(notebook) for notebook in notebooks])
            shutil.rmtree(root / "cache", ignore_errors=True)
            shutil.rmtree(root / "dist", ignore_errors=True)
            clean.append(build(root, args.jobs))
        plain = [(median([p[k][0] for p in plains]), median([p[k][1] for p in plains])) for k in range(len(notebooks))]
        shell = [(median([p[k][0] for p in shells]), median([p[k][1] for p in shells])) for k in range(len(notebooks))]
        longest, total_cpu = max(wall for wall, _ in plain), sum(cpu for _, cpu in plain)
        bound = max(longest, total_cpu / cores)
        shell_longest, shell_cpu = max(wall for wall, _ in shell), sum(cpu for _, cpu in shell)
        shell_bound = max(shell_longest, shell_cpu / cores)
        nochange = [build(root, args.jobs) for _ in range(args.runs)]
        prose = []
        for k in range(args.runs):
            edit_cell(notebooks[EDITED[0]], "markdown", f" Edited {k}.")
            prose.append(build(root, args.jobs))
        code, floor, shell_floor = {}, {}, {}
        for index in EDITED:
            code[index], floor[index], shell_floor[index] = [], [], []
            for k in range(args.runs):
                floor[index].append(plain_run(notebooks[index]))
                shell_floor[index].append(ipython_run(notebooks[index]))
                edit_cell(notebooks[index], "code", f"\nbench_edit_{k} = {k}\n")
                code[index].append(build(root, args.jobs))
        print(f"A book of {len(notebooks)} real notebooks on {cores} core(s), median of {args.runs} runs\n")
        print("| notebook | plain run, wall s | processor s | IPython's run, wall s | processor s |")
        print("|---|---|---|---|---|")
        for notebook, (wall, cpu), (shell_wall, shell_cpu_one) in zip(notebooks, plain, shell):
            print(f"| {notebook.relative_to(root / 'content')} | {wall:.2f} | {cpu:.2f} | {shell_wall:.2f} | {shell_cpu_one:.2f} |")
        rows = [
            ("clean, execution included", median([w for w, _ in clean]), bound,
             f"bound max({longest:.2f}, {total_cpu:.2f} / {cores}); one after another {sum(w for w, _ in plain):.2f} s",
             "≤ 1.1x the bound"),
            ("clean, against IPython's runs", median([w for w, _ in clean]), shell_bound,
             f"bound max({shell_longest:.2f}, {shell_cpu:.2f} / {cores})", "(proposed) ≤ 1.1x the bound"),
            ("no-change rebuild", median([w for w, _ in nochange]), None, "", "no slower than before"),
            (f"one word of prose in {notebooks[EDITED[0]].name}", median([w for w, _ in prose]), None, "",
             "no slower than before"),
        ]
        for index in EDITED:
            base = median([wall for wall, _ in floor[index]])
            rows.append((f"the last code cell of {notebooks[index].name} edited", median([w for w, _ in code[index]]),
                         base, f"plain run's processor {median([c for _, c in floor[index]]):.2f} s",
                         f"≤ 1.3x + 0.3 s = {1.3 * base + 0.3:.2f} s"))
            base = median([wall for wall, _ in shell_floor[index]])
            rows.append((f"the same, against IPython's run of it", median([w for w, _ in code[index]]), base,
                         f"IPython's run's processor {median([c for _, c in shell_floor[index]]):.2f} s",
                         f"(proposed) ≤ 1.3x + 0.3 s = {1.3 * base + 0.3:.2f} s"))
        print("\n| scenario | wall s | floor s | ratio | measured beside | goal |")
        print("|---|---|---|---|---|---|")
        for name, wall, base, said, goal in rows:
            print(f"| {name} | {wall:.2f} | {f'{base:.2f}' if base else '–'} | {f'{wall / base:.2f}x' if base else '–'} "
                  f"| {said} | {goal} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
