"""A notebook file from elsewhere, read as input, not trust.

Its JSON is checked against the shape nbformat 4 gives every part the build
reads (the notebook's metadata and kernel, each cell, its source, tags,
outputs and attachments), and each part that has another shape is named as
`file: cell N: what is wrong`, all at once: a notebook written by another
tool, or by hand, never ends in a traceback.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..core.errors import BuildError, Collector, Problem


def read_notebook(path: Path) -> dict:
    """A notebook file's JSON, checked to have the shape the import reads (see the module's text)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BuildError(Problem(str(path), 0, f"cannot read: {exc.strerror or exc}")) from None
    return parse_notebook(data, str(path))


def parse_notebook(raw: bytes, rel: str) -> dict:
    """A notebook's bytes as JSON, checked as read_notebook does (`rel` names it in problems)."""
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise BuildError(Problem(rel, 0, f"not UTF-8 text ({exc.reason}): is it a notebook?")) from None
    except ValueError as exc:
        raise BuildError(Problem(rel, getattr(exc, "lineno", 0), f"not a notebook: invalid JSON ({exc.msg}); "
                                 "save it again from Jupyter")) from None
    except RecursionError:
        raise BuildError(Problem(rel, 0, "not a notebook: its JSON is nested far too deeply")) from None
    _check_shape(data, rel)
    metadata = data.get("metadata") or {}
    kernel = metadata.get("kernelspec") or {}
    language = str(kernel.get("language") or (metadata.get("language_info") or {}).get("name") or "python")
    if not runs_python(language, str(kernel.get("name") or "")):
        raise BuildError(Problem(rel, 0, f"its kernel runs {language} ({kernel.get('display_name') or kernel.get('name')}): "
                                         "notebook pages and labs run Python; save it with a Python kernel "
                                         "(Kernel > Change Kernel in Jupyter)"))
    return data


def runs_python(language: str, kernel: str) -> bool:
    """Whether Jupyter runs a notebook of this kernelspec `language` and `kernel` name as Python: notebooks
    name it many ways (python, python3, Python 3, ipython3; xeus-python's xpython; QuantEcon's python3)."""
    said = language.lower().replace(" ", "").replace("-", "")
    return said.startswith(("python", "ipython", "xpython")) or said in ("py", "py3") or (
        not said and kernel.lower().startswith(("python", "xpython")))


def _check_shape(data, rel: str) -> None:
    """A notebook from elsewhere is input, not trust: every part the import reads has the shape
    nbformat 4 gives it, or each that has not is named (`file: cell N: ...`), all at once."""
    if not isinstance(data, dict):
        raise BuildError(Problem(rel, 0, f"not a notebook: a JSON object is expected, not {type(data).__name__}"))
    version = data.get("nbformat", 4)
    if "worksheets" in data or (isinstance(version, int) and not isinstance(version, bool) and version < 4):
        raise BuildError(Problem(rel, 0, f"notebook format {version} is too old: open and save it in Jupyter "
                                         "(format 4), or run `jupyter nbconvert --to notebook --nbformat 4`"))
    problems = Collector()

    def expect(value, kind, what: str, where: str = "") -> bool:
        if value is None or isinstance(value, kind) and not isinstance(value, bool):
            return True
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        problems.add(rel, 0, f"{where}{what} is {type(value).__name__} ({str(value)[:40]!r}), not {names}: "
                             "save the notebook again from Jupyter")
        return False
    expect(version, int, "nbformat")
    if expect(data.get("metadata"), dict, "metadata") and isinstance(data.get("metadata"), dict):
        expect(data["metadata"].get("kernelspec"), dict, "metadata.kernelspec")
        expect(data["metadata"].get("language_info"), dict, "metadata.language_info")
        expect(data["metadata"].get("title"), str, "metadata.title")
    cells = data.get("cells")
    if not isinstance(cells, list):
        problems.add(rel, 0, "not a notebook: it has no list of cells")
        cells = []
    for number, cell in enumerate(cells, 1):
        where = f"cell {number}: "
        if not isinstance(cell, dict):
            problems.add(rel, 0, f"{where}a cell is an object with cell_type and source, not {str(cell)[:40]!r}")
            continue
        if cell.get("cell_type") not in ("markdown", "code", "raw"):
            problems.add(rel, 0, f"{where}cell_type {cell.get('cell_type')!r} is none of markdown, code, raw")
        source = cell.get("source")
        if not (isinstance(source, str) or isinstance(source, list) and all(isinstance(s, str) for s in source)):
            if source is not None:
                problems.add(rel, 0, f"{where}source is {type(source).__name__}, not text or a list of lines")
        if expect(cell.get("metadata"), dict, "metadata", where) and isinstance(cell.get("metadata"), dict):
            tags = cell["metadata"].get("tags")
            if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
                problems.add(rel, 0, f"{where}metadata.tags is {str(tags)[:40]!r}, not a list of tags "
                                     '(["raises-exception"])')
            expect(cell["metadata"].get("name"), str, "metadata.name", where)
        outputs = cell.get("outputs")
        if outputs is not None and not (isinstance(outputs, list) and all(isinstance(o, dict) for o in outputs)):
            problems.add(rel, 0, f"{where}outputs is {str(outputs)[:40]!r}, not a list of outputs")
        attachments = cell.get("attachments")
        if attachments is not None and not (isinstance(attachments, dict)
                                            and all(isinstance(a, dict) for a in attachments.values())):
            problems.add(rel, 0, f"{where}attachments is {str(attachments)[:40]!r}, not a mapping of name to data")
    problems.raise_if_any()
