"""A notebook's cells as IPython runs them, inside the lab's process (labs with display: jupyter).

The cells run in an IPython shell, as in Jupyter: magics (`%timeit`, `%%capture`, `%precision`,
`%xmode`), `get_ipython()`, IPython's pretty printer and display formatters (`_repr_html_`,
`_repr_latex_`, `display()`, `Markdown`, `Math`, `HTML`, `Image`). What a cell shows is kept
as Jupyter keeps it, a list of nbformat outputs in the order they came: streams (stdout and
stderr, as they interleave), display data and the execute result with every representation,
and the error. Figures are saved as files beside the lab's other outputs and named in the
output that shows them ({"output_type": "display_data", "figure": NAME}); so are PNG, JPEG,
GIF and SVG images a cell displays ({"file": NAME}), so that the page links them and the
build re-encodes them like the figures.

Shell escapes (`!ls`, `%sx`) do not run in a build: they fail the cell, saying what to write.
`%matplotlib inline` is what the lab's backend already does. Nothing is written outside the
lab's folder: IPython's history is kept in memory, its profile under the lab's temporary folder.

A traceback or a warning names a file as it lies in the notebook's folder (helper.py) or in the
folder on sys.path that holds it (pandas/core/frame.py), never by the building machine's own path:
a page is the same wherever it was built, and shows nothing of the teacher's machine (nor
the build's own frames).
"""
from __future__ import annotations

import base64
import io
import os
import re
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from .warm import when_imported

if TYPE_CHECKING:
    from ..project.cells import Cell

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")        # an object's address differs every run: not shown
GENERATOR = os.path.dirname(os.path.dirname(__file__))       # sitegen/: a traceback's frame there is the build's
# Where a traceback names a file: `File /path/x.py:3, in f()` (IPython's), `File "/path/x.py", line 3` (Python's)
NAMED_FILE = re.compile(r'^(\s*File "?)([^":\n]+)', re.M)
IMAGES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/svg+xml": "svg"}
# The representations a page shows, in JupyterLab's order of preference (pages/outputs.py): one per output.
RICH = ("text/html", "text/markdown", "text/latex", "image/png", "image/jpeg", "image/gif", "image/svg+xml")
SHOWN_FIRST = RICH[:3]          # what a page (and JupyterLab) shows before any image
SHELL_REFUSED = ("shell commands ({command}) do not run in the build, which runs only Python: "
                 "use Python instead (pathlib.Path('.').iterdir(), subprocess.run([...]) for a program "
                 "the lab needs), or delete the line")
# `!pip install X`, `%pip install X` (as this Python's pip), `!python -m pip install X`: skipped, not run.
PIP_INSTALL = re.compile(r"^(\S*/)?(pip3?|python3?(\.\d+)? -m pip)\s+install\b")


def _has_repr(formatter, obj) -> bool:
    """Whether IPython's `formatter` may make a representation of `obj` (a printer for its type, or its
    own _repr_*_ method), without making it."""
    from IPython.utils.dir2 import get_real_method
    if not formatter.enabled:
        return False
    try:
        formatter.lookup(obj)
        return True
    except KeyError:
        return get_real_method(obj, formatter.print_method) is not None


class ShellRefused(RuntimeError):
    """A shell escape in a cell: the build runs Python only."""


class _Stream(io.TextIOBase):
    """sys.stdout or sys.stderr while a cell runs: what is written joins the cell's outputs."""
    encoding = "utf-8"          # (IPython prints ± and µ when the stream can take them)

    def __init__(self, name: str, cells: "NotebookShell"):
        self.name, self.cells = name, cells

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            self.cells.stream(self.name, text)
        return len(text)

    def isatty(self) -> bool:
        return False


