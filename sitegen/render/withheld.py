"""What a student build (`--no-solutions`) withholds of a lab besides its page's text: every byte that
holds a solution.

A solution is what follows `::: solution` up to its exercise's `::: end` (blocks.hidden_blocks). In a
notebook page that may span cells: the Markdown between the markers, and every code cell between
them, with its outputs, its figures and the files it wrote, and the notebook's results.json (which
holds its names, any of which such a cell may have changed). The page leaves them out already; the
notebook download and the lab's files must too, or a student reads the answer in a file beside the
page. And a lab that read a page holding solutions may show them in anything it made: a student
build refuses it (render.py).
"""
from __future__ import annotations

import re

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


def withheld_files(art: Artifacts, cells: frozenset[str], notebook: bool) -> frozenset[str]:
    """The files of a lab that a student build leaves out, `cells` being its cells inside solutions: the
    figures they drew (withheld_figures), every other file one of them wrote or changed, and a
    notebook's results.json (its top-level names, any of which a solution's cell may have set, changed
    through another name, or glued)."""
    if not cells:
        return frozenset()
    wrote = {f for name, out in art.outputs.items() if name in cells for f in out.wrote if not f.endswith(".png")}
    return frozenset(withheld_figures(art, cells) | wrote | ({"results.json"} if notebook else set()))


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


# IPython's history of the code run (In, _ih, _i1...), and the magics that show or replay it: a cell shown
# after a solution's cells that reads it shows their code.
HISTORY = re.compile(r"(?<![\w.])(?:In|_ih|_i{1,3}|_i\d+|get_ipython)\b|^\s*%(?:hist|history|recall|rerun|save|macro|pastebin)\b",
                     re.M)


def history_readers(art: Artifacts, cells: frozenset[str]) -> list:
    """The lab's cells shown after one of `cells` (inside solutions) that read IPython's history."""
    after = False
    found = []
    for cell in art.cells:
        if cell.name in cells:
            after = True
        elif after and HISTORY.search(_code(cell.source)):
            found.append(cell)
    return found


def _code(source: str) -> str:
    """A cell's code without its comments and strings (the history's names are read in code only)."""
    import io
    import tokenize
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    kept = [token.string for token in tokens if token.type not in (tokenize.COMMENT, tokenize.STRING)]
    return " ".join(kept).replace(" % ", "\n%").replace("% ", "%")
