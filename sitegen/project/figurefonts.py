"""The fonts a site's figures fall back on for characters their own font lacks.

Matplotlib's default font (DejaVu Sans) has no Chinese: a lab that writes a
title in the page's language gets empty boxes. site.yaml names font files
that installed packages ship, as `package:path/in/package.ttf` (e.g.
`zhplot:fonts/NotoSansSC-Regular.ttf`, an OFL font from PyPI); a figure
keeps its own font for every character that font has, and takes the others
from these, in order. The same few lines (SETUP) run in each lab's process
before its cells and open the notebook download, so a student who reruns it
with the packages of requirements.txt draws the same figures; without the
package the cell does nothing and the numbers are unchanged.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

FONT_SPEC = "package:path/to/font.ttf"
MISSING_GLYPH = r"Glyph \d+ .*missing from font"    # Matplotlib's warning for an empty box
NO_GLYPH = ("a figure's text has a character that none of its fonts has: list a font file that has it under "
            f"site.figure_fonts in site.yaml as {FONT_SPEC}: for Chinese, zhplot:fonts/NotoSansSC-Regular.ttf "
            "(pip install zhplot, and add the line zhplot to requirements.txt)")

# Run as code, in the lab's process and, after a comment for students, as the notebook's first code cell.
SETUP = '''\
FONTS = {fonts!r}
import importlib.util, pathlib
from matplotlib import font_manager, rcParams
_families = []
for _package, _file in FONTS:
    _spec = importlib.util.find_spec(_package)
    if _spec and _spec.origin:
        _path = pathlib.Path(_spec.origin).parent / _file
        font_manager.fontManager.addfont(_path)
        _families.append(font_manager.FontProperties(fname=_path).get_name())
rcParams["font.family"] = ["sans-serif", *_families]
'''


def parse(spec: str) -> tuple[str, str] | None:
    """`package:path` as (package, path), or None if it is not of that form."""
    package, colon, path = spec.partition(":")
    if not (colon and package.isidentifier() and path) or path.startswith("/") or ".." in path.split("/"):
        return None
    return package, path


def locate(spec: str) -> Path | None:
    """The installed font file `spec` names (without importing its package), or None."""
    parsed = parse(spec)
    if parsed is None:
        return None
    try:
        found = importlib.util.find_spec(parsed[0])
    except (ImportError, ValueError):
        return None
    if found is None or not found.origin:
        return None
    path = Path(found.origin).parent / parsed[1]
    return path if path.is_file() else None


def setup_code(specs: tuple[str, ...], comment: str = "") -> str:
    """The code that makes figures fall back on these fonts (empty for none), after `comment`
    (the vocabulary's figure_fonts, with {packages} to install)."""
    if not specs:
        return ""
    fonts = [parse(spec) for spec in specs]
    packages = " ".join(dict.fromkeys(package for package, _ in fonts))
    return "".join(f"# {line}\n" for line in comment.format(packages=packages).splitlines()) + SETUP.format(fonts=fonts)


def use() -> None:
    """In a lab's process, before its cells: a character that no font of a figure has is an error
    (Matplotlib only warns, and draws an empty box)."""
    import logging
    import warnings
    warnings.filterwarnings("error", message=MISSING_GLYPH)
    # A fallback font without a bold face is used at its regular weight, with a log line per text.
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)


def fall_back(specs: tuple[str, ...]) -> None:
    """In a lab's process, once it imported Matplotlib: figures fall back on these fonts."""
    if specs:
        exec(setup_code(specs), {"__name__": "figurefonts"})
