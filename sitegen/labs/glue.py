"""myst-nb's `glue`, for a notebook that calls it (Jupyter Book's way of quoting a computed value in
the text): `from myst_nb import glue; glue("name", value)` keeps the value under its name, which a page
quotes as {{ name }} (MyST's {glue} roles are read as that: dialects.py); a Matplotlib figure is saved
as name.png, a figure of the cell (an Altair chart too, drawn by vl-convert if it is installed), which `![what it shows](figure:name.png)` (or MyST's {glue:figure})
shows. Found as the module `myst_nb` in a lab's process when myst-nb itself is not installed (by its
notebook's cells or by a module they import: a book's common preamble), and as myst-nb's `glue` when it is.
"""
from __future__ import annotations

import importlib.machinery
import sys

GLUED: dict = {}


def glue(name: str, variable, display: bool = True) -> None:
    GLUED[str(name)] = variable
    figure = sys.modules.get("matplotlib.figure")
    if figure is not None and isinstance(variable, figure.Figure):
        variable.savefig(f"{name}.png", dpi=2 * variable.dpi, bbox_inches="tight")
        return
    if type(variable).__module__.startswith("altair.") and hasattr(variable, "save"):
        variable.save(f"{name}.png", scale_factor=2)        # (an Altair chart: drawn by vl-convert, offline)
        return
    if display:
        from IPython.display import display as show
        show(variable)


class _Finder:
    """Last on sys.meta_path: `import myst_nb` finds this module when no other finder finds myst-nb."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, _Finder) if name == "myst_nb" else None

    @staticmethod
    def create_module(spec):
        return sys.modules[__name__]

    @staticmethod
    def exec_module(module) -> None:
        pass


def install() -> None:
    """Let `import myst_nb` find this module unless myst-nb is installed (nothing is imported before); if it
    is, its `glue` is this one (myst-nb's only displays the value, for Sphinx to find in a saved notebook,
    which this build does not read)."""
    from .warm import when_imported
    if _Finder not in sys.meta_path:
        sys.meta_path.append(_Finder)
        when_imported("myst_nb", lambda module: setattr(module, "glue", glue))
