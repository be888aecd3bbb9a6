"""What runs inside a lab's process: its cells, one by one, and what they made.

The lab host (labhost.py) forks one process per lab; that process confines
itself (sandbox.py: it may write only in its own folder), runs the cells in
its working folder capturing what each printed and which PNGs it saved,
normalises what the lab wrote (figures in 256 colours without text chunks,
.npz members with fixed times) and writes the result as JSON for the build.
Nothing here runs in the build's own process.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import sys
import traceback
from pathlib import Path

from ..core.errors import DISK_FULL, disk_full
from ..project.cells import RAISES, Cell, cell_code
from .labipython import InlineNotebook, figure_outputs
from ..project.nbsource import runs_as_notebook
from ..project.figurefonts import MISSING_GLYPH, NO_GLYPH, fall_back, use
from .svg import inert_svg
from .labreads import Recorder, imported_packages, unrecorded
from .runs import LabResult, LabRun
from .warm import when_imported

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
WRITE_ONLY_HERE = ("labs may write only in their own working folder, where they run, and read only the course's "
                   "folder, Python and its packages: site.yaml's `lab_access: read:` lists a folder they also need")
EARLY_RESULTS = "results.early.json"


def run_lab(run: LabRun, announce_fd: int | None = None, control_fd: int | None = None) -> None:
    """Body of a lab's process: confine it to its `staging` folder (or `writable`, a folder holding it),
    run it with its figures falling back on its `fonts` (figurefonts.py), write its LabResult at its
    `result`. Once its cells have all run, its results.json is final: a copy goes to
    `staging`/EARLY_RESULTS and one byte to `announce_fd` says so, so that labs reading it can start
    while this one's figures are still being encoded. Both of the host's ends are closed when the
    result is written.

    A `preview` draws no figure (savefig does nothing) and ends once its results.json is handed on:
    it runs beside the lab's real run only so that labs reading it can start sooner. The build
    keeps what they make only if the real run's results.json turns out the same (compute.py).

    With `watch`, every file and folder of the project the lab reads, outside the cache, is recorded
    with what it held (labreads.py) and reported as the result's `reads`; of the files the build laid
    in its folder (`provided`), which it opened. `control_fd`: the host's socket for checkpoints
    (checkpoint.py), one after each cell, taking at most its `budget` bytes of memory."""
    from .checkpoint import Checkpointer, Reporting
    from .sandbox import confine, forget_environment_block, lab_environment
    watch, access, staging = run.watch, run.access, run.staging
    recorder = Recorder(watch[0], (watch[1], staging), *watch[2:], provided=run.provided).install() \
        if watch else None
    if recorder is not None:
        recorder.declared = access.variables
    reporting = Reporting(run.result, announce_fd, control_fd)
    try:
        use()
        when_imported("matplotlib", lambda _: _unrecorded(fall_back, run.fonts))
        if run.preview:
            when_imported("matplotlib.figure", _draw_nothing)
        tmp = Path(staging) / "tmp"
        tmp.mkdir(exist_ok=True)
        with unrecorded():
            environment = lab_environment(os.environ, str(tmp), access.variables)     # nothing secret (sandbox.py)
            os.environ.clear()
            os.environ.update(environment, TMPDIR=str(tmp))         # tempfile works inside the confinement
            forget_environment_block()
            confinement = confine([run.writable or staging], access.readable, access.network)
            bound_memory(access.memory)
            # Bytecode is read beside the sources (pip's), not under the build's PYTHONPYCACHEPREFIX, where
            # the lab may write none: there, each import of pandas or SymPy was compiled anew in every run.
            sys.pycache_prefix = None
        confined = bool(confinement.get("writes"))
        checkpoints = None if control_fd is None else Checkpointer(reporting, Path(staging), run.writable or staging,
                                                                   recorder, run.budget)
        result = LabResult(**run_cells(run.script, run.cells, run.workdir, confined, run.display,
                                       finish=not run.preview, checkpoints=checkpoints,
                                       cells_done=lambda: _hand_on_results(Path(run.workdir), Path(staging),
                                                                           reporting.announce)))
        result.confined, result.unconfined = confined, confinement.missing()
        if checkpoints is not None:
            result.checkpoints, result.resumed = checkpoints.taken, checkpoints.resumed
            result.skipped, result.dropped = checkpoints.skipped, checkpoints.dropped
    except BaseException as exc:  # noqa: BLE001 - a harness failure is reported like a lab's
        result = LabResult([], _failure(run.script, exc))
    if recorder is not None:
        result.reads = dict(sorted(recorder.reads.items()))
        result.packages = imported_packages(watch[0])
    try:
        Path(reporting.result + ".tmp").write_text(result.to_json(), encoding="utf-8")
    except OSError as exc:              # the disk is full (the lab filled it): what it wrote goes, and it says so
        if not disk_full(exc):
            raise
        _free(Path(staging) / "work")   # (still full, another lab holding it: its process ends with NO_SPACE)
        result = LabResult.failed(f"{exc.strerror} (in {staging}): {DISK_FULL}")
        Path(reporting.result + ".tmp").write_text(result.to_json(), encoding="utf-8")
    os.replace(reporting.result + ".tmp", reporting.result)
    reporting.close()


def _free(work: Path) -> None:
    """Give back the space of what the lab wrote in `work`: emptied first, since a file it still holds
    open keeps its space after it is removed."""
    for path in work.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError):
                os.truncate(path, 0)
    shutil.rmtree(work, ignore_errors=True)


MEMORY = [0]        # the bytes this lab's process may allocate (bound_memory), for its failure's message


def bound_memory(limit: int) -> None:
    """From now on this process (and what it starts) may allocate at most `limit` bytes of data (heap
    and private mappings: RLIMIT_DATA); an allocation past it raises MemoryError. 0: no bound."""
    import resource
    if not limit:
        return
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    except (ValueError, OSError):
        return              # (a bound below what the process already holds, or one the system refuses)
    MEMORY[0] = limit


def _unrecorded(call, *args) -> None:
    with unrecorded():
        call(*args)


def _draw_nothing(figure) -> None:
    figure.Figure.savefig = lambda *args, **kwargs: None


def _hand_on_results(workdir: Path, staging: Path, announce) -> None:
    found = [p for p in _files(workdir, RESULTS) if p.relative_to(workdir).parts[0] != "inputs"]
    if len(found) != 1:
        return                              # the build reports what is wrong once the lab is done
    shutil.copyfile(found[0], staging / (EARLY_RESULTS + ".tmp"))
    os.replace(staging / (EARLY_RESULTS + ".tmp"), staging / EARLY_RESULTS)
    announce()


def _files(folder: Path, pattern: str = "*") -> list[Path]:
    """What the lab wrote in its folder (a notebook's neighbours there are links to the project's),
    looked at by the harness: not the lab's reading (labreads.py)."""
    with unrecorded():
        return sorted(p for p in folder.rglob(pattern) if not p.is_symlink())


