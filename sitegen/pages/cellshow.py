"""What a notebook's code cell shows of itself, as Jupyter Book's cell tags and Quarto's `#|` options say.

They become this site's `::: cell` options (blocks.py): its code shown, folded (a reader opens it) or
hidden; its output shown, collapsed or hidden; or no block at all (the cell still runs: what it
computes is the page's). What they do not say is shown; an option this site lacks is named.
"""
from __future__ import annotations

from ..project.cells import CELL_OPTION, cell_options

TAGS = {"hide-input": {"code": "folded"}, "remove-input": {"code": "hidden"}, "hide-output": {"output": "collapsed"},
        "remove-output": {"output": "hidden"}, "hide-cell": {"code": "folded", "output": "collapsed"},
        "remove-cell": None}
QUARTO_OPTIONS = {("echo", "false"): {"code": "hidden"}, ("echo", "true"): {}, ("output", "false"): {"output": "hidden"},
                  ("output", "true"): {}, ("include", "false"): None, ("include", "true"): {},
                  ("code-fold", "true"): {"code": "folded"}, ("code-fold", "false"): {}, ("code-fold", "show"): {},
                  ("eval", "true"): {}, ("eval", "false"): {},        # (a cell that does not run: cells.runs)
                  ("error", "true"): {}, ("error", "false"): {}}      # (its error shown: nbsource.cells_of)


FIGURE_OPTIONS = {"label", "fig-cap", "fig-alt"}       # Quarto's options of the figure a cell draws
UNSAID = {"fig-align"}          # what a page here shows as it is, needing no word (a figure fills the column)


def cell_figure(figure: tuple, text: str) -> tuple[str, str, str] | None:
    """The label, caption and alt text of the figure a code cell draws, from myst-nb's metadata
    (`figure`: its name and caption) or Quarto's `#| label: fig-...`, `#| fig-cap:` and `#| fig-alt:`
    (its words as written); None when it says none."""
    said = dict(zip(("label", "fig-cap"), figure)) if figure else {}
    for line in text.split("\n"):
        if not line.startswith("#|"):
            break
        if (option := CELL_OPTION.match(line)) and option["key"] in FIGURE_OPTIONS:
            said[option["key"]] = option["value"].strip().strip("'\"")
    if not (said.get("label") or said.get("fig-cap")):
        return None
    caption = said.get("fig-cap", "")
    return said.get("label", ""), caption, said.get("fig-alt") or caption


def cell_visibility(tags: tuple[str, ...], text: str, line: int, notes: list) -> dict[str, str] | None:
    """What a notebook's code cell shows, from its tags and `#|` options: `::: cell` options, or None
    when it shows nothing (its block is left out). What is not supported is said in `notes`."""
    shown: dict[str, str] = {}
    for tag in tags:
        if tag in TAGS:
            if TAGS[tag] is None:
                return None
            shown.update(TAGS[tag])
    options, _ = cell_options(text)
    for key, value in options:
        if key in FIGURE_OPTIONS or key in UNSAID:
            continue                    # (the figure it draws: cell_figure)
        if (key, value) in QUARTO_OPTIONS:
            if QUARTO_OPTIONS[key, value] is None:
                return None
            shown.update(QUARTO_OPTIONS[key, value])
        else:
            notes.append((line, f"the cell option #| {key}: {value} is not supported here: left out (supported: "
                                "echo, output, include, eval, error, code-fold)"))
    if shown.get("code") == "hidden" and shown.get("output") == "hidden":
        return None
    return shown
