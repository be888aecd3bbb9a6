"""What a student build (`--no-solutions`) withholds of a lab besides its page's text: every byte that
holds a solution.

A solution is what follows `::: solution` up to its exercise's `::: end` (blocks.hidden_blocks). In a
notebook page that may span cells: the Markdown between the markers, and every code cell between
them, with its outputs, its figures and the names only it binds (a notebook's results.json holds
its names). The page leaves them out already; the notebook download, the lab's figures and its
results.json must too, or a student reads the answer in a file beside the page.
"""
from __future__ import annotations

import ast
import json

from ..labs.artifacts import Artifacts
from ..pages.blocks import hidden_blocks
from ..pages.dialects import BOXES, STATEMENTS
from ..pages.content import DIRECTIVE
from ..pages.page import Page


def withheld_cells(page: Page, solutions: str) -> frozenset[str]:
    """The names of the lab cells `page` shows inside solutions, when a build leaves solutions out."""
    if solutions != "omitted":
        return frozenset()
    hidden = hidden_blocks(page, solutions)
    return frozenset(block.args[0] for index, block in enumerate(page.blocks)
                     if index in hidden and block.kind == "cell" and block.args)


def withheld_figures(art: Artifacts, cells: frozenset[str]) -> frozenset[str]:
    """The figures those cells drew (and their narrow variants), unless a cell shown drew one too."""
    drawn = lambda shown: {f for name, out in art.outputs.items() if (name in cells) != shown for f in out.figures}
    return frozenset(drawn(False) - drawn(True))


def bound_names(source: str) -> set[str]:
    """The top-level names a cell's code binds (assignments, imports, definitions, loop targets);
    none for code that does not parse (a magic the harness rewrites binds nothing quotable)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def results_without(art: Artifacts, cells: frozenset[str]) -> bytes | None:
    """A notebook lab's results.json without the names that only the withheld `cells` bind (its
    names are its results), as the lab's store wrote it; None when it loses none."""
    if not cells:
        return None
    only = set().union(*(bound_names(c.source) for c in art.cells if c.name in cells))
    only -= set().union(*(bound_names(c.source) for c in art.cells if c.name not in cells))
    results = json.loads(art.files["results.json"].read_bytes())
    if not only & results.keys():
        return None
    provenance = results.get("provenance", {})
    if "artifacts" in provenance:
        gone = withheld_figures(art, cells)
        provenance = {**provenance, "artifacts": {k: v for k, v in provenance["artifacts"].items() if k not in gone}}
    kept = {k: v for k, v in results.items() if k not in only}
    return json.dumps({**kept, **({"provenance": provenance} if provenance else {})}, indent=2).encode()


def without_solutions(source: str, inside: int) -> tuple[str, int]:
    """A notebook Markdown cell's text without what stands inside solutions, and where the cell ends:
    `inside` is 0 outside a solution, else 1 + the callouts opened within it (their `::: end` closes
    them, not the exercise); as the cell starts, and what is returned, as it ends."""
    kept = []
    for line in source.split("\n"):
        marker = DIRECTIVE.match(line.strip())
        kind = marker["kind"] if marker else None
        if inside and kind == "end" and inside > 1:
            inside -= 1
            continue
        if kind in ("end", "exercise"):
            inside = 0
        if kind == "solution":
            inside = 1
        elif inside:
            inside += kind in BOXES or kind in STATEMENTS     # (their ::: end closes them, not the exercise)
        else:
            kept.append(line)
    return "\n".join(kept), inside


def solution_lines(page: Page) -> list[tuple[int, str]]:
    """(line, text) of each line of the page's solutions' prose that is long enough to say something
    of its own (a fence or a short word is no answer): what a student build must show nowhere."""
    hidden = hidden_blocks(page, "omitted")
    return [(block.line + number, line.strip()) for index, block in enumerate(page.blocks)
            if index in hidden and block.kind == "prose"
            for number, line in enumerate(block.text.split("\n")) if len(line.strip()) >= SAYS]


SAYS = 10       # characters a line of a solution needs to be looked for in what a lab showed


def student_source(page: Page, data: bytes) -> bytes | None:
    """A Markdown page of prose: its file as a student build publishes it (a lab read it, and its download holds what
    its run read): without the lines from each `::: solution` to its exercise's end. None for a page
    whose blocks' lines are not its file's lines: published not at all."""
    if not page.source.endswith(".md"):
        return None
    hidden, lines = hidden_blocks(page, "omitted"), data.decode("utf-8").split("\n")
    gone: set[int] = set()
    for index, block in enumerate(page.blocks):
        if block.kind == "solution":
            shown = next((b.line for i, b in enumerate(page.blocks) if i > index and i not in hidden), len(lines) + 1)
            gone.update(range(block.line, shown))
    return "\n".join(line for number, line in enumerate(lines, 1) if number not in gone).encode("utf-8")


def shown_solution(art: Artifacts, page: Page, published: dict[str, bytes]) -> tuple[str, int, str] | None:
    """Where a lab that read `page` shows a line of its solutions, which a student build withholds:
    (the cell or file that shows it, the line of the page it is, its text); None where it shows none.
    `published`: the lab's files as published (name -> bytes)."""
    import html
    lines = solution_lines(page)
    if not lines:
        return None
    shown = [(name, "\n".join(filter(None, (out.stdout, out.value, out.error, json.dumps(out.outputs, ensure_ascii=False)))))
             for name, out in art.outputs.items()]
    shown += [(name, data.decode("utf-8", "replace")) for name, data in published.items()]
    for name, text in shown:
        for number, line in lines:
            if line in text or html.escape(line) in text or json.dumps(line, ensure_ascii=False)[1:-1] in text:
                return name, number, line
    return None
