"""The book of real notebooks (notebookbook.py's) built by this project and by its peers, side by side in
one window, each against the floor measured in the same window. Kept out of CI: it installs the peers.

    python tests/corpus/corpus.py lay      # the notebook corpus, out of the fetched snapshots
    python bench/peers.py                  # installs the peers into .cache/peers (once), then 1 round
    python bench/peers.py --rounds 2 --only this,sphinx

The peers, installed as a user would (pip, npm), each with the same versions of the notebooks' own
libraries (NumPy, pandas, SymPy, Matplotlib, IPython, ipykernel...) as this checkout's environment:

- sphinx: Sphinx + myst-nb, Jupyter Book 1's engine: `sphinx-build` with myst-nb's jupyter-cache
  (`nb_execution_mode = "cache"`), errors allowed, the default theme;
- mkdocs: MkDocs Material + mkdocs-jupyter (`execute: true`, errors allowed, its cache on);
- mystmd: Jupyter Book 2's engine, `myst build --site --execute` (its execution cache; every code cell
  tagged `raises-exception`, its only way to run on past an error, as the others' allow_errors; kernels through
  a Jupyter server it starts; on as many kernels as it picks, cores - 1). Its HTML export needs its
  theme downloaded from the network at build time, which this bench has not got: it measures the site's
  content (every page executed, parsed and written as the theme reads it), not the theme's copy;
- nbconvert: `jupyter nbconvert --to html --execute --allow-errors`, the notebooks one after another;
  it keeps nothing between runs (no row for a rebuild; its code edit is that notebook's conversion).

Each round runs every scenario once per tool, the tools one after another: clean (outputs and caches
removed), no change, a word of prose in 03.01, a line appended to 03.01's last code cell (its
output, which the source does not hold, checked on the tool's pages: the tool ran it). The floor:
clean's is notebookbook.py's bound (max(the longest plain run, their processor time / cores)), the code
edit's that notebook's plain run, each measured in the same round. Prints the median of the rounds.
Kernels run as IPython's kernel runs them (its inline figures), not under Agg.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebookbook import EDITED, ENV, REPO, edit_cell, lay, plain_run, timed  # noqa: E402

PEERS = REPO / ".cache/peers"
VENV, NODE = PEERS / "venv", PEERS / "node"
BIN = VENV / "bin"
# The notebooks' own libraries: the peers' kernels import the very versions this project's labs do.
KERNEL_LIBRARIES = ("numpy", "matplotlib", "pandas", "sympy", "scipy", "seaborn", "pillow", "ipython", "ipykernel",
                    "vega_datasets")
PEER_PACKAGES = ("sphinx", "myst-nb", "mkdocs-material", "mkdocs-jupyter", "nbconvert", "jupyter-server")
PYTHON3 = {"name": "python3", "display_name": "Python 3", "language": "python"}
TOOLS = ("this", "sphinx", "mkdocs", "mystmd", "nbconvert")
SCENARIOS = ("clean", "no change", "prose edit", "code edit")


def install() -> None:
    """The peers in .cache/peers: a venv from PyPI, mystmd from npm (skipped when there)."""
    if not (BIN / "pip").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in KERNEL_LIBRARIES]
    subprocess.run([str(BIN / "pip"), "install", "-q", *pins, *PEER_PACKAGES], check=True, capture_output=True)
    if not (NODE / "node_modules/.bin/myst").exists():
        NODE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(NODE), "mystmd"], check=True)
    config = PEERS / "jupyter"                 # (mystmd's Jupyter server: this machine's user may be root)
    config.mkdir(exist_ok=True)
    (config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"allow_root": True}}))


def versions() -> str:
    listed = subprocess.run([str(BIN / "pip"), "list", "--format", "json"], capture_output=True, text=True,
                            check=True).stdout
    have = {entry["name"].lower().replace("_", "-"): entry["version"] for entry in json.loads(listed)}
    myst = subprocess.run([str(NODE / "node_modules/.bin/myst"), "--version"], capture_output=True, text=True).stdout
    return ", ".join([*(f"{name} {have.get(name, '?')}" for name in PEER_PACKAGES), f"mystmd {myst.strip()}"])


def peer_env() -> dict[str, str]:
    drop = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "MPLBACKEND", "VIRTUAL_ENV")
    env = {key: value for key, value in os.environ.items() if key not in drop}
    return {**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "JUPYTER_CONFIG_DIR": str(PEERS / "jupyter")}


def lay_for(tool: str, root: Path) -> list[Path]:
    """The book in `root` as `tool` reads it: notebookbook.py's layout (content/), the front matter cell it
    adds (this project's `allow_errors`) taken out again for the peers, their kernel IPython's python3 (one
    notebook names python2, which this project runs as Python 3 too), each peer's configuration beside."""
    notebooks = lay(root)
    if tool == "this":
        return notebooks
    for notebook in notebooks:
        data = json.loads(notebook.read_text(encoding="utf-8"))
        data["cells"].pop(0)
        data["metadata"]["kernelspec"] = PYTHON3         # (as Jupyter asks of a notebook saved for python2)
        if tool == "mystmd":                # (it stops a notebook at its first error, unless the cell is
            for cell in data["cells"]:      # tagged as raising: its counterpart of the others' allow_errors)
                if cell["cell_type"] == "code":
                    cell["metadata"].setdefault("tags", []).append("raises-exception")
        notebook.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    (root / "content/404.md").unlink()
    pages = "\n".join(path.relative_to(root / "content").with_suffix("").as_posix() for path in notebooks)
    (root / "content/index.md").write_text(f"# A book of notebooks\n\n```{{toctree}}\n{pages}\n```\n", encoding="utf-8")
    if tool == "sphinx":
        (root / "conf.py").write_text(
            'project = "A book of notebooks"\nextensions = ["myst_nb"]\nnb_execution_mode = "cache"\n'
            'nb_execution_allow_errors = True\nnb_execution_timeout = -1\nexclude_patterns = ["_build"]\n',
            encoding="utf-8")
    elif tool == "mkdocs":
        (root / "mkdocs.yml").write_text(
            "site_name: A book of notebooks\ndocs_dir: content\ntheme:\n  name: material\nplugins:\n  - search\n"
            "  - mkdocs-jupyter:\n      include: ['*.ipynb']\n      execute: true\n      allow_errors: true\n",
            encoding="utf-8")
    elif tool == "mystmd":
        (root / "template").mkdir()
        (root / "template/template.yml").write_text("myst: v1\ntitle: offline\nkind: site\n", encoding="utf-8")
        (root / "myst.yml").write_text("version: 1\nproject:\n  title: A book of notebooks\nsite:\n"
                                       "  template: ./template\n", encoding="utf-8")
    return notebooks


def command(tool: str, root: Path, notebooks: list[Path], scenario: str) -> list[list[str]]:
    """The commands one build of `tool` runs in `root` (nbconvert: one per notebook converted)."""
    if tool == "this":
        return [[sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(root / "dist"),
                 "--cache", str(root / "cache")]]
    if tool == "sphinx":
        return [[str(BIN / "sphinx-build"), "-q", "-b", "html", "-c", str(root), str(root / "content"),
                 str(root / "_build/html")]]
    if tool == "mkdocs":
        return [[str(BIN / "mkdocs"), "build", "-q", "-f", str(root / "mkdocs.yml"), "-d", str(root / "_build/site")]]
    if tool == "mystmd":
        return [[str(NODE / "node_modules/.bin/myst"), "build", "--site", "--execute"]]
    edited = [notebooks[EDITED[0]]] if scenario == "code edit" else notebooks
    return [[str(BIN / "jupyter"), "nbconvert", "--to", "html", "--execute", "--allow-errors", "--output-dir",
             str(root / "_build" / path.parent.name), str(path)] for path in edited]


def forget(tool: str, root: Path) -> None:
    """What the last build of `tool` made and kept, removed: a clean build."""
    for made in ("dist", "cache", "_build", ".jupyter_cache", ".cache"):
        shutil.rmtree(root / made, ignore_errors=True)
    if tool == "mkdocs":                        # (mkdocs-jupyter keeps its cache in the user's cache folder)
        shutil.rmtree(Path.home() / ".cache/mkdocs-jupyter", ignore_errors=True)


def shows(root: Path, text: str) -> bool:
    """Whether a file the build wrote (not a source: those hold the code, not its output) holds `text`."""
    made = [root / folder for folder in ("dist", "_build") if (root / folder).is_dir()]
    return any(text.encode() in path.read_bytes() for folder in made for path in folder.rglob("*") if path.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", default=",".join(TOOLS), help=f"a comma-separated subset of {', '.join(TOOLS)}")
    args = parser.parse_args()
    tools = [tool for tool in args.only.split(",") if tool]
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown:
        sys.exit(f"--only: unknown tool(s) {', '.join(unknown)}; the tools are {', '.join(TOOLS)}")
    install()
    env = peer_env()
    cores = os.cpu_count() or 1
    seconds: dict[tuple[str, str], list[float]] = {}
    floors: dict[str, list[float]] = {"clean": [], "code edit": []}
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
        books = {tool: (Path(tmp) / tool, lay_for(tool, Path(tmp) / tool)) for tool in tools}
        plain_run(books[tools[0]][1][0])                             # (a first run: imports into the OS cache)
        for round_ in range(args.rounds):
            plain = [plain_run(notebook) for notebook in books[tools[0]][1]]
            floors["clean"].append(max(max(w for w, _ in plain), sum(c for _, c in plain) / cores))
            floors["code edit"].append(plain[EDITED[0]][0])
            for scenario in SCENARIOS:
                for tool in tools:
                    root, notebooks = books[tool]
                    if scenario == "clean":
                        forget(tool, root)
                    elif scenario == "prose edit":
                        edit_cell(notebooks[EDITED[0]], "markdown", f" Edited {round_}.")
                    elif scenario == "code edit":
                        edit_cell(notebooks[EDITED[0]], "code", f"\nprint('edited', sum(range({1000 + round_})))\n")
                    if tool == "nbconvert" and scenario in ("no change", "prose edit"):
                        continue
                    wall = sum(timed(line, root, env if tool != "this" else ENV)[0]
                               for line in command(tool, root, notebooks, scenario))
                    seconds.setdefault((scenario, tool), []).append(wall)
                    if scenario == "code edit" and not shows(root, f"edited {sum(range(1000 + round_))}"):
                        sys.exit(f"{tool}: the edited cell's output is on no page: it did not run the edit")
                    print(f"round {round_ + 1} {scenario}: {tool} {wall:.2f} s", file=sys.stderr, flush=True)
    print(f"The book of {len(books[tools[0]][1])} notebooks, {cores} core(s), median of {args.rounds} round(s); "
          f"peers: {versions()}\n")
    print(f"| scenario | floor s | {' | '.join(tools)} |")
    print(f"|---|---|{'---|' * len(tools)}")
    for scenario in SCENARIOS:
        floor = statistics.median(floors[scenario]) if scenario in floors else None
        cells = []
        for tool in tools:
            walls = seconds.get((scenario, tool))
            if not walls:
                cells.append("–")
                continue
            wall = statistics.median(walls)
            cells.append(f"{wall:.2f}" + (f" ({wall / floor:.1f}x)" if floor else ""))
        print(f"| {scenario} | {f'{floor:.2f}' if floor else '–'} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
