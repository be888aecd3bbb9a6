"""A corpus of real teaching notebooks, none written here: laid out from public repositories, each
built as a notebook page and compared, cell by cell, with what a real Jupyter kernel shows.

    python tests/corpus/corpus.py lay      # copy them out of the fetched snapshots (see MIRROR)
    python tests/corpus/corpus.py report   # build each, run each in a kernel, print the table

The notebooks are not committed: this file says which they are, and lays them out of snapshots of
their repositories (`fetch github:OWNER/NAME` puts one in $CORPUS_MIRROR, /work/.mirror by default).
Each notebook goes into a site of its own (content/NAME.ipynb, with the files of its folder beside
it, as its repository has them), and is measured on what its page shows against what nbclient's
kernel gives for the same notebook in the same folder:

- built as received: the build succeeds on the notebook as it came; and with `allow_errors: true`
  added to its front matter, for notebooks whose cells fail under today's libraries in Jupyter too;
- text: the share of code cells whose text (printed, and their values' text/plain) is the kernel's,
  leaving out cells whose text is a time or a random draw (it differs in every run of either);
- figures: the share of the kernel's images that the page shows, cell by cell;
- rich: the share of the kernel's rich outputs (HTML, Markdown, LaTeX, SVG, widgets, scripts)
  that the page shows in the representation JupyterLab shows.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MIRROR = Path(os.environ.get("CORPUS_MIRROR", "/work/.mirror"))
LAID = Path(os.environ.get("CORPUS_DIR", REPO / ".cache" / "corpus"))
MAX_NEIGHBOUR = 2 * 2**20           # files beside a notebook larger than this are left out (none is read)

# (repository, notebook): textbooks, lecture series, a Chinese course, Jupyter's own examples.
CORPUS = [
    ("jakevdp/PythonDataScienceHandbook", "notebooks/01.03-Magic-Commands.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/01.07-Timing-and-Profiling.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/02.02-The-Basics-Of-NumPy-Arrays.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/02.06-Boolean-Arrays-and-Masks.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/03.01-Introducing-Pandas-Objects.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/03.04-Missing-Values.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/03.07-Merge-and-Join.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/04.01-Simple-Line-Plots.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/04.05-Histograms-and-Binnings.ipynb"),
    ("jrjohansson/scientific-python-lectures", "Lecture-2-Numpy.ipynb"),
    ("jrjohansson/scientific-python-lectures", "Lecture-4-Matplotlib.ipynb"),
    ("jrjohansson/scientific-python-lectures", "Lecture-5-Sympy.ipynb"),
    ("barbagroup/CFDPython", "lessons/01_Step_1.ipynb"),
    ("barbagroup/CFDPython", "lessons/02_Step_2.ipynb"),
    ("barbagroup/CFDPython", "lessons/04_Step_3.ipynb"),
    ("barbagroup/CFDPython", "lessons/07_Step_5.ipynb"),
    ("barbagroup/CFDPython", "lessons/12_Step_9.ipynb"),
    ("lijin-THU/notes-python", "02-python-essentials/02.03-numbers.ipynb"),
    ("lijin-THU/notes-python", "02-python-essentials/02.06-lists.ipynb"),
    ("lijin-THU/notes-python", "02-python-essentials/02.10-dictionaries.ipynb"),
    ("lijin-THU/notes-python", "02-python-essentials/02.19-exceptions.ipynb"),
    ("lijin-THU/notes-python", "03-numpy/03.02-matplotlib-basics.ipynb"),
    ("lijin-THU/notes-python", "03-numpy/03.03-numpy-arrays.ipynb"),
    ("numerical-mooc/numerical-mooc", "lessons/01_phugoid/01_01_Phugoid_Theory.ipynb"),
    ("numerical-mooc/numerical-mooc", "lessons/02_spacetime/02_01_1DConvection.ipynb"),
    ("numerical-mooc/numerical-mooc", "lessons/02_spacetime/02_03_1DDiffusion.ipynb"),
    ("jupyter/notebook", "docs/source/examples/Notebook/Running Code.ipynb"),
    ("jupyter/notebook", "docs/source/examples/Notebook/Typesetting Equations.ipynb"),
    ("jupyter/notebook", "docs/source/examples/Notebook/Working With Markdown Cells.ipynb"),
    ("matplotlib/AnatomyOfMatplotlib", "AnatomyOfMatplotlib-Part0-Intro2NumPy.ipynb"),
    ("matplotlib/AnatomyOfMatplotlib", "AnatomyOfMatplotlib-Part1-Figures_Subplots_and_layouts.ipynb"),
    ("rougier/numpy-100", "100_Numpy_random.ipynb"),
]


def _git(repo: str, *args: str) -> bytes:
    git_dir = MIRROR / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True).stdout


def available() -> bool:
    return all((MIRROR / repo.replace("/", "+") / "repo").is_dir() for repo in {r for r, _ in CORPUS})


SUBTREE = {"jupyter/notebook": "docs/source/examples"}     # the part of a repository that holds its notebooks


def lay(into: Path = LAID) -> list[Path]:
    """Each repository's tree as it is (its files up to MAX_NEIGHBOUR, but for its Markdown and
    notebooks, which would be pages), with the corpus's notebooks in it: into/REPO/PATH. Returns
    the notebooks."""
    laid = []
    for repo in sorted({r for r, _ in CORPUS}):
        tree = into / repo.replace("/", "+")
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        base = SUBTREE.get(repo, "")
        listing = _git(repo, "ls-tree", "-r", "-l", "HEAD", *(["--", base + "/"] if base else []))
        for line in listing.decode().splitlines():
            meta, _, file = line.partition("\t")
            size = meta.split()[3]
            if file.endswith((".ipynb", ".md", ".rst")) or size == "-" or int(size) > MAX_NEIGHBOUR:
                continue
            target = tree / os.path.relpath(file, base or ".")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_git(repo, "show", f"HEAD:{file}"))
        for path in (p for r, p in CORPUS if r == repo):
            notebook = tree / os.path.relpath(path, base or ".")
            notebook.parent.mkdir(parents=True, exist_ok=True)
            notebook.write_bytes(_git(repo, "show", f"HEAD:{path}"))
            laid.append(notebook)
    return laid


def laid() -> list[tuple[Path, Path]]:
    """(the repository's laid tree, a notebook in it) for every notebook of the corpus."""
    found = []
    for repo, path in CORPUS:
        tree = LAID / repo.replace("/", "+")
        found.append((tree, tree / os.path.relpath(path, SUBTREE.get(repo, "") or ".")))
    return found


# -- the kernel's outputs and ours -----------------------------------------------------

def kernel_outputs(notebook: Path) -> list[list[dict]]:
    """Each non-empty code cell's outputs, as a real kernel (nbclient) gives them in the notebook's folder."""
    import nbclient
    import nbformat
    book = nbformat.read(notebook, 4)
    client = nbclient.NotebookClient(book, timeout=120, allow_errors=True, kernel_name="python3",
                                     resources={"metadata": {"path": str(notebook.parent)}})
    client.execute()
    return [cell.outputs for cell in book.cells if cell.cell_type == "code" and cell.source.strip()]


def build_page(tree: Path, notebook: Path, site: Path, allow_errors: bool = False) -> tuple[int, str, list]:
    """The notebook built as a page of a site of its own, its repository's files in content/ around it
    as they lie there: (exit code, what the build said, each code cell's outputs as the page shows them)."""
    sys.path.insert(0, str(REPO / "tests"))
    from support import tiny_site
    shutil.rmtree(site, ignore_errors=True)
    tiny_site(site)
    shutil.copytree(tree, site / "content" / "nb", ignore=lambda folder, names: [
        n for n in names if n.endswith(".ipynb") and Path(folder, n) != notebook])
    rel = notebook.relative_to(tree)
    page = site / "content" / "nb" / rel
    if allow_errors:
        data = json.loads(page.read_text(encoding="utf-8"))
        cells = data["cells"]
        first = "".join(cells[0].get("source", "")) if cells else ""
        if cells and cells[0].get("cell_type") == "raw" and first.startswith("---"):
            cells[0] = {**cells[0], "source": first.replace("---\n", "---\nallow_errors: true\n", 1)}
        else:
            cells.insert(0, {"cell_type": "raw", "metadata": {}, "source": "---\nallow_errors: true\n---"})
        page.write_text(json.dumps(data), encoding="utf-8")
    result = subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(site)], capture_output=True,
                            text=True, timeout=900)
    from sitegen.project.nbsource import lab_id
    manifests = sorted((site / ".cache" / "labs" / lab_id(f"content/nb/{rel.as_posix()}")).glob("*/manifest.json"))
    cells = json.loads(manifests[0].read_text(encoding="utf-8"))["cells"] if manifests else []
    return result.returncode, result.stderr, [c.get("outputs", []) for c in cells]


