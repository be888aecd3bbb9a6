"""Real Jupyter Book chapters, none written here, each built as a page of a course of its own: how
much of their callout markup the page shows as callouts, and whether any of their markup reaches
the page raw.

    python tests/corpus/chapters.py lay       # copy them out of the fetched snapshots (corpus.py's MIRROR)
    python tests/corpus/chapters.py report    # build each, print the table
    python tests/corpus/chapters.py lay --held-out; ... report --held-out    # the half never tuned on

The chapters are not committed: this file says which they are (`fetch github:OWNER/NAME` for each
repository). Each lies in content/ where it lies in its book (beside a home page that links to it),
with the files its images name, where the book keeps them. A page of Jupyter Book's documentation
(not a notebook) has its front matter (MyST's settings) replaced by a title,
its first heading's (MyST's substitutions are kept): what this measures is the body's markup, read as
received. A MyST Markdown notebook (QuantEcon's, UBC's lectures) is laid as received, front matter
and all, with the modules beside it and its data folder: a notebook page whose code the build runs,
as Jupyter Book would. What its book's
_config.yml says of it is said as a teacher taking the chapter would say it here: its BibTeX files
are site.yaml's bibliography, and `execute: allow_errors: true` is the notebook's `allow_errors: true`.

Per chapter: whether it built; its callouts (counted in the source by their opening lines: MyST's
admonitions in any fence, Quarto's .callout- divs, GitHub's alerts) and the boxes the page shows;
its labelled formulas, references, exercises, citations and glossary terms, and what the page shows of
them; its code cells whose tags (Jupyter Book's) or #| options (Quarto's) ask that their code be left
out, folded or shown, and how many the page shows as asked (their code found in its <pre>s, or not);
the warnings the build gave; and raw markup in the page's text outside code (a directive's fence,
a role's {name}, a (label)= target, an alert's [!KIND], a footnote's [^name]) or in its links (a MyST
reference taken for an address: `href="content:glue"`, which no browser opens), which must be none. A chapter that uses
{term} is laid with its book's glossary page, where its terms are defined.
"""
from __future__ import annotations

import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

from corpus import LAID, MIRROR

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))       # (the generator's reader of code spans: what is markup is read as it reads it)
from sitegen.pages.bookparts import outside_spans  # noqa: E402