def _stamps(folder: Path) -> dict[str, tuple[int, int]]:
    """The files the lab wrote in its folder (as _files finds them), each with its time and size: what a
    cell wrote (its figures among it) is what changed across it. One listing of each folder (the
    notebook's neighbours too, laid as links): a lecture of 178 cells spent 0.29 s in pathlib's walk."""
    found, folders = {}, [str(folder)]
    with unrecorded():
        while folders:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        continue
                    if entry.is_dir():
                        folders.append(entry.path)
                    elif entry.is_file():
                        stat = entry.stat()
                        found[os.path.relpath(entry.path, folder)] = (stat.st_mtime_ns, stat.st_size)
    return found


def _failure(script: str, exc: BaseException, confined: bool = False, cell: Cell | None = None,
             code_name: str = "") -> dict:
    """A failure as the build reports it: the script's line (for a cell IPython ran, whose code is
    named `code_name`, the line in the cell, counted from the cell's first line), and what to do."""
    line = getattr(exc, "lineno", 0) if isinstance(exc, SyntaxError) else 0
    if cell is not None:
        line = cell.first_line + (line or 1) - 1
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == script:
            line = frame.lineno or line
        elif cell is not None and code_name and frame.filename == code_name:
            line = cell.first_line + (frame.lineno or 1) - 1
    message = f"{type(exc).__name__}: {exc}".rstrip(": ") if type(exc).__name__ != "ShellRefused" else str(exc)
    if cell is not None and cell.number:
        message = f"{cell.label}: {message}"
    if disk_full(exc):
        message += f" ({DISK_FULL})"
    if isinstance(exc, MemoryError) and MEMORY[0]:
        message += (f" (the lab used more than {MEMORY[0] // 2**20} MiB, its memory bound: raise `memory:` (MiB) in "
                    + ("the notebook's front matter" if runs_as_notebook(script) else "its site.yaml entry")
                    + " if this machine has it)")
    if isinstance(exc, FileNotFoundError) and runs_as_notebook(script) and isinstance(exc.filename, str):
        where = os.path.normpath(os.path.join(os.path.dirname(script), exc.filename))
        message += f" (it runs in its own folder, as in Jupyter: there is no {where})"
    if confined and isinstance(exc, PermissionError):
        message += f" ({WRITE_ONLY_HERE})"
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".")[0]
        message += (f" ({top} is not installed here: install the package that provides it in the project's "
                    "virtualenv and add it to requirements.txt, which is all Cloudflare Pages' build installs)")
    if _offline(exc):
        message += (" (labs have no network in a build: save what it downloads beside the notebook or lab and "
                    "read it from there, or let labs reach the network with site.yaml's `lab_access: {network: true}`)")
    if re.search(MISSING_GLYPH, message):
        message += f" ({NO_GLYPH})"
    return {"line": line, "message": message,
            "trace": "".join(traceback.format_exception(exc))}


