"""A lab script's named cells: `# %% name` starts one (jupytext's percent format).

A marker may carry the cell's Jupyter tags as jupytext writes them, `# %% name
tags=["raises-exception"]`: such a cell is meant to raise, and shows its error.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

from ..core.errors import Collector
from ..core.memo import Memo
from ..core.sources import decode, read_bytes
from ..core.stored import sha256_of

MARKER = re.compile(r"^# %%(?P<rest>.*)$")
NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
TAGS = re.compile(r"^tags=(?P<list>\[.*\])$")
RAISES = "raises-exception"         # Jupyter's tag for a cell whose error is the point
SKIPPED = "skip-execution"          # myst-nb's tag for a cell that does not run (Quarto's `#| eval: false`)
CELL_OPTION = re.compile(r"^#\|\s*(?P<key>[\w-]+)\s*:\s*(?P<value>.*?)\s*$")


def cell_options(text: str) -> tuple[list[tuple[str, str]], str]:
    """A code cell's Quarto options (its leading `#| key: value` lines), and its code without them."""
    lines = text.split("\n")
    count = next((k for k, line in enumerate(lines) if not line.startswith("#|")), len(lines))
    found = [(m["key"], m["value"].strip("'\"").lower()) for line in lines[:count] if (m := CELL_OPTION.match(line))]
    return found, "\n".join(lines[count:])


def runs(text: str, tags) -> bool:
    """Whether a notebook's code cell runs: not when its tags say skip-execution or its options `eval: false`
    (its code is shown, with no output, as Jupyter Book and Quarto show it)."""
    return SKIPPED not in tags and ("eval", "false") not in cell_options(text)[0]


class Cell(NamedTuple):
    name: str
    source: str        # the cell's code, without the marker and trailing blank lines
    first_line: int    # 1-based line of the source's first line in the script
    tags: tuple[str, ...] = ()
    number: int = 0    # its number among a notebook's code cells, as its page counts them (0 in a script)
    may_fail: bool = False      # its error is shown, as Jupyter does, if it raises one (allow_errors)

    @property
    def raises(self) -> bool:
        return RAISES in self.tags

    @property
    def label(self) -> str:
        """How the author finds it: "code cell N" in a notebook (as its page numbers them), its name in a script."""
        return f"code cell {self.number}" if self.number else self.name


def parse_cells(text: str, path: str) -> tuple[Cell, ...]:
    problems = Collector()
    cells: list[Cell] = []
    current: tuple[str, int, list[str], tuple[str, ...]] | None = None

    def close():
        if current:
            name, first, lines, tags = current
            while lines and not lines[-1].strip():
                lines.pop()
            cells.append(Cell(name, "\n".join(lines), first, tags))

    for number, line in enumerate(text.splitlines(), 1):
        match = MARKER.match(line)
        if not match:
            if current:
                current[2].append(line)
            continue
        close()
        name, _, meta = match["rest"].strip().partition(" ")
        tags = _tags(meta.strip(), path, number, problems)
        if not NAME.match(name):
            problems.add(path, number, f"cell marker needs a name: '# %% name' with a lowercase "
                                       f"identifier, got {line!r}")
        elif any(c.name == name for c in cells):
            problems.add(path, number, f"duplicate cell name {name!r}")
        current = (name, number + 1, [], tags)
    close()
    if not cells:
        problems.add(path, 1, "no cells: start each code cell with a line '# %% name'")
    problems.raise_if_any()
    return tuple(cells)


def _tags(meta: str, path: str, number: int, problems: Collector) -> tuple[str, ...]:
    if not meta:
        return ()
    match = TAGS.match(meta)
    try:
        tags = json.loads(match["list"]) if match else None
    except ValueError:
        tags = None
    if not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        problems.add(path, number, f"after the cell's name, only its tags may follow, as "
                                   f'tags=["{RAISES}"]; got {meta!r}')
        return ()
    return tuple(tags)


def read_cells(script: Path, root: Path, memo: Memo | None = None,
               snapshot: dict[str, str] | None = None) -> tuple[Cell, ...]:
    """A script's cells; with a Memo, an unchanged script's are remembered, not parsed again
    (`snapshot`: the build's, which the text read must match)."""
    rel = script.relative_to(root).as_posix()
    data = read_bytes(script, rel, snapshot)
    return (memo or Memo(None)).value("cells", (rel, sha256_of(data)),
                                         lambda: parse_cells(decode(data, rel), rel))


def cell_code(cell: Cell) -> str:
    """Source as a runnable unit whose line numbers are those of the script."""
    return "\n" * (cell.first_line - 1) + cell.source + "\n"