class NotebookShell:
    """One IPython shell for a lab's process; `run(code, cell)` runs a cell and returns what it showed."""

    def __init__(self, folder: Path, save_figure, home: str = ""):
        """`folder`: the lab's working folder, where displayed images are saved; `save_figure(figure,
        name)` saves a Matplotlib figure as Jupyter's inline backend would show it; `home`: the
        notebook's own folder (the working folder mirrors it)."""
        os.environ.setdefault("IPYTHONDIR", str(Path(os.environ.get("TMPDIR", folder)) / "ipython"))
        from IPython.core.displayhook import DisplayHook
        from IPython.core.displaypub import DisplayPublisher
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config
        shell_self = self

        class Publisher(DisplayPublisher):
            def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **_):
                shell_self.output({"output_type": "display_data", "data": data, "metadata": metadata or {}})

            def clear_output(self, wait=False):
                shell_self.outputs.clear()

        class Hook(DisplayHook):
            def start_displayhook(self):
                pass

            def write_output_prompt(self):
                pass

            def write_format_data(self, format_dict, md_dict=None):
                shell_self.output({"output_type": "execute_result", "execution_count": self.prompt_count,
                                   "data": format_dict, "metadata": md_dict or {}})

            def finish_displayhook(self):
                pass

        config = Config()
        config.HistoryManager.enabled = False
        config.InteractiveShell.colors = "nocolor"
        self.folder, self.save_figure = folder, save_figure
        self.outputs: list[dict] = []
        self.cell, self.shown, self.figures_shown, self.code_name = "", 0, set(), ""
        self.error: BaseException | None = None
        self.shell = InteractiveShell.instance(config=config, displayhook_class=Hook, display_pub_class=Publisher)
        self.shell._showtraceback = self._traceback
        self.shell.system = self.shell.getoutput = self._refuse
        self.shell.enable_matplotlib = lambda gui=None: ("inline", os.environ.get("MPLBACKEND"))
        self.shell.user_ns["__name__"] = "__main__"
        # A cell's code is named as IPython names it in a traceback (In[3]), never by a hash of it:
        # `SyntaxError: ... (In[3], line 2)`, and warnings say `In[3]:2:`.
        self.shell.compile.get_code_name = lambda raw, transformed, number: f"In[{number}]"
        self.homes = tuple(str(path) for path in (folder, home) if path)
        import warnings
        shown = warnings.formatwarning

        def formatwarning(message, category, filename, lineno, line=None):
            if line is None:        # (read from the file itself, which the shortened name does not find)
                import linecache
                line = linecache.getline(filename, lineno)
            return shown(message, category, self.where(filename), lineno, line)
        warnings.formatwarning = formatwarning
        self._every_format = self.shell.display_formatter.format          # (IPython's own, called by _format)
        self.shell.display_formatter.format = self._format
        # (IPython looks the type up once the lab imported Matplotlib)
        self.shell.display_formatter.formatters["image/png"].for_type_by_name("matplotlib.figure", "Figure", self._figure)

    @property
    def namespace(self) -> dict:
        return self.shell.user_ns

    def _format(self, obj, include=None, exclude=None) -> tuple[dict, dict]:
        """IPython's representations of `obj`, but an image where it has one a page shows first (HTML,
        Markdown, LaTeX: SymPy's PNG of its formula, a third of a SymPy notebook's run), which neither
        the page nor a Jupyter opening the download shows: not made."""
        every = self._every_format
        formatters = self.shell.display_formatter.formatters
        if include is None and any(_has_repr(formatters[mime], obj) for mime in SHOWN_FIRST if mime in formatters):
            data, metadata = every(obj, include, [*(exclude or ()), *IMAGES])
            if any(mime in data for mime in SHOWN_FIRST):
                return data, metadata
        return every(obj, include, exclude)

    def where(self, path: str) -> str:
        """`path` as a page names it: relative to the notebook's folder, or to the folder on sys.path
        that holds it (the longest); a path in neither (<frozen ...>, a file outside) as it is."""
        for base in sorted({*self.homes, *(p for p in sys.path if os.path.isabs(p))}, key=len, reverse=True):
            base = base.rstrip(os.sep)
            if base and path.startswith(base + os.sep):
                return path[len(base) + 1:]
        return path

    def _refuse(self, command, *args, **kwargs):
        command = str(command).strip().replace(sys.executable, "python")       # (%pip runs this Python's pip)
        if PIP_INSTALL.match(command):
            return ""       # the build installs nothing: what requirements.txt lists is there (a page notes
                            # what it does not list: nbpage.py)
        raise ShellRefused(SHELL_REFUSED.format(command=f"!{command}"))

    def _traceback(self, etype, evalue, stb) -> None:
        """An error as Jupyter shows it, but for the build's own frames (a refused `!command`'s)."""
        self.error = evalue
        lines = [NAMED_FILE.sub(lambda m: m[1] + self.where(m[2]), ADDRESS.sub("", line)) for line in stb
                 if not line.startswith(f"File {GENERATOR}{os.sep}")]
        self.output({"output_type": "error", "ename": etype.__name__, "evalue": str(evalue), "traceback": lines})

    def _figure(self, figure) -> bytes:
        """A figure displayed (`display(fig)`, `fig` as a cell's last line, or left open), saved once:
        as a PNG, or as SVG where the notebook asks for it (`%config InlineBackend.figure_format = 'svg'`)."""
        self.shown += 1
        inline = self.shell.config.get("InlineBackend", {})
        formats = {inline.get("figure_format", "png"), *inline.get("figure_formats", ())}
        name = f"{self.cell}-{self.shown}.{'svg' if 'svg' in formats else 'png'}"
        self.save_figure(figure, self.folder / name)
        self.figures_shown.add(id(figure))
        return b"figure:" + name.encode()

    def stream(self, name: str, text: str) -> None:
        """What a cell printed: consecutive writes to one stream are one output, as Jupyter shows them, their
        parts joined once the cell has run (joined at each write, 100,000 printed lines took minutes)."""
        if self.outputs and self.outputs[-1]["output_type"] == "stream" and self.outputs[-1]["name"] == name:
            self.outputs[-1]["text"].append(text)
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": [text]})

    def output(self, out: dict) -> None:
        if "data" in out:
            out["data"] = self._kept(out["data"])
            if out["data"] is None:
                return
        self.outputs.append(out)

    def _kept(self, data: dict) -> dict | None:
        """A display's representations as the build keeps them: text as text (addresses left out),
        a figure or image as the file it was saved to when the page shows it; an image the page does not
        show (one a display made itself beside its HTML) stays in the output, for the download only."""
        kept = {}
        shown = next((mime for mime in RICH if mime in data), None)
        for mime, value in data.items():
            if mime == "image/png" and isinstance(value, bytes) and value.startswith(b"figure:"):
                name = value[len(b"figure:"):].decode()
                return {"image/svg+xml": {"file": name}} if name.endswith(".svg") else {"figure": name}
            if mime in IMAGES and mime != shown:
                kept[mime] = base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value
            elif mime in IMAGES:
                raw = value.encode() if mime == "image/svg+xml" and isinstance(value, str) else value
                if isinstance(raw, str):
                    raw = base64.b64decode(raw)
                self.shown += 1
                name = f"{self.cell}-{self.shown}.{IMAGES[mime]}"
                (self.folder / name).write_bytes(raw)
                kept[mime] = {"file": name}
            elif isinstance(value, str):
                kept[mime] = ADDRESS.sub("", value) if mime == "text/plain" else value
            elif isinstance(value, (dict, list)):      # application/json, widget views
                kept[mime] = value
        return kept

    def run(self, code: str, cell: str) -> tuple[list[dict], BaseException | None]:
        """Run one cell's code: what it showed, in order, and the error it raised (None if none)."""
        self.outputs, self.cell, self.error, self.figures_shown, self.shown = [], cell, None, set(), 0
        self.code_name = f"In[{self.shell.execution_count}]"
        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Stream("stdout", self), _Stream("stderr", self)
        try:
            result = self.shell.run_cell(code, store_history=True)
        finally:
            sys.stdout, sys.stderr = streams
        for out in self.outputs:
            if out["output_type"] == "stream":
                out["text"] = "".join(out["text"])
        error = result.error_before_exec or result.error_in_exec
        return self.outputs, (error or self.error) if not result.success else None


