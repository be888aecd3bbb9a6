"""Reuse proved differentially: after every step of a random sequence of edits, the incremental
build (its cache, its output brought up to date) equals a clean build (fresh cache, fresh output)
byte for byte.

The edits are what an author does (page bodies and titles, pages added and deleted, a template, the
CSS, site.yaml, same-size edits with the times put back, reverts, touches, hand edits in dist/) and
what a list of inputs written by hand would miss: a lab's data file, a notebook page's prose, code,
saved outputs and the files beside it that it reads or lists, a module imported relatively
inside a package, a package's __init__, a module of the generator itself, a newer version of a
package that renders, an edit made while a build runs, two same-size edits in one second. The
builds run the generator from a copy, so that its own code can be edited too. The same edits are
made on builds as serve makes them, in one process whose labs resume from checkpoints (resume.py).

The fast tier runs one short sequence. The slow tier runs DIFFERENTIAL_SEEDS sequences of
DIFFERENTIAL_STEPS steps (2 x 12 unless set; seeds from DIFFERENTIAL_FIRST_SEED), on a file system with whole-second times where one
can be mounted (root). A long run: DIFFERENTIAL_SEEDS=40 DIFFERENTIAL_STEPS=25 pytest -m slow -k
differential -n 2.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitegen.core.sources import source_path
from support import EPOCH, REPO, coarse_mount, edit, tiny_site, tree_bytes
from support import READER

LAB = """# %% setup
import json
from pathlib import Path
import numpy as np
import matplotlib.pyplot as plt
import pk
from pk.sub import VALUE
out = Path('out')
out.mkdir(exist_ok=True)
data = Path(__file__).with_name('tiny_data.txt').read_text().strip()
x = np.arange(6, dtype=float).reshape(2, 3) / 4 * float(data)
print('x =', x, pk.NOTE, VALUE)
fig, ax = plt.subplots(figsize=(4, 2))
ax.plot(x[0])
fig.savefig(out / 'line.png')

# %% save
(out / 'results.json').write_text(json.dumps({'x': x.tolist(), 'total': float(x.sum()),
                                              'note': pk.NOTE, 'value': VALUE}))
np.savez(out / 'tensors.npz', x=x)
print('saved')
"""
SWAP = [("是", "为"), ("值", "数"), ("页", "篇")]      # same length in UTF-8: same-size edits
# A notebook page (nbpage.py): its prose quotes its own names, it reads a file beside it and lists its folder.
NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
    "name": "python3", "display_name": "Python 3", "language": "python"}}, "cells": [
    {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": "# 笔记本页\n\n读到 {{ total }}，文件 {{ files }}。"},
    {"cell_type": "code", "id": "read", "metadata": {}, "execution_count": None, "outputs": [], "source":
     "import os\ntotal = float(open('points.txt').read())\nfiles = sorted(os.listdir('.'))\nprint(total)\ntotal * 2"},
    {"cell_type": "code", "id": "plot", "metadata": {}, "execution_count": None, "outputs": [], "source":
     "import matplotlib.pyplot as plt\nplt.plot([0, total])"}]}


# A notebook whose reading the audit hook alone does not see: a file held open across cells (and read on
# in the next: a checkpoint would share its offset), a file only tested for, a file a process it
# starts reads, a database. Its last cell is quick: under serve it resumes after the cells before.
UNSEEN = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
    "name": "python3", "display_name": "Python 3", "language": "python"}}, "cells": [
    {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": "# 看不见的读取"},
    {"cell_type": "code", "id": "open", "metadata": {}, "execution_count": None, "outputs": [], "source":
     "import os, sqlite3, subprocess\nlines = open('lines.txt')\nfirst = lines.readline().strip()"},
    {"cell_type": "code", "id": "rest", "metadata": {}, "execution_count": None, "outputs": [], "source":
     "second = lines.readline().strip()\nlines.close()\nflagged = os.path.exists('flag')\n"
     "catted = subprocess.check_output(['cat', 'cat.txt']).decode().strip()"},
    {"cell_type": "code", "id": "db", "metadata": {}, "execution_count": None, "outputs": [], "source":
     "with sqlite3.connect('n.sqlite') as db:\n    stored = db.execute('select n from t').fetchone()[0]\n"
     "print(first, second, flagged, catted, stored)"}]}


def _store(path: Path, n: int) -> None:
    import sqlite3
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("create table t (n)")
        db.execute("insert into t values (?)", (n,))
    db.close()


# A MyST Markdown notebook (sitegen/project/textnb.py), as Jupyter Book courses keep chapters.
MYST = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---
# 第一周

第 {n} 句，值 {{{{ week }}}}。

```{{code-cell}} ipython3
:tags: [hide-input]
week = {n} * 2
print(week)
```
"""