NO_NETWORK = re.compile(r"name resolution|Name or service not known|Network is unreachable|nodename nor servname")


def _offline(exc: BaseException) -> bool:
    """Whether a failure is a lab reaching for the network, which a build gives it none of (sandbox.py):
    a name it could not resolve or a network it could not reach, however a library wrapped it."""
    import socket
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, socket.gaierror) or NO_NETWORK.search(str(exc)):
            return True
        exc, seen = exc.__cause__ or exc.__context__ or getattr(exc, "reason", None), seen + 1
        exc = exc if isinstance(exc, BaseException) else None
    return False


class _ScriptCells:
    """A lab script's cells, run as Python runs the script: what each printed, its errors as the
    script's own (named by its file's name)."""
    hidden = ()

    def __init__(self, script: str):
        self.script, self.namespace = script, {"__name__": "__main__", "__file__": script}

    def run(self, cell: Cell) -> tuple[str, None, None, BaseException | None]:
        """What `cell` printed, no value, no outputs, and what it raised (None if nothing)."""
        stdout = io.StringIO()
        try:
            with contextlib.redirect_stdout(stdout):
                exec(compile(cell_code(cell), self.script, "exec"), self.namespace)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported, SystemExit too
            return stdout.getvalue(), None, None, exc
        return stdout.getvalue(), None, None, None

    def shown(self, exc: BaseException) -> str:
        return "".join(traceback.format_exception_only(exc)).replace(self.script, Path(self.script).name).rstrip()

    def failure(self, exc: BaseException, confined: bool, cell: Cell) -> dict:
        return _failure(self.script, exc, confined)


class _NotebookCells:
    """A notebook's code cells, run as IPython in Jupyter runs them (labipython.py): what each printed,
    its value and everything it showed."""

    def __init__(self, folder: Path, script: str):
        self.script, self.notebook = script, InlineNotebook(folder, script, runs_as_notebook(script))

    @property
    def namespace(self) -> dict:
        return self.notebook.namespace

    @property
    def hidden(self) -> set:
        return self.notebook.hidden

    def run(self, cell: Cell) -> tuple[str, str | None, list[dict], BaseException | None]:
        outputs, exc = self.notebook.run(cell)
        stdout = "".join(o["text"] for o in outputs if o.get("name") == "stdout")
        value = next((o["data"].get("text/plain") for o in outputs if o["output_type"] == "execute_result"), None)
        return stdout, value, outputs, exc

    def shown(self, exc: BaseException) -> str:
        return "".join(traceback.format_exception_only(exc)).rstrip()

    def failure(self, exc: BaseException, confined: bool, cell: Cell) -> dict:
        return _failure(self.script, exc, confined, cell, self.notebook.shell.code_name)