# -- the inline figures ----------------------------------------------------------

# Backends that draw in a live notebook (a page has none): figures are shown inline instead.
INTERACTIVE_BACKENDS = {"nbagg", "notebook", "widget", "ipympl", "inline", "module://matplotlib_inline.backend_inline",
                        "module://ipympl.backend_nbagg"}

class InlineNotebook:
    """A lab's cells run as Jupyter runs them (labipython.py), with its inline figures: a figure
    still open when a cell ends, or when it calls plt.show(), is shown where it came (saved as
    CELL-1.png, CELL-2.png, ... at twice its size, as the retina format does), and closed. A figure
    the cell displayed is not shown again; one it saved as a PNG in its folder is shown as that file."""

    def __init__(self, folder: Path, script: str, notebook: bool):
        self.folder, self.script = folder, script
        self.saved: dict[int, str | None] = {}      # figure -> the PNG it was saved as in the lab's folder
        self.shell = NotebookShell(folder, self._save, str(Path(script).parent))
        if not notebook:            # (a script lab shown as Jupyter shows it has a file; a notebook has none)
            self.shell.namespace["__file__"] = script
        when_imported("matplotlib", self._choose_backend)
        when_imported("matplotlib.figure", self._name_saved)
        when_imported("matplotlib.pyplot", self._show_inline)

    @staticmethod
    def _choose_backend(matplotlib) -> None:
        chosen = matplotlib.use

        def use(backend, *args, **kwargs):      # an interactive notebook backend: a page's figures are inline
            if str(backend).lower() not in INTERACTIVE_BACKENDS:
                chosen(backend, *args, **kwargs)
        matplotlib.use = use

    def _name_saved(self, figures) -> None:
        """A figure the lab saved as a PNG in its folder is shown as that file."""
        original, folder = figures.Figure.savefig, self.folder

        def savefig(figure, *args, **kwargs):
            target = args[0] if args else kwargs.get("fname")
            if isinstance(target, (str, os.PathLike)) and str(target).endswith(".png"):
                where = Path(os.path.abspath(target))
                self.saved[id(figure)] = str(where.relative_to(folder)) if where.is_relative_to(folder) else None
            else:
                self.saved.setdefault(id(figure), None)
            return original(figure, *args, **kwargs)
        figures.Figure.savefig = savefig

    def _show_inline(self, pyplot) -> None:
        pyplot.show = lambda *args, **kwargs: self._flush()

    @property
    def namespace(self) -> dict:
        return self.shell.namespace

    @property
    def hidden(self) -> set:
        """The names IPython itself puts in the namespace (In, Out, get_ipython, exit, ...)."""
        return set(self.shell.shell.user_ns_hidden)

    def _save(self, figure, path: Path) -> None:
        figure.savefig(path, dpi=2 * figure.dpi, bbox_inches="tight")

    def _flush(self) -> None:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        for number in plt.get_fignums():
            figure = plt.figure(number)
            if id(figure) in self.shell.figures_shown:
                continue
            saved = self.saved.get(id(figure))
            self.shell.output({"output_type": "display_data", "metadata": {},
                               "data": {"figure": saved} if saved else {"image/png": self.shell._figure(figure)}})
            self.shell.figures_shown.add(id(figure))
        plt.close("all")

    def run(self, cell: Cell) -> tuple[list[dict], BaseException | None]:
        self.saved.clear()
        outputs, error = self.shell.run(cell.source, cell.name)
        self.shell.outputs = outputs
        try:
            self._flush()
        except Exception as exc:  # noqa: BLE001 - drawing the figure it left open failed: the cell's error
            import matplotlib.pyplot as plt
            plt.close("all")
            self.shell.output({"output_type": "error", "ename": type(exc).__name__, "evalue": str(exc),
                               "traceback": traceback.format_exception_only(exc)})
            error = error or exc
        return self.shell.outputs, error


def figure_outputs(outputs: list[dict]) -> list[str]:
    """The figures and images a cell's outputs show, as file names."""
    found = []
    for out in outputs:
        data = out.get("data", {})
        if "figure" in data:
            found.append(data["figure"])
        found += [value["file"] for value in data.values() if isinstance(value, dict) and "file" in value]
    return found