class Sequence:
    """One random sequence of edits on a site of its own, built by a generator of its own."""

    def __init__(self, folder: Path, seed: int):
        self.folder, self.rng, self.n = folder, random.Random(seed), 0
        self.gen, self.root = folder / "gen", folder / "site"
        self.fake = folder / "fake-versions"           # PYTHONPATH: .dist-info folders that fake a version
        self.out, self.cache = folder / "dist", folder / "cache"
        self.clean: dict[str, dict] = {}                # the whole tree's hash -> a clean build's bytes
        self.history: dict[str, list[bytes]] = {}       # file -> its earlier contents (for reverts)
        self.gen.mkdir(parents=True)
        shutil.copy2(REPO / "build.py", self.gen / "build.py")
        shutil.copytree(REPO / "sitegen", self.gen / "sitegen", ignore=shutil.ignore_patterns("__pycache__"))
        self.fake.mkdir()
        root = tiny_site(self.root)
        (root / "compute/tiny.py").write_text(LAB, encoding="utf-8")
        (root / "compute/tiny_data.txt").write_text("1\n", encoding="utf-8")
        (root / "compute/pk").mkdir()
        (root / "compute/pk/__init__.py").write_text("NOTE = 'n0'\n", encoding="utf-8")
        (root / "compute/pk/sub.py").write_text("from .core import VALUE\n", encoding="utf-8")
        (root / "compute/pk/core.py").write_text("VALUE = 'v0'\n", encoding="utf-8")
        (root / "compute/reader.py").write_text(READER, encoding="utf-8")
        (root / "content/reader.md").write_text("---\ntitle: 读取\nlab: reader\nparent: guide.md\n---\n::: cell read\n\n"
                                                "加倍：{{ doubled[0][1] }}。\n", encoding="utf-8")
        (root / "content/guide.md").write_text("---\ntitle: 导读\n---\n公式 $x^2 + 1$ 与 [读取](reader.md)。"
                                               "这一页是导读。\n", encoding="utf-8")
        edit(root / "content/index.md", "总和是 {{ total }}。", "总和是 {{ total }}，记号 {{ note }} 与 {{ value }}。")
        (root / "content/nb").mkdir()
        (root / "content/nb/points.txt").write_text("1.5\n", encoding="utf-8")
        (root / "content/nb/lesson.ipynb").write_text(json.dumps(NOTEBOOK, indent=1, ensure_ascii=False), encoding="utf-8")
        with open(root / "site.yaml", "a", encoding="utf-8") as config:
            config.write("  - id: reader\n    title: 读取\n    script: compute/reader.py\n    inputs: [tiny]\n"
                         "    images: reader/images\n    downloads: reader/materials\n    page: reader.md\n"
                         "sequence:\n  - guide.md\n  - reader.md\n  - nb/lesson.ipynb\n  - index.md\n")
        (root / "content/unseen").mkdir()
        (root / "content/unseen/lines.txt").write_text("a\nb\n", encoding="utf-8")
        (root / "content/unseen/cat.txt").write_text("c0\n", encoding="utf-8")
        _store(root / "content/unseen/n.sqlite", 0)
        (root / "content/unseen/reads.ipynb").write_text(json.dumps(UNSEEN, indent=1, ensure_ascii=False),
                                                         encoding="utf-8")
        with open(root / "content/index.md", "a", encoding="utf-8") as page:   # the lecture's map: others' words
            page.write("\n\n::: materials\n")
        edit(root / "site.yaml", "site:\n", "site:\n  bibliography: references.bib\n")
        (root / "content/references.bib").write_text(self.bibliography(2019, "统计", False), encoding="utf-8")
        (root / "content/cites.md").write_text("---\ntitle: 引用\n---\n见 [@ka]，@kb 与 @kc。\n", encoding="utf-8")
        self.log: list[str] = []

    # -- building ----------------------------------------------------------------
    def env(self) -> dict:
        return {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "PYTHONPATH": str(self.fake),
                "PYTHONDONTWRITEBYTECODE": "1"}

    def command(self, out: Path, cache: Path) -> list[str]:
        return [sys.executable, str(self.gen / "build.py"), "--root", str(self.root), "--out", str(out),
                "--cache", str(cache)]

    def build(self) -> str:
        done = subprocess.run(self.command(self.out, self.cache), capture_output=True, text=True,
                              env=self.env(), timeout=300)
        assert done.returncode == 0, f"{self.log}\n{done.stderr[-3000:]}"
        return done.stdout

    def tree_hash(self) -> str:
        h = hashlib.sha256()
        for top in (self.root, self.gen, self.fake):
            for path in sorted(top.rglob("*")):
                if "__pycache__" in path.parts:
                    continue
                h.update(str(path.relative_to(self.folder)).encode() + b"\0")
                if path.is_file():
                    h.update(path.read_bytes())
        return h.hexdigest()

    def clean_build(self) -> dict:
        """A clean build's bytes (a tree built before is not built again: clean builds are
        deterministic, which tests/test_rebuilds.py proves)."""
        key = self.tree_hash()
        if key not in self.clean:
            out, cache = self.folder / "clean", self.folder / "clean-cache"
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
            done = subprocess.run(self.command(out, cache), capture_output=True, text=True, env=self.env(),
                                  timeout=300)
            assert done.returncode == 0, f"{self.log}\n{done.stderr[-3000:]}"
            self.clean[key] = tree_bytes(out)
        return self.clean[key]

    def check(self) -> None:
        ours, clean = tree_bytes(self.out), self.clean_build()
        differ = sorted(rel for rel in ours.keys() | clean.keys() if ours.get(rel) != clean.get(rel))
        assert not differ, f"after {self.log}: incremental differs from clean in {differ[:8]}"

    # -- edits ---------------------------------------------------------------------
    def write(self, rel: str, text: str, keep_times: bool = False) -> None:
        path = self.root / rel
        stat = path.stat() if keep_times and path.exists() else None
        if path.exists():
            self.history.setdefault(rel, []).append(path.read_bytes())
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if stat is not None:
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    def pages(self) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix() for p in (self.root / "content").rglob("*.md")
                      if p.name != "404.md")

    def text(self, rel: str) -> str:
        return source_path(self.root, rel).read_text(encoding="utf-8")     # (a theme file the site lacks: the theme's)

    def edit_page_body(self):
        rel = self.rng.choice(self.pages())
        self.write(rel, self.text(rel) + f"\n第 {self.n} 次修改的一句。\n")

    def edit_page_title(self):
        rel = self.rng.choice([p for p in self.pages() if p not in ("content/index.md", "content/reader.md")])
        lines = self.text(rel).split("\n")
        lines[1] = f"title: 标题 {self.n}"
        self.write(rel, "\n".join(lines))

    def edit_parent(self):
        """The guide, reader.md's parent, gets a parent of its own or loses it: reader.md's breadcrumbs
        show one page more or fewer, though reader.md did not change."""
        text = self.text("content/guide.md")
        self.write("content/guide.md", text.replace("parent: index.md\n", "") if "parent: index.md\n" in text
                   else text.replace("\n---\n", "\nparent: index.md\n---\n", 1))

    def add_page(self):
        self.write(f"content/extra-{self.n}.md", f"---\ntitle: 附页 {self.n}\n---\n附页正文，见 [导读](guide.md)。\n")

    def delete_page(self):
        extra = [p for p in self.pages() if "/extra-" in p]
        if not extra:
            return self.add_page()
        rel = self.rng.choice(extra)
        self.history.setdefault(rel, []).append((self.root / rel).read_bytes())
        (self.root / rel).unlink()

    def edit_template(self):
        text = self.text("templates/page.html")
        self.write("templates/page.html", text.replace("</footer>", f"<!-- 第 {self.n} 版 --></footer>", 1))

    def edit_css(self):
        self.write("static/style.css", self.text("static/style.css") + f"\n.edit-{self.n} {{ color: #123; }}\n")

    def edit_site_yaml(self):
        text = self.text("site.yaml")
        title = text.split("title: ", 1)[1].split("\n", 1)[0]
        self.write("site.yaml", text.replace(f"title: {title}", f"title: 站点 {self.n}", 1))

    def switch_language(self):
        """The interface's language (vocabulary.yaml or vocabulary.en.yaml): every page's words change."""
        text = self.text("site.yaml")
        old, new = ("language: zh-CN", "language: en") if "language: zh-CN" in text else ("language: en", "language: zh-CN")
        self.write("site.yaml", text.replace(old, new, 1))

    def same_size_times_put_back(self):
        for _ in range(10):
            rel = self.rng.choice(self.pages())
            text = self.text(rel)
            pairs = [pair for pair in SWAP + [(b, a) for a, b in SWAP] if pair[0] in text.split("---", 2)[-1]]
            if pairs:
                old, new = self.rng.choice(pairs)
                head, body = text.rsplit("---", 1)
                self.write(rel, head + "---" + body.replace(old, new, 1), keep_times=True)
                return
        self.edit_page_body()

    def revert(self):
        choices = [rel for rel in self.history if self.history[rel]]
        if not choices:
            return self.edit_page_body()
        rel = self.rng.choice(choices)
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.root / rel).write_bytes(self.rng.choice(self.history[rel]))

    def touch(self):
        files = [p for p in self.root.rglob("*") if p.is_file()]
        os.utime(self.rng.choice(sorted(files)))

    def hand_edit_output(self):
        for folder in (self.out, self.out.with_name(f".{self.out.name}.sitegen-spare")):
            files = sorted(p for p in folder.rglob("*") if p.is_file() and p.stat().st_size > 10) if folder.is_dir() else []
            if files:
                path = self.rng.choice(files)
                data = bytearray(path.read_bytes())
                data[len(data) // 2] ^= 1
                with open(path, "r+b") as handle:       # in place, as an editor may
                    handle.write(data)

    def edit_data_file(self):
        self.write("compute/tiny_data.txt", f"{self.rng.choice([1, 2, 3, 4])}\n")

    def edit_relative_module(self):
        self.write("compute/pk/core.py", f"VALUE = 'v{self.n}'\n")

    def edit_package_init(self):
        self.write("compute/pk/__init__.py", f"NOTE = 'n{self.n}'\n")

    def edit_generator(self):
        """A change to how pages are made (render.py), not to what labs run with."""
        render = self.gen / "sitegen/render/render.py"
        text = render.read_text(encoding="utf-8")
        old = text.split('\'<pre tabindex="0"', 1)[1].split("'", 1)[0]
        render.write_text(text.replace(f'\'<pre tabindex="0"{old}\'', f'\'<pre tabindex="0" data-v="{self.n}">\''),
                          encoding="utf-8")
        self.expect_change = True

    def newer_package(self):
        for old in self.fake.glob("latex2mathml-*.dist-info"):
            old.rmdir()
        (self.fake / f"latex2mathml-99.{self.n}.dist-info").mkdir()
        self.expect_change = True

    def edit_during_build(self):
        edits = [self.edit_page_body, self.edit_template, self.edit_relative_module, self.edit_data_file]
        change = self.rng.choice(edits)
        build = subprocess.Popen(self.command(self.out, self.cache), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=self.env())
        time.sleep(self.rng.uniform(0, 1.2))
        before = {rel: len(kept) for rel, kept in self.history.items()}
        change()
        self.log.append(f"during a build: {change.__name__}")
        if self.rng.random() < 0.5:                      # and undone, the build still running or not
            time.sleep(self.rng.uniform(0, 0.5))
            for rel, kept in self.history.items():
                if len(kept) > before.get(rel, 0):
                    (self.root / rel).write_bytes(kept[-1])
            self.log.append("undone")
        _, stderr = build.communicate(timeout=300)
        assert build.returncode == 0, f"{self.log}\n{stderr[-3000:]}"

    def same_second(self):
        rel = "content/guide.md"
        text = self.text(rel)
        old, new = ("是导读", "为导读") if "是导读" in text else ("为导读", "是导读")
        self.write(rel, text.replace(old, new, 1))
        self.build()
        self.write(rel, self.text(rel).replace(new, old, 1))     # same size, within the second if it can

    def edit_equations(self):
        """A labelled formula added, removed or moved, or a label renamed, the page's title edited: the
        numbers, titles and the references that show them follow (content/eqs.md, in this site's syntax,
        MyST's or Quarto's), on its page and on another (content/refs.md)."""
        names = list(getattr(self, "equations", ["a", "b"]))
        choice = self.rng.choice(["add", "remove", "move", "rename"])
        choice = "add" if len(names) < 2 else choice
        if choice == "add":
            names.insert(self.rng.randrange(len(names) + 1), f"e{self.n}")
        elif choice == "remove":
            names.pop(self.rng.randrange(len(names)))
        elif choice == "move":
            names.append(names.pop(0))
        else:
            names[self.rng.randrange(len(names))] += "x"
        self.equations = names
        self.log[-1] += f" ({choice}: {' '.join(names)})"
        style = self.rng.choice(["site", "myst", "quarto"])
        formulas = {"site": "$$ x_{{{k}}} = {k} $$ {{#{name}}}", "myst": "$$\nx_{{{k}}} = {k}\n$$ ({name})",
                    "quarto": "$$\nx_{{{k}}} = {k}\n$$ {{#{name}}}"}[style]
        body = "\n\n".join(formulas.format(k=k, name=name) for k, name in enumerate(names))
        refs = "、".join({"site": "[](#{0})", "myst": "{{eq}}`{0}`", "quarto": "[](#{0})"}[style].format(name)
                        for name in reversed(names))
        # Its title, which refs.md shows, is its front matter's or its first heading's, edited or not.
        title = self.rng.choice(["---\ntitle: 公式\n---\n", f"# 公式 {self.rng.choice([1, 2])}\n\n"])
        self.write("content/eqs.md", f"{title}{body}\n\n见 {refs}。\n")
        if not (self.root / "content/refs.md").exists() or self.rng.random() < 0.3:
            # Another page shows their numbers: by a name alone, by the page's source, with text of its
            # own; it may name one that is gone (a warning) or come (the names it had, and a new one).
            named = self.rng.sample(names + ["a", "b", f"e{self.n + 1}"], 3)
            self.log[-1] += f" (refs.md shows {' '.join(named)})"
            self.write("content/refs.md", f"---\ntitle: 引用\n---\n式 {{eq}}`{named[0]}`、[](eqs.md#{named[1]})、"
                                          f"[第 %s 式](#{named[2]})，见 {{doc}}`eqs` 与 [](eqs.md)。\n")

    @staticmethod
    def bibliography(year: int, title: str, third: bool) -> str:
        return (f"@book{{ka, author = {{李航}}, title = {{{title}学习方法}}, year = {{{year}}}}}\n"
                "@article{kb, author = {Vaswani, Ashish and Shazeer, Noam}, title = {Attention}, journal = {NeurIPS},"
                " year = {2017}}\n" + ("@misc{kc, author = {周志华}, title = {机器学习}, year = {2016}}\n" if third else ""))

    def edit_bibliography(self):
        """An entry a page cites edited, one it names in a sentence added or removed, the style switched,
        or what the page cites changed (content/references.bib, content/cites.md)."""
        choice = self.rng.choice(["entry", "entry", "third", "style", "page"])
        bib = self.text("content/references.bib")
        self.log[-1] += f" ({choice})"
        if choice == "entry":
            self.write("content/references.bib", self.bibliography(2000 + self.n, self.rng.choice("统计机器"), "@misc{kc" in bib))
        elif choice == "third":
            year = int(bib.split("year = {", 1)[1][:4])
            self.write("content/references.bib", self.bibliography(year, bib.split("title = {", 1)[1][:2], "@misc{kc" not in bib))
        elif choice == "style":
            text = self.text("site.yaml")
            style = "  citation_style: chicago-author-date\n"
            self.write("site.yaml", text.replace(style, "") if style in text else
                       text.replace("  bibliography: references.bib\n", "  bibliography: references.bib\n" + style))
        else:
            cited = self.rng.sample(["[@ka]", "[@kb]", "[@ka; @kb]", "@kb", "@kc", "[see @ka, p. 3]"], 3)
            self.write("content/cites.md", f"---\ntitle: 引用\n---\n见 {'，'.join(cited)}。\n")

    def notebook(self) -> dict:
        return json.loads(self.text("content/nb/lesson.ipynb"))

    def save_notebook(self, notebook: dict) -> None:
        self.write("content/nb/lesson.ipynb", json.dumps(notebook, indent=1, ensure_ascii=False))

    def edit_notebook_prose(self):
        notebook = self.notebook()
        notebook["cells"][0]["source"] += f"\n\n第 {self.n} 次修改。"
        self.save_notebook(notebook)

    def edit_notebook_code(self):
        notebook = self.notebook()
        notebook["cells"][2]["source"] = f"import matplotlib.pyplot as plt\nplt.plot([0, total, {self.n}])"
        self.save_notebook(notebook)

    def save_notebook_outputs(self):
        """Jupyter saves what it ran: outputs and counts change, not a byte of the page's computation."""
        notebook = self.notebook()
        notebook["cells"][1]["execution_count"] = self.n
        notebook["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": f"saved {self.n}\n"}]
        self.save_notebook(notebook)

    def edit_notebook_data(self):
        self.write("content/nb/points.txt", f"{self.rng.choice([1.5, 2.5, 3.5])}\n")

    def add_notebook_neighbour(self):
        self.write(f"content/nb/extra-{self.n}.txt", "beside the notebook\n")

    def edit_unseen_lines(self):
        self.write("content/unseen/lines.txt", f"a{self.n}\nb{self.rng.randint(0, 9)}\n")

    def toggle_unseen_flag(self):
        flag = self.root / "content/unseen/flag"
        if flag.exists():
            flag.unlink()
        else:
            self.write("content/unseen/flag", "")

    def edit_unseen_catted(self):
        self.write("content/unseen/cat.txt", f"c{self.n}\n")

    def edit_unseen_database(self):
        path = self.root / "content/unseen/n.sqlite"
        self.history.setdefault("content/unseen/n.sqlite", []).append(path.read_bytes())     # (for revert)
        _store(path, self.n)

    def edit_unseen_last_cell(self):
        notebook = json.loads(self.text("content/unseen/reads.ipynb"))
        notebook["cells"][3]["source"] = notebook["cells"][3]["source"].rsplit("\n", 1)[0] + \
            f"\nprint(first, second, flagged, catted, stored, {self.n})"
        self.write("content/unseen/reads.ipynb", json.dumps(notebook, indent=1, ensure_ascii=False))

    def edit_last_cell(self):
        """The lab's last cell (under serve, it resumes after the first)."""
        text = self.text("compute/tiny.py")
        said = text.rsplit("print(", 1)[1].split(")", 1)[0]
        self.write("compute/tiny.py", text.replace(f"print({said})", f"print('saved', {self.n})"))

    # -- a page's transitions: a notebook that gains its first code cell or loses its last, a Markdown
    # page that becomes a notebook or back, a page renamed (content/week*.{md,ipynb}, one at a time).
    def week(self) -> str | None:
        found = sorted(p.relative_to(self.root).as_posix() for p in (self.root / "content").glob("week*.*"))
        return found[0] if found else None

    def week_notebook(self, rel: str, code: bool) -> None:
        cells = [{"cell_type": "markdown", "id": "w0", "metadata": {}, "source": f"# 第一周\n\n第 {self.n} 句。"}]
        if code:
            cells.append({"cell_type": "code", "id": "w1", "metadata": {}, "execution_count": None, "outputs": [],
                          "source": f"print(1 + {self.n})"})
        self.write(rel, json.dumps({**NOTEBOOK, "cells": cells}, indent=1, ensure_ascii=False))

    def page_transition(self):
        rel = self.week()
        if rel is None:                                  # a prose-only notebook is saved
            return self.week_notebook("content/week.ipynb", code=False)
        stem, suffix = rel.rsplit(".", 1)
        has_code = suffix == "ipynb" and '"code"' in self.text(rel)
        choice = self.rng.choice(["code", "rename", "format", "myst"])
        self.history.setdefault(rel, []).append((self.root / rel).read_bytes())
        if choice == "myst":            # a Markdown page's front matter names a kernel, or no longer does
            was = suffix == "md" and "kernelspec" in self.text(rel)
            if suffix == "ipynb":
                (self.root / rel).unlink()
            self.log[-1] += f" ({rel} -> {stem}.md, {'prose' if was else 'a MyST notebook'})"
            return self.write(f"{stem}.md", f"---\ntitle: 第一周\n---\n第 {self.n} 句。\n" if was else MYST.format(n=self.n))
        if choice == "code" and suffix == "ipynb":       # gains its first code cell, or loses its last
            self.log[-1] += " (loses its code)" if has_code else " (gains code)"
            return self.week_notebook(rel, code=not has_code)
        (self.root / rel).unlink()
        if choice == "rename":
            new = ("content/week2." if stem.endswith("week") else "content/week.") + suffix
            self.log[-1] += f" ({rel} -> {new})"
            if suffix == "ipynb":
                return self.week_notebook(new, code=has_code)
            return self.write(new, f"---\ntitle: 第一周\n---\n第 {self.n} 句。\n")
        new = f"{stem}.{'md' if suffix == 'ipynb' else 'ipynb'}"
        self.log[-1] += f" ({rel} -> {new})"
        if suffix == "ipynb":
            return self.write(new, f"---\ntitle: 第一周\n---\n第 {self.n} 句。\n")
        return self.week_notebook(new, code=self.rng.random() < 0.5)

    EDITS = ("page_transition", "page_transition", "edit_last_cell", "edit_notebook_prose", "edit_notebook_code", "save_notebook_outputs", "edit_notebook_data",
             "add_notebook_neighbour", "edit_page_body", "edit_page_title", "edit_parent", "add_page", "delete_page", "edit_template", "edit_css",
             "edit_site_yaml", "same_size_times_put_back", "revert", "touch", "hand_edit_output",
             "edit_data_file", "edit_relative_module", "edit_package_init", "edit_generator", "newer_package",
             "edit_during_build", "same_second", "edit_unseen_lines", "toggle_unseen_flag", "edit_unseen_catted",
             "edit_unseen_database", "edit_unseen_last_cell", "edit_unseen_last_cell", "edit_equations", "edit_equations", "switch_language",
             "edit_bibliography", "edit_bibliography")

    def step(self) -> None:
        self.n += 1
        self.expect_change = False
        name = self.rng.choice(self.EDITS)
        self.log.append(name)
        getattr(self, name)()
        said = self.build()
        if self.expect_change:
            assert "nothing changed" not in said, f"{self.log}: {said}"
        self.check()


