"""A new teacher's first week, played on a fresh copy of this commit: python tests/first_week.py

Nothing here is the generator's own test fixture: it does what README's "A course of your own" says, in
a folder of its own, with the generator installed from its package (built by .ci/package, standing in
for PyPI) into the course's new virtualenv, as a teacher would:

 1. the course: `sitegen new site .` in a folder holding its .venv;
 2. three notebooks of their own: a CSV read with pandas and described, a progress loop; SymPy and
    %timeit; an exercise with its solution and a cell that fails on purpose;
 3. the first build names every package they import that is not installed, at once, with the command;
    the teacher runs it and adds the lines; then the build passes --strict;
 4. a week of edits: a prose-only notebook gains its first code cell, loses it, becomes a Markdown page,
    is renamed, and each build equals a clean build of the same sources, byte for byte (one that reuses
    the labs' runs: a %timeit prints another time every run; tests/test_differential.py holds the labs'
    own reuse to clean runs);
 5. the build the deploy publishes (site.yaml's `solutions: omitted`): no file of it holds the solution's
    text or output, which the teacher's --solutions build shows;
 6. each notebook's download, unpacked into an empty folder and run by a Jupyter kernel in a student's
    fresh virtualenv (the course's requirements, nbclient, ipykernel), prints what the page shows;
 7. the Pages simulation (.ci/pages-build), its requirements resolved from a clean place, and the
    deploy workflow's steps in their order on the course, which names a bibliography.

It prints each step and its time, and ends with "first-week: ok"; any failure says which step and why,
and exits 1. About 2-4 minutes (pip from its cache). CI runs it (.ci/run).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = REPO / ".venv/bin/python"
TITLE = "第三讲 · 从线性回归到梯度下降"
SOLUTION = "SOLUTION-WEEK1 答案是 55"
SOLUTION_OUTPUT = "SOLUTION-OUTPUT"


class Failed(Exception):
    pass


def run(command: list[str], cwd: Path, ok: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=900)
    if ok and done.returncode != 0:
        raise Failed(f"{' '.join(map(str, command))} failed ({done.returncode}):\n{done.stdout[-2000:]}\n"
                     f"{done.stderr[-3000:]}")
    return done


def notebook(cells: list[tuple[str, str]], front: str = "") -> str:
    """nbformat 4 as Jupyter saves it (one source line a JSON line)."""
    made = [{"cell_type": "raw", "id": "front", "metadata": {}, "source": front.splitlines(True)}] if front else []
    for number, (kind, source) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"c{number}", "metadata": {}, "source": source.splitlines(True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        made.append(cell)
    return json.dumps({"cells": made, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                       "name": "python3"}, "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1, ensure_ascii=False) + "\n"


HOUSES = notebook([
    ("markdown", "# 房价数据\n\n读入旁边的 `houses.csv`，先看整体：面积的均值是 {{ mean_area | .1f }} 平方米。"),
    ("code", "import pandas as pd\ndf = pd.read_csv('houses.csv')\nmean_area = float(df['面积'].mean())\n"
             "df.describe()"),
    ("markdown", "梯度下降的损失 $L(w) = \\frac{1}{n}\\sum_i (w x_i - y_i)^2$ 随步数下降："),
    ("code", "w, lr = 0.0, 1e-5\nxs, ys = df['面积'].tolist(), df['价格'].tolist()\nfor step in range(5):\n"
             "    grad = sum(2 * (w * x - y) * x for x, y in zip(xs, ys)) / len(xs)\n    w -= lr * grad\n"
             "    loss = sum((w * x - y) ** 2 for x, y in zip(xs, ys)) / len(xs)\n"
             "    print(f'step {step} ' + '=' * 40 + f' loss: {loss:.4f}')"),
    ("code", "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(4, 3))\n"
             "ax.scatter(xs, ys)\nax.set_xlabel('面积（平方米）')\nax.set_ylabel('价格（万元）')\nplt.show()"),
])
SYMBOLS = notebook([
    ("markdown", "# 符号求导\n\n用 SymPy 求 $f(x) = x^3$ 的导数。"),
    ("code", "import sympy as sp\nx = sp.symbols('x')\nsp.diff(x**3, x)"),
    ("code", "%timeit -n 10 -r 2 sum(range(1000))"),
])
PRACTICE = notebook([
    ("markdown", "# 练习\n\n::: exercise title=\"求和\"\n\n求 1 到 10 的和。\n\n::: solution\n\n" + SOLUTION),
    ("code", f"total = sum(range(11))\nprint('{SOLUTION_OUTPUT}', total)"),
    ("markdown", "::: end\n\n下面这个单元有意出错："),
    ("code", "1 / 0"),
], front="---\nallow_errors: true\n---")
CSV = "面积,价格\n50,300\n80,420\n100,560\n120,610\n"


class Week:
    def __init__(self, work: Path):
        self.work = work
        self.course = work / "lecture-03"
        self.index = work / "index"
        self.env = {"PIP_FIND_LINKS": str(self.index), "SOURCE_DATE_EPOCH": "1790000000",
                    "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        self.python = self.course / ".venv/bin/python"

    def step(self, name: str, action) -> None:
        start = time.monotonic()
        print(f"first-week: {name} ...", flush=True)
        action()
        print(f"first-week:   {time.monotonic() - start:.1f} s", flush=True)

    def build(self, *args: str, out: str = "dist", cache: str = ".cache", ok: bool = True):
        return run([str(self.python), "build.py", "--out", out, "--cache", cache, *args], self.course, ok, self.env)

    # 1.
    def new_course(self) -> None:
        run(["bash", str(REPO / ".ci/package"), str(self.index)], REPO)
        self.course.mkdir()
        run([sys.executable, "-m", "venv", ".venv"], self.course)
        run([str(self.course / ".venv/bin/pip"), "install", "-q", "computed-course"], self.course, env=self.env)
        run([str(self.course / ".venv/bin/sitegen"), "new", "site", ".", "--title", TITLE], self.course, env=self.env)

    # 2. and 3.
    def notebooks(self) -> None:
        (self.course / "content/week1").mkdir()
        (self.course / "content/week1/houses.csv").write_text(CSV, encoding="utf-8")
        (self.course / "content/week1/houses.ipynb").write_text(HOUSES, encoding="utf-8")
        (self.course / "content/week1/symbols.ipynb").write_text(SYMBOLS, encoding="utf-8")
        (self.course / "content/week1/practice.ipynb").write_text(PRACTICE, encoding="utf-8")
        (self.course / "content/reading.md").write_text("---\ntitle: 读物\n---\n画图用 Matplotlib [@Hunter:2007]。\n",
                                                        encoding="utf-8")
        (self.course / "content/references.bib").write_text(
            "@article{Hunter:2007, author = {Hunter, J. D.}, title = {Matplotlib: A 2D Graphics Environment},\n"
            "  journal = {Computing in Science \\& Engineering}, volume = {9}, number = {3}, year = {2007}}\n",
            encoding="utf-8")
        config = self.course / "site.yaml"
        text = config.read_text(encoding="utf-8").replace("  # bibliography: references.bib", "  bibliography: references.bib")
        config.write_text(text.replace("  - guide.md\n", "  - guide.md\n  - reading.md\n  - week1/houses.ipynb\n"
                                       "  - week1/symbols.ipynb\n  - week1/practice.ipynb\n", 1), encoding="utf-8")
        first = self.build("--strict", ok=False)
        said = first.stderr
        if first.returncode != 1 or "pip install pandas sympy" not in said or "Traceback" in said:
            raise Failed(f"the first build should name pandas and sympy at once, with the command:\n{said}")
        run([str(self.course / ".venv/bin/pip"), "install", "-q", "pandas", "sympy"], self.course, env=self.env)
        with open(self.course / "requirements.txt", "a", encoding="utf-8") as requirements:
            requirements.write("pandas\nsympy\n")
        done = self.build("--strict")
        if "warning" in done.stderr:
            raise Failed(f"warnings after the teacher did what the build said:\n{done.stderr}")
        page = (self.course / "dist/week1/houses.html").read_text(encoding="utf-8")
        if "面积的均值是 87.5 平方米" not in page or "<math" not in page:
            raise Failed("the houses page lacks its computed value or its formula")

    # 4.
    def transitions(self) -> None:
        week = self.course / "content/week2.ipynb"
        steps = [("week2.ipynb", [("markdown", "# 第二周\n\n先只写文字。")]),
                 ("week2.ipynb", [("markdown", "# 第二周\n\n加一个代码单元。"), ("code", "print(1 + 1)")]),
                 ("week2.ipynb", [("markdown", "# 第二周\n\n又删掉了。")]),
                 ("week2.md", None), ("week-two.ipynb", [("markdown", "# 第二周"), ("code", "print(2 + 2)")])]
        for name, cells in steps:
            for old in self.course.glob("content/week2.*"):
                old.unlink()
            for old in self.course.glob("content/week-two.*"):
                old.unlink()
            path = week.with_name(name)
            path.write_text(notebook(cells) if cells else "---\ntitle: 第二周\n---\n现在是 Markdown 页。\n",
                            encoding="utf-8")
            self.build("--strict")
            clean = self.work / "clean"         # (its labs' runs copied: %timeit prints another time each run)
            shutil.rmtree(clean, ignore_errors=True)
            shutil.copytree(self.course / ".cache/labs", clean / "cache/labs")
            self.build("--strict", out=str(clean / "dist"), cache=str(clean / "cache"))
            ours, theirs = tree(self.course / "dist"), tree(clean / "dist")
            if differ := sorted(rel for rel in ours.keys() | theirs.keys() if ours.get(rel) != theirs.get(rel)):
                raise Failed(f"after {name}: the incremental build differs from a clean one in {differ}")

    # 5.
    def student_build(self) -> None:
        student = self.course / "dist"          # what the deploy publishes: site.yaml says `solutions: omitted`
        if 'id="ref-Hunter:2007"' not in (student / "reading.html").read_text(encoding="utf-8"):
            raise Failed("the reading page lacks its bibliography's entry")
        for secret in (SOLUTION, SOLUTION_OUTPUT):
            leaked = [p for p in student.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()
                      or p.suffix == ".zip" and any(secret.encode() in zipfile.ZipFile(p).read(n)
                                                    for n in zipfile.ZipFile(p).namelist())]
            if leaked:
                raise Failed(f"the student build holds {secret!r} in {leaked}")
        teacher = self.work / "dist-teacher"    # the preview README says: every solution shown
        self.build("--strict", "--solutions", out=str(teacher), cache=str(self.work / "teacher-cache"))
        if not any(SOLUTION.encode() in p.read_bytes() for p in teacher.rglob("*.ipynb")):
            raise Failed("the teacher's build lost the solution (the check above could not fail)")

    # 6.
    def downloads_rerun(self) -> None:
        student = self.work / "student"
        run([sys.executable, "-m", "venv", str(student / ".venv")], self.work)
        run([str(student / ".venv/bin/pip"), "install", "-q", "-r", str(self.course / "requirements.txt"),
             "nbclient", "ipykernel"], self.work, env=self.env)
        for name in ("houses", "symbols", "practice"):
            folder = self.course / f"dist/week1/{name}"
            unpacked = student / name
            archive = folder / f"{name}.zip"
            if archive.exists():
                zipfile.ZipFile(archive).extractall(unpacked)
                path = next(unpacked.rglob(f"{name}.ipynb"))
            else:
                unpacked.mkdir(parents=True)
                path = unpacked / f"{name}.ipynb"
                shutil.copy(folder / f"{name}.ipynb", path)
            rerun = run([str(student / ".venv/bin/python"), "-c", RERUN, str(path)], path.parent)
            saved, got = json.loads(rerun.stdout)
            if saved != got:
                raise Failed(f"{name}: the download rerun printed\n{got}\nwhere the page shows\n{saved}")

    # 7.
    def pages_build(self) -> None:
        git = ["git", "-c", "user.name=teacher", "-c", "user.email=teacher@example.invalid"]
        run(git + ["init", "-q", "-b", "main"], self.course)
        run(git + ["add", "-A"], self.course)
        run(git + ["commit", "-qm", "A course of my own"], self.course)
        done = run(["bash", ".ci/pages-build"], self.course, env=self.env)
        if "pages-build: ok" not in done.stdout or "workflow: ok" not in done.stdout:
            raise Failed(done.stdout)


# Run in the student's virtualenv: the notebook's printed text as saved in the download, and as a kernel
# prints it now (timings, which differ every run, left out).
RERUN = """
import json, re, sys
import nbformat
from nbclient import NotebookClient
path = sys.argv[1]
book = nbformat.read(path, as_version=4)
def printed(book):
    return [re.sub(r"[\\d.]+ \\S?s ± [\\d.]+ \\S?s", "TIME", "".join(o.get("text", ""))) for c in book.cells
            if c.cell_type == "code" for o in c.outputs if o.output_type == "stream"]
saved = printed(book)
NotebookClient(book, timeout=300, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}}).execute()
print(json.dumps([saved, printed(book)]))
"""


def tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def main() -> int:
    if not PYTHON.exists():
        print("first-week: run README's first two commands first (it builds the package with .venv)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="first-week-") as folder:
        week = Week(Path(folder))
        try:
            for name, action in [("a course, as README says", week.new_course),
                                 ("three notebooks, and what they need", week.notebooks),
                                 ("a week of edits: each build equals a clean one", week.transitions),
                                 ("the build the deploy publishes holds no solution", week.student_build),
                                 ("each download reruns in a student's fresh virtualenv", week.downloads_rerun),
                                 ("the Pages simulation, and the workflow's steps", week.pages_build)]:
                week.step(name, action)
        except Failed as exc:
            print(f"first-week: FAILED: {exc}", file=sys.stderr)
            return 1
    print("first-week: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