# -- comparing ---------------------------------------------------------------------------

RICH = ("text/html", "text/markdown", "text/latex", "image/svg+xml",
        "application/vnd.jupyter.widget-view+json", "application/javascript")
VARIES = re.compile(r"per loop|Wall time|CPU times|\d+(\.\d+)? ?[nµμm]?s ±|random|rand", re.I)
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
CODE_NAME = re.compile(r"\((?:\d+\.py|In\[\d+\]), line")      # ipykernel names a cell's code by its hash, we as In[N]


def _text(outputs: list[dict]) -> str:
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", "") if isinstance(out.get("text"), str) else "".join(out["text"]))
        elif out.get("output_type") == "execute_result":
            plain = out.get("data", {}).get("text/plain", "")
            parts.append(plain if isinstance(plain, str) else "".join(plain))
        elif out.get("output_type") == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
    return CODE_NAME.sub("(CELL, line", ADDRESS.sub("", "\n".join(p.rstrip() for p in parts))).strip()


def _images(outputs: list[dict]) -> int:
    return sum(1 for out in outputs if {"image/png", "image/jpeg", "figure"} & set(out.get("data", {})))


def _shown(data: dict) -> str | None:
    from sitegen.pages.outputs import choose
    return "figure" if "figure" in data else choose(data)