def run_cells(script: str, cells: tuple[Cell, ...], workdir: str, confined: bool = False,
              display: str = "script", cells_done=None, finish: bool = True, checkpoints=None) -> dict:
    """Execute cells in order in `workdir`: what each printed and which PNGs it saved, and with
    display "jupyter" what each showed, as IPython in Jupyter shows it (labipython.py). A cell tagged
    raises-exception must raise; its error is what it shows; one that `may_fail` shows its error if
    it raises one. Then, if `finish`, normalise what the lab wrote (figures, .npz files).
    `checkpoints` (checkpoint.Checkpointer) takes one after each cell but the last; a run resumed
    from one goes on here, with the cells it was given from there on."""
    os.chdir(workdir)
    os.environ["MPLBACKEND"] = LAB_BACKEND
    sys.path.insert(0, str(Path(script).parent))
    import warnings
    from concurrent.futures import ThreadPoolExecutor
    warnings.filterwarnings("ignore", message=".*non-interactive.*")
    folder, results = Path(workdir), []
    with unrecorded():          # (the shell's own reading: its settings, the variables it asks for)
        runner = _NotebookCells(folder, script) if display == "jupyter" else _ScriptCells(script)
        from . import glue          # (myst-nb's glue, for a notebook that calls it)
        glue.install()
    # Figures are re-encoded in threads while the next cells run (Pillow and zlib
    # release the GIL), from a snapshot of their bytes: a file the lab writes
    # again later is re-encoded again at the end.
    threads, encoding = ThreadPoolExecutor(2), {}

    def failed(error: dict) -> dict:
        threads.shutdown(cancel_futures=True)
        return {"cells": results, "error": error}
    index = 0
    while index < len(cells):
        cell = cells[index]
        before = _stamps(folder)
        stdout, value, outputs, exc = runner.run(cell)
        error = None
        if exc is not None:     # an error a cell is meant to show is shown; any other fails the lab
            if isinstance(exc, Exception) and (cell.raises or cell.may_fail):     # (never SystemExit)
                error = runner.shown(exc)
            else:
                return failed(runner.failure(exc, confined, cell))
        if cell.raises and error is None:
            return failed({"line": cell.first_line - 1, "trace": "", "message":
                           f"{'' if cell.number else 'cell '}{cell.label} is tagged {RAISES} but raised nothing: make it raise the error "
                           "it is meant to show, or remove the tag"})
        after = _stamps(folder)
        wrote = sorted(p for p, stamp in after.items() if before.get(p) != stamp)
        figures = [p for p in wrote if p.endswith(".png")]
        if outputs is not None:         # in the order the cell showed them; then the ones it saved itself
            shown = figure_outputs(outputs)
            figures = [p for p in shown if p.endswith(".png")] + [p for p in figures if p not in shown]
        results.append({"name": cell.name, "stdout": stdout, "figures": figures, "wrote": wrote,
                        "value": value, "error": error, **({"outputs": outputs} if outputs is not None else {})})
        for name in figures:
            data = (folder / name).read_bytes()
            encoding[name] = (data, threads.submit(_quantized, data))
        index += 1
        if checkpoints is not None and index < len(cells):
            from concurrent.futures import wait
            wait([future for _, future in encoding.values()])      # the harness's threads settled
            resumed = checkpoints.after(index, len(threads._threads))
            if resumed is not None:         # a run resumed from it: the threads were not forked
                cells, threads = resumed, ThreadPoolExecutor(2)
    if not any(p.relative_to(folder).parts[0] != "inputs" for p in _files(folder, RESULTS)):
        # A notebook rarely writes a results.json: its own top-level values are its results.
        glued = getattr(sys.modules.get(f"{__package__}.glue"), "GLUED", {})     # (myst-nb's way: labs/glue.py)
        (folder / RESULTS).write_text(json.dumps(namespace_results({**runner.namespace, **glued}, runner.hidden), indent=1),
                                      encoding="utf-8")
    if cells_done:
        cells_done()
    if not finish:
        threads.shutdown(cancel_futures=True)
        return {"cells": results, "error": None}
    files = _files(folder)
    for path in files:                  # first what needs no figure, while the last ones are encoded
        if path.suffix.lower() == ".svg":
            try:
                path.write_bytes(inert_svg(path.read_bytes()))
            except ValueError as exc:
                return failed({"line": 0, "trace": "", "message": f"{path.name}: {exc}"})
        if path.suffix == ".npz":
            _normalize_zip(path)
            bad = _non_finite_arrays(path)
            if bad:
                return failed({"line": 0, "trace": "", "message":
                               f"non-finite values (NaN or inf) in {path.name}: {', '.join(bad)}"})
    for path in files:
        if path.suffix == ".png":
            data = path.read_bytes()
            snapshot, future = encoding.get(str(path.relative_to(folder)), (None, None))
            path.write_bytes(future.result() if snapshot == data else _quantized(data))
    threads.shutdown()
    return {"cells": results, "error": None}


# -- a lab's results, when it writes none ----------------------------------------

RESULTS = "results.json"
MAX_ITEMS = 100_000     # an array or list larger than this is data for a download, not a value to quote


class _NotPlain(Exception):
    pass