# serve's builds: one process, its lab host and checkpoints kept from build to build (labs/resume.py).
SERVE_DRIVER = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from sitegen.commands.pipeline import build
from sitegen.core.errors import BuildError
from sitegen.labs.resume import KeptLabs
root, out, cache = map(Path, sys.argv[2:5])
kept = KeptLabs(cache)
for _ in sys.stdin:
    try:
        report = build(root, out, cache=cache, kept=kept)
        said = {"ok": True, "unchanged": report.unchanged, "resumed": report.resumed}
    except BuildError as exc:
        said = {"ok": False, "error": exc.report()}
    print(json.dumps(said), flush=True)
kept.close()
"""


class ServeSequence(Sequence):
    """The same edits, built as serve builds them: by one process whose lab host keeps a checkpoint of
    each lab after each cell, so that a lab runs again from the last one that holds. Not the edits a
    running serve cannot see (its own code, a package installed meanwhile): serve is restarted then."""

    EDITS = tuple(name for name in Sequence.EDITS if name not in ("edit_generator", "newer_package"))

    def __init__(self, folder: Path, seed: int):
        super().__init__(folder, seed)
        self.resumed: list = []
        self.driver = subprocess.Popen([sys.executable, "-c", SERVE_DRIVER, str(self.gen), str(self.root),
                                        str(self.out), str(self.cache)], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env())

    def build(self) -> str:
        self.driver.stdin.write("build\n")
        self.driver.stdin.flush()
        line = self.driver.stdout.readline()
        assert line, f"{self.log}: the serve driver ended\n{self.driver.stderr.read()[-3000:]}"
        said = json.loads(line)
        assert said["ok"], f"{self.log}\n{said['error']}"
        self.resumed += said["resumed"]
        return "nothing changed" if said["unchanged"] else ""

    def close(self) -> None:
        self.driver.stdin.close()
        self.driver.wait(timeout=60)


class ProseSequence(Sequence):
    """The same edits, most of them to pages' prose (on the lecture's map, and off it), and edits
    that a patch must not take (a heading's anchor, a formula's glyphs, a page's reading time): many
    of its builds patch a page into the last site (commands/patch.py), between full ones."""

    EDITS = tuple(name for name in Sequence.EDITS if "unseen" not in name) + ("edit_page_body",) * 10 \
        + ("edit_heading", "edit_formula", "edit_reading_time") * 2

    def __init__(self, folder: Path, seed: int):
        super().__init__(folder, seed)
        shutil.rmtree(self.root / "content/unseen")        # (a lab that starts a process runs on any edit)
        for n in range(3):
            (self.root / f"content/note{n}.md").write_text(
                f"---\ntitle: 笔记 {n}\n---\n## 第 {n} 节 {{#part{n}}}\n\n正文，见[导读](guide.md)与"
                f"[下一节](note{(n + 1) % 3}.md#part{(n + 1) % 3})。\n\n## 小结 0\n\n一句小结。\n", encoding="utf-8")
        edit(self.root / "site.yaml", "  - index.md\n", "  - index.md\n  - note0.md\n  - note1.md\n  - note2.md\n")
        self.patched = 0

    def edit_heading(self):
        rel = f"content/note{self.rng.randrange(3)}.md"
        text = self.text(rel)
        old = text.split("## 小结 ", 1)[1].split("\n", 1)[0]
        self.write(rel, text.replace(f"## 小结 {old}", f"## 小结 {self.n}"))      # its anchor with it

    def edit_formula(self):
        rel = f"content/note{self.rng.randrange(3)}.md"
        self.write(rel, self.text(rel) + f"\n公式 $\\sum_{{k}} w_{{{self.n}}}$。\n")

    def edit_reading_time(self):
        rel = f"content/note{self.rng.randrange(3)}.md"
        self.write(rel, self.text(rel) + "\n" + "长" * 800 + "。\n")        # two minutes more on the map

    def build(self) -> str:
        said = super().build()
        import pickle
        state = pickle.loads((self.cache / "last-build.pickle").read_bytes())
        self.patched += "[nothing changed]" not in said and pickle.loads(state["patch"])["patches"] > 0
        return said


def run(folder: Path, seed: int, steps: int, kind=Sequence) -> list[str]:
    sequence = kind(folder, seed)
    try:
        sequence.build()
        sequence.check()
        if kind is ServeSequence:           # one edit that resumes, whatever the random ones are
            sequence.log.append("edit_last_cell")
            sequence.edit_last_cell()
            sequence.build()
            sequence.check()
            assert ["tiny", 1] in sequence.resumed, sequence.resumed
        if kind is ProseSequence:           # one edit that is patched in, whatever the random ones are
            sequence.log.append("edit_page_body")
            sequence.write("content/note1.md", sequence.text("content/note1.md") + "\n补一句。\n")
            sequence.build()
            sequence.check()
            assert sequence.patched == 1, sequence.log
        for _ in range(steps):
            sequence.step()
    finally:
        if kind is ServeSequence:
            sequence.close()
    if kind is ProseSequence:
        print(f"{sequence.patched} of {len(sequence.log) + 1} builds patched a page in")
    return sequence.log


def test_a_short_random_sequence_of_edits_keeps_the_incremental_build_equal_to_a_clean_one(tmp_path):
    log = run(tmp_path, seed=20260918, steps=3)
    assert len(log) >= 3


def test_every_transition_of_a_notebook_page_keeps_the_incremental_build_equal_to_a_clean_one(tmp_path):
    """A prose-only notebook gains its first code cell (once an internal error, KeyError, in every build
    after it), loses it, becomes a Markdown page and a notebook again, is renamed, becomes a MyST Markdown
    notebook by its front matter alone and a page again: each step equal to a clean build."""
    sequence = Sequence(tmp_path, seed=35)
    sequence.build()
    steps = [("week.ipynb", "prose"), ("week.ipynb", "code"), ("week.ipynb", "prose"), ("week.md", "md"),
             ("week.ipynb", "code"), ("week2.ipynb", "code"), ("week2.md", "md"), ("week.md", "md"),
             ("week.md", "myst"), ("week.md", "myst"), ("week.md", "md"), ("week.md", "myst"),
             ("week.ipynb", "prose")]
    for name, kind in steps:
        sequence.n += 1
        if (rel := sequence.week()) is not None:
            (sequence.root / rel).unlink()
        sequence.log.append(f"{rel} -> content/{name} ({kind})")
        if kind == "md":
            sequence.write(f"content/{name}", f"---\ntitle: 第一周\n---\n第 {sequence.n} 句。\n")
        elif kind == "myst":        # the same file's front matter names a kernel: a notebook page (textnb.py)
            sequence.write(f"content/{name}", MYST.format(n=sequence.n))
        else:
            sequence.week_notebook(f"content/{name}", code=kind == "code")
        sequence.build()
        sequence.check()
    assert len(sequence.log) == len(steps)


# What one page shows of another or of a shared file, edited in turn: each edit is checked (with the
# steps it must have taken) as a clean build. A prose edit of one page may be patched in (ProseSequence).
SHOWN_ELSEWHERE = {
    # formulas renumbered, labels renamed: references on their page and another follow (labels.py)
    "edit_equations": (38, lambda log: any("rename" in step or "move" in step for step in log)
                       and sum("refs.md" in step for step in log) >= 2),
    # an entry edited, added or removed, the style switched: the pages that cite it follow (citations.py)
    "edit_bibliography": (40, lambda log: len(set(log)) >= 4),
}


@pytest.mark.parametrize("kind", [Sequence, ProseSequence])
@pytest.mark.parametrize("step", sorted(SHOWN_ELSEWHERE))
def test_what_pages_show_of_each_other_edited_keeps_the_build_equal_to_a_clean_one(tmp_path, kind, step):
    seed, took = SHOWN_ELSEWHERE[step]
    sequence = kind(tmp_path, seed=seed)
    sequence.build()
    for _ in range(8):
        sequence.n += 1
        sequence.log.append(step)
        getattr(sequence, step)()
        sequence.build()
        sequence.check()
    assert len(sequence.log) == 8 and took(sequence.log), sequence.log


def test_switching_the_interface_s_language_and_back_keeps_the_build_equal_to_a_clean_one(tmp_path):
    sequence = ProseSequence(tmp_path, seed=39)
    sequence.build()
    for step in ("switch_language", "edit_page_body", "switch_language", "edit_page_body"):
        sequence.n += 1
        sequence.log.append(step)
        getattr(sequence, step)()
        sequence.build()
        sequence.check()
    assert "language: zh-CN" in sequence.text("site.yaml")


def test_a_short_random_sequence_of_prose_edits_patched_in_keeps_the_build_equal_to_a_clean_one(tmp_path):
    log = run(tmp_path, seed=20261201, steps=3, kind=ProseSequence)
    assert len(log) >= 4


FIRST_SEED = int(os.environ.get("DIFFERENTIAL_FIRST_SEED", "0"))     # (a long run's own seeds: seeds not run before)
SEEDS = range(FIRST_SEED, FIRST_SEED + int(os.environ.get("DIFFERENTIAL_SEEDS", "2")))
STEPS = int(os.environ.get("DIFFERENTIAL_STEPS", "12"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_long_random_sequences_of_edits_keep_the_incremental_build_equal_to_a_clean_one(tmp_path, seed):
    coarse = coarse_mount(tmp_path) if seed % 2 == 0 else None     # every other one on whole seconds
    try:
        log = run((coarse or tmp_path) / "seq", seed=seed, steps=STEPS)
        print(f"seed {seed}: {len(log)} edits on {'whole-second' if coarse else 'fine'} times: {log}")
    finally:
        if coarse:
            subprocess.run(["umount", "-l", str(coarse)], capture_output=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_random_sequences_of_edits_keep_serves_resumed_builds_equal_to_a_clean_one(tmp_path, seed):
    log = run(tmp_path / "seq", seed=100 + seed, steps=STEPS, kind=ServeSequence)
    print(f"seed {100 + seed} under serve: {log}")


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_random_sequences_of_prose_edits_patched_in_keep_the_build_equal_to_a_clean_one(tmp_path, seed):
    coarse = coarse_mount(tmp_path) if seed % 2 == 1 else None     # every other one on whole seconds
    try:
        log = run((coarse or tmp_path) / "seq", seed=200 + seed, steps=STEPS, kind=ProseSequence)
        print(f"seed {200 + seed}, prose edits: {log}")
    finally:
        if coarse:
            subprocess.run(["umount", "-l", str(coarse)], capture_output=True)