def compare(reference: list[list[dict]], ours: list[list[dict]], source: list[str], differing=None) -> dict:
    """The figures of one notebook (see the module's text); `differing`, a list, gets each code cell whose
    text is not the kernel's, as (cell, the kernel's, ours)."""
    text = [0, 0]
    images = [0, 0]
    rich = [0, 0]
    for k, ref in enumerate(reference):
        mine = ours[k] if k < len(ours) else []
        expected = _text(ref)
        if expected and not VARIES.search(expected + source[k]):
            text[1] += 1
            text[0] += _text(mine) == expected
            if differing is not None and _text(mine) != expected:
                differing.append((k + 1, expected, _text(mine)))
        wanted = _images(ref)
        images[1] += wanted
        images[0] += min(wanted, _images(mine))
        shown = [_shown(o["data"]) for o in mine if "data" in o]
        live = any(mime in o.get("data", {}) for o in ref for mime in RICH[4:])     # a widget, a live figure (nbagg)
        for out in (o for o in ref if "data" in o and _shown(o["data"]) in RICH):
            rich[1] += 1
            interactive = live or any(mime in out["data"] for mime in RICH[4:])      # shown statically
            rich[0] += _shown(out["data"]) in shown or (interactive and bool(shown))
    return {"text": text, "images": images, "rich": rich}


def measure(tree: Path, notebook: Path, work: Path) -> dict:
    import nbformat
    source = [c.source for c in nbformat.read(notebook, 4).cells if c.cell_type == "code" and c.source.strip()]
    reference = kernel_outputs(notebook)
    code, said, ours = build_page(tree, notebook, work / "as-received")
    row = {"name": f"{tree.name.split('+')[0]}/{notebook.stem}", "as_received": code == 0,
           "kernel_errors": sum(o.get("output_type") == "error" for cell in reference for o in cell),
           "said": said.strip().splitlines()[-3:]}
    if code != 0:
        code, said, ours = build_page(tree, notebook, work / "allowed", allow_errors=True)
        row["said_allowed"] = said.strip().splitlines()[-3:]
    row["allowed"] = code == 0
    differing: list = []
    row.update(compare(reference, ours, source, differing) if code == 0 else
               {"text": [0, 0], "images": [0, 0], "rich": [0, 0]})
    row["differing"] = differing
    return row


def report(rows: list[dict]) -> str:
    lines = [f"{'notebook':52} kernel received allowed  text      figures   rich", ""]
    for row in rows:
        kernel = f"{row['kernel_errors']} err" if row["kernel_errors"] else "clean"
        lines.append(f"{row['name'][:52]:52} {kernel:6} {'yes' if row['as_received'] else 'no':8} "
                     f"{'yes' if row['allowed'] else 'no':8} "
                     + "  ".join(f"{row[k][0]:>3}/{row[k][1]:<4}" for k in ("text", "images", "rich")))
    total = {k: [sum(r[k][i] for r in rows) for i in (0, 1)] for k in ("text", "images", "rich")}
    received = sum(r["as_received"] for r in rows)
    allowed = sum(r["allowed"] for r in rows)
    clean = [r for r in rows if not r["kernel_errors"]]
    lines.append(f"{len(clean)} run in a kernel without an error: {sum(r['as_received'] for r in clean)} of them built "
                 f"as received; the others raise in the kernel too, so they build only with allow_errors")
    lines.append(f"{len(rows)} notebooks: {received} built as received ({received / len(rows):.0%}), {allowed} with "
                 f"allow_errors ({allowed / len(rows):.0%}); "
                 + ", ".join(f"{k} {v[0]}/{v[1]} ({v[0] / max(v[1], 1):.0%})" for k, v in total.items()))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    if sys.argv[1:] == ["lay"]:
        for path in lay():
            print(path)
    elif sys.argv[1:2] == ["report"]:
        import tempfile
        wanted = sys.argv[2:]
        rows = []
        for tree, notebook in laid():
            if wanted and not any(w in str(notebook) for w in wanted):
                continue
            with tempfile.TemporaryDirectory() as work:
                rows.append(measure(tree, notebook, Path(work)))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "differing"}, ensure_ascii=False), flush=True)
            for cell, theirs, mine in rows[-1]["differing"]:
                print(f"  cell {cell}: kernel {theirs[:300]!r}\n           ours   {mine[:300]!r}", flush=True)
        print(report(rows))
    else:
        sys.exit(__doc__)