CHAPTERS = [
    ("executablebooks/jupyter-book", "docs/reference/cheatsheet.md"),
    ("executablebooks/jupyter-book", "docs/content/content-blocks.md"),
    ("executablebooks/jupyter-book", "docs/content/myst.md"),
    ("executablebooks/jupyter-book", "docs/content/layout.md"),
    ("executablebooks/jupyter-book", "docs/content/components.md"),
    ("QuantEcon/lecture-python-intro", "lectures/inflation_history.md"),
    ("QuantEcon/lecture-python-intro", "lectures/intro_supply_demand.md"),
    ("QuantEcon/lecture-python-intro", "lectures/fitting_distributions.md"),
    ("QuantEcon/lecture-python-intro", "lectures/linear_equations.md"),
    # Jupyter Book's documentation in Chinese (a translation: MyST Markdown notebooks, zh-CN)
    ("daobook/jupyter-book-zh", "content/math.md"),
    ("daobook/jupyter-book-zh", "content/content-blocks.md"),
    ("daobook/jupyter-book-zh", "content/references.md"),
    ("daobook/jupyter-book-zh", "file-types/myst-notebooks.md"),
    # UBC's data science textbook, Python edition (MyST Markdown notebooks with pandas and Altair)
    ("UBC-DSCI/introduction-to-datascience-python", "source/intro.md"),
    ("UBC-DSCI/introduction-to-datascience-python", "source/regression1.md"),
    # Quarto courses: Bristol's beginning Python (callouts as exercises and folded answers, #| options)
    # and Boston University's DS701 lecture notes (figures by #| label and fig-cap, @fig references,
    # reveal.js's fragments and profiles)
    ("Bristol-Training/intro-python-1", "pages/033-lists.qmd"),
    ("Bristol-Training/intro-python-1", "pages/051-conditionals.qmd"),
    ("Bristol-Training/intro-python-1", "pages/054-functions.qmd"),
    ("tools4ds/DS701-Course-Notes", "04-Linear-Algebra-Refresher.qmd"),
    ("tools4ds/DS701-Course-Notes", "06-Clustering-I-kmeans.qmd"),
    # Held out in issue 61's first rounds, measured as received, then tuned on: Data 100's notes in Jupyter
    # Book 2's MyST, two Chinese MyST books, a course's notebooks, Geocomputation with Python in Quarto, a
    # handbook's notebooks
    ("DS-100/course-notes", "content/clustering/clustering.md"),
    ("DS-100/course-notes", "content/case_study_HCE/case_study_HCE.md"),
    ("daobook/dash-book", "advanced/03_urls.md"),
    ("daobook/dash-book", "advanced/00_performance.md"),
    ("daobook/plotly-book", "basics/topic.md"),
    ("nathancarter/MA346-course-notes", "chapter-2-mathematical-foundations.ipynb"),
    ("nathancarter/MA346-course-notes", "chapter-7-abstraction.ipynb"),
    ("geocompx/geocompy", "01-spatial-data.qmd"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/02.02-The-Basics-Of-NumPy-Arrays.ipynb"),
    ("jakevdp/PythonDataScienceHandbook", "notebooks/04.01-Simple-Line-Plots.ipynb"),
]
# Held out: chapters of repositories no one here has read, laid and reported only with --held-out and
# measured only at the end of a round, as received, never tuned on; chosen by name before a page of them was
# read (issue 61's last round: QuantEcon's intermediate lectures in Chinese, MyST Markdown notebooks; the
# book "Python Packages", Jupyter Book notebooks; UBC MDS's course of Markdown chapters; MyST's and Quarto's guides).
HELD_OUT = [
    ("QuantEcon/lecture-python.zh-cn", "lectures/finite_markov.md"),
    ("QuantEcon/lecture-python.zh-cn", "lectures/career.md"),
    ("py-pkgs/py-pkgs", "py-pkgs/03-how-to-package-a-python.ipynb"),
    ("py-pkgs/py-pkgs", "py-pkgs/05-testing.ipynb"),
    ("UBC-MDS/programming-in-python-for-data-science", "chapters/en/module1.md"),
    ("UBC-MDS/programming-in-python-for-data-science", "chapters/en/module3.md"),
    # MyST's own guide (mystmd) and Quarto's (quarto-web): what their authors learn the syntax from
    ("jupyter-book/mystmd", "docs/admonitions.md"),
    ("jupyter-book/mystmd", "docs/math.md"),
    ("quarto-dev/quarto-web", "docs/authoring/callouts.qmd"),
    ("quarto-dev/quarto-web", "docs/authoring/cross-references.qmd"),
]
KINDS = "note|tip|warning|important|caution|admonition|dropdown|hint|seealso|attention|danger|error"
# Where a block may open: at the margin, or in a list item (a list-table's cell: `* - `, `  - `, its lines indented).
LEAD = r"^(?:\s*[*+-]\s+)*\s*"
CALLOUT = re.compile(rf"{LEAD}(?:(?:`{{3,}}|~{{3,}}|:{{3,}}) ?\{{(?:{KINDS})\}}|:{{3,}} *\{{[^}}]*\.callout-(?:note|tip|warning|important|caution)|:{{3,}} *callout-(?:note|tip|warning|important|caution) *$|> ?\[!(?:NOTE|TIP|WARNING|IMPORTANT|CAUTION)\])")
RAW = re.compile(r"(?:`{3}|:{3})\{[a-z-]+\}|\{[a-z][\w:-]*\}`|^\([^()\s]+\)=$|\[!(?:NOTE|TIP|WARNING|IMPORTANT|CAUTION)\]"
                 r"|\[\^[^\]\s]+\]"       # (a footnote's marker)
                 r"|\{(?:[#.][\w:-]+\s*)+\}|\{[\w-]+=[^}\s]+\}"    # (Pandoc's attributes: {#id .class}, {width=50%})
                 r"|^:{3,}", re.M)               # (a div's fence)
SITE = "site:\n  title: Chapters\n  base_url: https://example.invalid\n  language: en\n"


def chapter_dir(repo: str, path: str) -> Path:
    return LAID / "chapters" / f"{repo.replace('/', '+')}+{Path(path).stem}"


REFERENCED = re.compile(r"!\[[^\]]*\]\(<?([^)\s>]+)|^\s*(?:`{3,}|:{3,})\{(?:image|figure)\}\s+(\S+)|\bsrc=\"([^\"]+)\"", re.M)


def lay(chapters=CHAPTERS) -> None:
    for repo, path in chapters:
        git = MIRROR / repo.replace("/", "+") / "repo"
        text = _show(git, path).decode("utf-8")
        if path.endswith(".ipynb"):     # a notebook: as received; what the report counts in, its Markdown cells
            import json
            root, config = chapter_dir(repo, path), book_config(git, path)[1]
            at = Path(path).relative_to(config)
            shutil.rmtree(root, ignore_errors=True)
            (root / "content" / at.parent).mkdir(parents=True)
            (root / "site.yaml").write_text(SITE, encoding="utf-8")
            (root / "content" / at).write_text(text, encoding="utf-8")
            cells = json.loads(text).get("cells", [])
            body = "\n\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                                for c in cells if c.get("cell_type") == "markdown")
            (root / "source.md").write_text(body, encoding="utf-8")
            (root / "page.txt").write_text(at.with_suffix(".html").as_posix(), encoding="utf-8")
            (root / "content/index.md").write_text(f"---\ntitle: Chapters\n---\nThe [chapter]({at.as_posix()}).\n",
                                                   encoding="utf-8")
            (root / "content/404.md").write_text("---\ntitle: Not found\n---\nBack to [the start](/).\n", encoding="utf-8")
            lay_bibliography(git, path, root)
            continue
        config, book = book_config(git, path)
        at = Path(path).relative_to(book)           # where it lies in its book, and so in content/
        root = chapter_dir(repo, path)
        shutil.rmtree(root, ignore_errors=True)
        (root / "content" / at.parent).mkdir(parents=True)
        (root / "site.yaml").write_text(SITE, encoding="utf-8")
        if re.match(r"\A---\n(?:.*\n)*?kernelspec:", text) or path.endswith(".qmd"):     # a notebook: as received
            if (config.get("execute") or {}).get("allow_errors"):        # (as its book runs it)
                text = "---\nallow_errors: true\n" + text[len("---\n"):]
            body = page = text
            folder = str(Path(path).parent)
            listed = subprocess.run(["git", f"--git-dir={git}", "ls-tree", "-r", "--name-only", "HEAD", folder + "/"],
                                    capture_output=True, text=True, check=True).stdout.split()
            for rel in listed:      # its neighbours as Jupyter finds them: modules beside it, its data folder,
                inside = rel[len(folder) + 1:]      # and any file its text names by its path (a font, a table)
                if inside.endswith(".py") and "/" not in inside or inside.startswith("data/") or f'"{inside}"' in text:
                    if (data := _show(git, rel, check=False)) is None:     # (listed without its bytes)
                        print(f"{repo}:{path}: needs {inside}, which the snapshot does not hold")
                        continue
                    (root / "content" / at.parent / inside).parent.mkdir(parents=True, exist_ok=True)
                    (root / "content" / at.parent / inside).write_bytes(data)
        else:                   # a page of Jupyter Book's docs: its title (its first heading's) is added to its
            import yaml         # front matter, of which MyST's substitutions are kept (its other settings are Sphinx's)
            matter = re.match(r"\A---\n(.*?\n)---\n", text, flags=re.S)
            body = text[matter.end():] if matter else text
            kept = {key: value for key, value in (yaml.safe_load(matter[1]) if matter else {}).items()
                    if key in ("myst", "substitutions")}
            title = next((m[1] for m in re.finditer(r"^# +(.+)$", body, re.M)), Path(path).stem)
            page = "---\n" + yaml.safe_dump({"title": title, **kept}, allow_unicode=True, sort_keys=False) + "---\n" + body
        (root / "content" / at).write_text(page, encoding="utf-8")
        for found in REFERENCED.finditer(body):     # the images it shows, where the book keeps them
            target = next(group for group in found.groups() if group)
            rel = posixpath.normpath((at.parent / target).as_posix())
            if "://" in target or target.startswith(("data:", "/")) or rel.startswith(".."):
                continue
            if (data := _show(git, (book / rel).as_posix(), check=False)) is not None:
                (root / "content" / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / "content" / rel).write_bytes(data)
            else:           # (a snapshot may list a large file without holding it: the build then says it is missing)
                print(f"{repo}:{path}: names {target}, which the snapshot does not hold (not in the repository, "
                      "or listed without its bytes)")
        if TERM.search(body):       # its glossary terms are defined on its book's glossary page: laid too
            for rel in book_files(git, book, "glossary.md"):
                (root / "content" / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / "content" / rel).write_bytes(_show(git, (book / rel).as_posix()))
        lay_bibliography(git, path, root)
        (root / "content/index.md").write_text(f"---\ntitle: Chapters\n---\nThe [chapter]({at.as_posix()}).\n",
                                               encoding="utf-8")
        (root / "source.md").write_text(body, encoding="utf-8")          # (what the report counts in)
        (root / "page.txt").write_text(at.with_suffix(".html").as_posix(), encoding="utf-8")    # (and reads)
        (root / "content/404.md").write_text("---\ntitle: Not found\n---\nBack to [the start](/).\n", encoding="utf-8")
    print(f"laid {len(chapters)} chapters in {LAID / 'chapters'}")


def _show(git: Path, path: str, check: bool = True) -> bytes | None:
    """A file of the snapshot's newest commit (None if it has none there and not `check`)."""
    found = subprocess.run(["git", f"--git-dir={git}", "show", f"HEAD:{path}"], capture_output=True, check=check)
    return found.stdout if found.returncode == 0 else None


def book_files(git: Path, book: Path, name: str) -> list[str]:
    """The book's files of this name, by their path in the book."""
    listed = subprocess.run(["git", f"--git-dir={git}", "ls-tree", "-r", "--name-only", "HEAD", f"{book.as_posix()}/"
                             if book != Path(".") else "."], capture_output=True, text=True, check=True).stdout.split()
    return [posixpath.relpath(rel, book.as_posix()) for rel in listed if posixpath.basename(rel) == name]


def book_config(git: Path, path: str) -> tuple[dict, Path]:
    """The nearest _config.yml (Jupyter Book's) or _quarto.yml above the chapter (its book's settings) and
    its folder; ({}, .) if none."""
    import yaml
    folder = Path(path).parent
    for parent in [folder, *folder.parents]:
        for name in ("_config.yml", "_quarto.yml"):
            config = subprocess.run(["git", f"--git-dir={git}", "show", f"HEAD:{(parent / name).as_posix()}"],
                                    capture_output=True, text=True)
            if config.returncode == 0:
                return yaml.safe_load(config.stdout) or {}, parent
    return {}, Path(".")


def lay_bibliography(git: Path, path: str, root: Path) -> None:
    """The BibTeX files the chapter's book names, beside its pages and named in site.yaml, as a teacher taking
    the chapter names them (what its citations cite; a notebook's as a Markdown page's)."""
    bibliography = book_bibliography(git, path)
    for name, data in bibliography.items():
        (root / "content" / name).write_bytes(data)
    if bibliography:
        (root / "site.yaml").write_text(SITE + "  bibliography: [" + ", ".join(bibliography) + "]\n", encoding="utf-8")


def book_bibliography(git: Path, path: str) -> dict[str, bytes]:
    """The BibTeX files the chapter's book names (bibtex_bibfiles in its _config.yml, bibliography in its
    _quarto.yml)."""
    config, parent = book_config(git, path)
    names = config.get("bibtex_bibfiles") or config.get("bibliography") or []
    return {Path(name).name: _show(git, (parent / name).as_posix()) for name in ([names] if isinstance(names, str) else names)}


class Text(HTMLParser):
    """The page's text outside <pre> and <code>, and its callouts' count."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.depth, self.parts, self.callouts, self.equations, self.exercises = 0, [], 0, 0, 0
        self.citations, self.terms, self.dead = 0, 0, []
        self.pres: list[list] = []          # each <pre>'s text, and whether it stands in a <details>
        self.details = 0
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.depth += tag in ("pre", "code", "script")
        self.details += tag == "details"
        if tag == "pre":
            self.pres.append(["", self.details > 0])
        classes = (dict(attrs).get("class") or "").split()
        self.callouts += tag == "aside" and "callout" in classes and not {"callout-statement", "callout-margin", "callout-tab"} & set(classes)
        self.equations += tag == "div" and "equation" in classes
        self.exercises += tag == "section" and "exercise" in classes
        self.citations += tag == "a" and "citation" in classes
        self.terms += tag == "a" and "#term-" in (dict(attrs).get("href") or "")
        scheme = re.match(r"([A-Za-z][\w+.-]*):(//)?", dict(attrs).get("href") or "")
        if tag == "a" and scheme and not scheme[2] and scheme[1].lower() not in ("mailto", "tel"):
            self.dead.append(scheme[0])     # (a link no browser opens: a MyST reference taken for an address)

    def handle_endtag(self, tag):
        self.depth -= tag in ("pre", "code", "script")
        self.details -= tag == "details"

    def handle_data(self, data):
        if not self.depth:
            self.parts.append(data)
        elif self.pres:
            self.pres[-1][0] += data

    def code(self, lines: list[str]) -> list[bool]:
        """Where a cell's code shows on the page: for each <pre> that holds it, whether it is folded."""
        return [folded for text, folded in self.pres
                if "\n".join(lines) in "\n".join(line.strip() for line in text.split("\n") if line.strip())]

    def as_asked(self, cells: list[tuple[str | None, list[str]]]) -> int:
        """How many of the cells whose tags or options ask how their code shows (the others' way is None)
        show as asked: left out (no more <pre>s hold its code than cells of the same code shown), folded
        (each that holds it folded), or shown."""
        def shown(code):
            return sum(1 for way, other in cells if other == code and way != "hidden")
        return sum(len(self.code(code)) <= shown(code) if way == "hidden" else
                   bool(self.code(code)) and (all(self.code(code)) or way != "folded")
                   for way, code in cells if way)


# What the source holds of each kind, counted by its opening lines outside code fences (a fence's own
# example of markup, ````md ... ````, is not counted): labelled formulas, references to labels, exercises.
REFERENCE = re.compile(r"\{(?:eq|ref|numref)\}`[^`]*`|(?<![\w@.])@(?:eq|sec|fig|tbl)-")
EXERCISE = re.compile(LEAD + r"(?:`{3,}|:{3,})\{(?:exercise|exercise-start)\}")
CITATION = re.compile(r"\{cite(?::\w+)?\}`[^`]*`|(?<![\\!])\[-?@[A-Za-z0-9_]")
TERM = re.compile(r"\{term\}`[^`]*`")


def outside_code(pattern: re.Pattern, line: str) -> int:
    """How many times `pattern` (a role whole, its text too) stands in `line` outside its code spans (an
    example of markup, shown as written), read as the generator reads them."""
    found = []
    outside_spans(pattern, lambda match: found.append(match) or match[0], line)
    return len(found)


CODE_DIRECTIVES = ("{code-cell}", "{code-block}", "{code}", "{literalinclude}", "{raw}", "{math}")
# What a cell's tags (Jupyter Book's) or #| options (Quarto's) ask of its code: left out, folded, or shown.
ASKED = {"remove-input": "hidden", "remove-cell": "hidden", "hide-input": "folded", "hide-cell": "folded",
         "remove-output": "shown", "hide-output": "shown", "echo: false": "hidden", "include: false": "hidden",
         "code-fold: true": "folded", "output: false": "shown", "eval: false": "shown"}
CELL = re.compile(r"^(`{3,})\s*\{(?:code-cell|python)\}[^\n]*\n(?P<body>.*?)^\1\s*$", re.M | re.S)


def asked_cells(source: str) -> list[tuple[str | None, list[str]]]:
    """Each code cell: what its tags or options ask of how its code shows (None if nothing), and its
    code's lines (stripped, without its options)."""
    found = []
    for cell in CELL.finditer(source):
        lines, said = cell["body"].split("\n"), []
        if lines and lines[0].strip() == "---":         # MyST's options as a YAML block
            end = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), 0)
            said, lines = lines[1:end], lines[end + 1:]
        while lines and lines[0].startswith((":", "#|")):
            said, lines = said + [lines[0]], lines[1:]
        wanted = {ASKED[key] for key in ASKED if _asks(" ".join(said), key)}
        code = [line.strip() for line in lines if line.strip()]
        if code:
            found.append((next((way for way in ("hidden", "folded", "shown") if way in wanted), None), code))
    return found