def namespace_results(namespace: dict, hidden=()) -> dict:
    """The top-level names a page may quote, as JSON: numbers, strings, booleans, NumPy scalars and
    numeric arrays, and lists, tuples and dicts of those; names starting with '_', IPython's own
    (`hidden`: In, Out, exit, ...), and everything else (modules, functions, figures, data frames,
    NaN), left out."""
    found = {}
    for name, value in namespace.items():
        if name.startswith("_") or name in hidden:
            continue
        try:
            found[name] = _plain(value, 0)
        except (_NotPlain, RecursionError):
            continue
    return found


def _plain(value, depth: int):
    if depth > 20:
        raise _NotPlain
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _NotPlain
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic):
        return _plain(value.item(), depth + 1)
    if numpy is not None and isinstance(value, numpy.ndarray):
        if value.size > MAX_ITEMS or not (numpy.issubdtype(value.dtype, numpy.number) or value.dtype == bool) \
                or numpy.iscomplexobj(value):
            raise _NotPlain
        return _plain(value.tolist(), depth + 1)
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_ITEMS:
            raise _NotPlain
        return [_plain(item, depth + 1) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value) and len(value) <= MAX_ITEMS:
        return {key: _plain(item, depth + 1) for key, item in value.items()}
    raise _NotPlain


def _non_finite_arrays(path: Path) -> list[str]:
    """Names of the numeric arrays in an .npz that hold NaN or inf (NumPy is loaded here)."""
    import numpy as np
    with np.load(path) as data:
        return [name for name in data.files
                if np.issubdtype(data[name].dtype, np.number) and not np.isfinite(data[name]).all()]


LAB_BACKEND = "module://sitegen.labs.labbackend"      # Agg, with fast intermediate PNGs


def host_setup() -> None:
    """In the lab host, once: what every lab forked from it finds done. The libraries a lab imports
    are imported there before it is forked (warm.py).

    Each lab still gets a process of its own (forked from this clean state),
    so no lab sees another's global state: the bytes do not depend on which
    labs share a worker or run in parallel.
    """
    os.environ["MPLBACKEND"] = LAB_BACKEND
    import platform
    platform.platform()     # cached for every lab: it runs `uname -p` once, a process no lab then starts


# -- normalising what a lab wrote ----------------------------------------------

def _quantized(data: bytes) -> bytes:
    """The PNG re-encoded with 256 colours and without text chunks (no version strings).

    Plots have few colours: this is about a third of matplotlib's size and
    looks the same. Opaque figures use median cut (octree is several times
    faster but bands colour bars); ones with transparency keep it. zlib level 6:
    level 9 would be 7% smaller and cost 80 ms more per lab.
    """
    from PIL import Image
    with Image.open(io.BytesIO(data)) as image:
        image.load()
    if image.mode == "RGBA" and image.getextrema()[3][0] == 255:
        image = _median_cut(image)
    elif image.mode == "RGB":
        image = image.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    elif image.mode == "RGBA":
        image = image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=6)
    return out.getvalue()


def _median_cut(image):
    """An opaque RGBA figure in 256 colours: its background colour kept exactly,
    the other 255 chosen by median cut among the pixels that are not background.

    Most of a plot is background; leaving it out of the median cut makes it two
    to six times faster (it is the part of a lab the build adds, and runs for
    every figure), and spends all 255 other colours on what is drawn.
    """
    import numpy as np
    from PIL import Image
    rgba = np.asarray(image)
    pixels = rgba.view(np.uint32)[..., 0]                       # one 32-bit word per RGBA pixel
    drawn = pixels != pixels[0, 0]                              # a figure's corner is its face colour
    if not drawn.any():
        return image.convert("RGB").quantize(1)
    colours = np.ascontiguousarray(pixels[drawn].view(np.uint8).reshape(1, -1, 4)[..., :3])
    strip = Image.fromarray(colours, "RGB").quantize(255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    index = np.full(pixels.shape, 255, dtype=np.uint8)
    index[drawn] = np.asarray(strip)[0]
    palette = strip.getpalette()[:255 * 3]
    result = Image.fromarray(index, "P")
    result.putpalette(palette + [0] * (255 * 3 - len(palette)) + rgba[0, 0, :3].tolist())
    return result


def _normalize_zip(path: Path) -> None:
    """Rewrite a zip (.npz) with fixed member times so equal data gives equal bytes."""
    import zipfile
    with zipfile.ZipFile(path) as source:
        members = [(info.filename, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w") as target:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            target.writestr(info, data, compresslevel=9)
