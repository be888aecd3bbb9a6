"""myst-nb's `glue`, for a notebook that calls it (Jupyter Book's way of quoting a computed value in
the text): `from myst_nb import glue; glue("name", value)` keeps the value under its name, which a page
quotes as {{ name }} (MyST's {glue} roles are read as that: dialects.py); a Matplotlib figure is saved
as name.png, a figure of the cell, which `![what it shows](figure:name.png)` (or MyST's {glue:figure})
shows. Installed as the module `myst_nb` in a lab's process when myst-nb itself is not installed.
"""
from __future__ import annotations

import importlib.util
import sys

GLUED: dict = {}


def glue(name: str, variable, display: bool = True) -> None:
    GLUED[str(name)] = variable
    figure = sys.modules.get("matplotlib.figure")
    if figure is not None and isinstance(variable, figure.Figure):
        variable.savefig(f"{name}.png", dpi=2 * variable.dpi, bbox_inches="tight")
        return
    if display:
        from IPython.display import display as show
        show(variable)


def install() -> None:
    """This module as `myst_nb`, unless myst-nb is installed."""
    if "myst_nb" not in sys.modules and importlib.util.find_spec("myst_nb") is None:
        sys.modules["myst_nb"] = sys.modules[__name__]