def _asks(said: str, key: str) -> bool:
    """Whether a cell's options say `key`: a tag's name, or a #| option's `name: value`."""
    name, _, value = key.partition(": ")
    return bool(re.search(rf"#\|\s*{name}\s*:\s*{value}\b" if value else rf"(?<![\w-]){name}(?![\w-])", said, re.I))


def counted(source: str) -> dict[str, int]:
    """Each kind's count in a chapter's source, outside code (a fence in another fence's example too)."""
    found = {"callouts": 0, "formulas": 0, "references": 0, "exercises": 0, "citations": 0, "terms": 0}
    fences: list[tuple[str, bool]] = []         # open fences: (the fence, whether what it holds is code)
    lines = source.splitlines()
    for k, line in enumerate(lines):
        opener = re.match(LEAD + r"(`{3,}|~{3,}|:{3,})(.*)$", line)
        if opener and fences and opener[1][0] == fences[-1][0][0] and len(opener[1]) >= len(fences[-1][0]) \
                and not opener[2].strip():
            fences.pop()
            continue
        code = any(is_code for _, is_code in fences)
        if opener and not code and (opener[1][0] != ":" or opener[2].strip()):
            info = opener[2].strip()
            if not code:
                found["callouts"] += bool(CALLOUT.match(line))
                found["exercises"] += bool(EXERCISE.match(line))
                found["formulas"] += info.startswith("{math}") and any(
                    re.match(r"^\s*:label:", after) for after in lines[k + 1: k + 4])
            fences.append((opener[1], not info.startswith("{") or info.startswith(CODE_DIRECTIVES)))
            continue
        if not code:
            found["callouts"] += bool(CALLOUT.match(line))
            found["formulas"] += bool(re.search(r"\$\$\s*\([^()\s]+\)\s*$|\$\$\s*\{#eq-", line))
            found["references"] += outside_code(REFERENCE, line)
            found["citations"] += outside_code(CITATION, line)
            found["terms"] += outside_code(TERM, line)
    return found


def report(chapters=CHAPTERS) -> int:
    print("| chapter | built | callouts: source / shown | labelled formulas: source / numbered | references | "
          "exercises: source / shown | citations: source / shown | terms: source / shown | cells' tags and options: "
          "source / as asked | warnings | raw markup on the page |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for repo, path in chapters:
        root = chapter_dir(repo, path)
        source = counted((root / "source.md").read_text(encoding="utf-8"))
        cells = asked_cells((root / "source.md").read_text(encoding="utf-8"))
        asked = [cell for cell in cells if cell[0]]
        shown = "dist/" + (root / "page.txt").read_text(encoding="utf-8")
        with tempfile.TemporaryDirectory() as tmp:
            result = subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", f"{tmp}/dist",
                                     "--cache", f"{tmp}/cache"], capture_output=True, text=True)
            warnings = result.stderr.count("warning: ")
            if result.returncode != 0:
                first = next((line for line in result.stderr.splitlines() if line.startswith(("error", "  1."))),
                             result.stderr[-200:])
                print(f"| {repo}:{path} | no: {first.strip()[:150]} | {source['callouts']} / – | {source['formulas']} / – "
                      f"| {source['references']} | {source['exercises']} / – | {source['citations']} / – "
                      f"| {source['terms']} / – | {len(asked)} / – | {warnings} | – |")
                bad += 1
                continue
            page = Text((Path(tmp) / shown).read_text(encoding="utf-8"))
        raw = RAW.findall("".join(page.parts)) + page.dead
        done = page.as_asked(cells)
        bad += bool(raw) or page.callouts < source["callouts"] or page.equations < source["formulas"] \
            or page.citations < source["citations"] or page.terms < source["terms"] or done < len(asked)
        # (a reference to a label the page lacks fails the build: one that built shows each as a link)
        print(f"| {repo}:{path} | yes | {source['callouts']} / {page.callouts} | {source['formulas']} / {page.equations} "
              f"| {source['references']} / {source['references']} | {source['exercises']} / {page.exercises} "
              f"| {source['citations']} / {page.citations} | {source['terms']} / {page.terms} | {len(asked)} / {done} "
              f"| {warnings} "
              f"| {len(raw)}{': ' + ', '.join(sorted(set(raw))[:4]) if raw else ''} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    chosen = HELD_OUT if "--held-out" in sys.argv else CHAPTERS
    if sys.argv[1:2] == ["lay"]:
        lay(chosen)
        sys.exit(0)
    if sys.argv[1:2] == ["report"]:
        sys.exit(report(chosen))
    sys.exit(__doc__)
