"""What a lab read of the project: recorded as it ran, checked before its results are reused.

A lab's script may open a data file beside it, import a module of its own
(relatively, inside a package, through a package's `__init__`), or list a
folder of data: no list written by hand can know which. So the lab's process
records it, as a compiler writes a depfile: an audit hook (PEP 578) sees every
file opened (imports included: the import system opens the module's source or
its cached bytecode) and every folder listed, and keeps those inside the
project, each with what it held at that moment: a file's SHA-256, a folder's
sorted names, or that it was absent. Files outside the project are not
recorded: the standard library's are the interpreter's, in the lab's key, and
of installed packages the lab's process says which it imported
(`imported_packages`), each kept with its distribution's version (`INSTALLED`):
a lab that imports SciPy runs again when SciPy is upgraded, one that does not
does not.

The build reuses a lab's results (its cache entry, a frozen lab, the lab plan)
only while every file and folder it read is as it was (`stale`), and stores a
fresh run only if what it read is what the build's snapshot held when it
started: an edit made while the lab ran is never published under the old key.

Imported in the lab's process before anything else of the lab, and in the
build's: the standard library, sources.py's names and installed.py only.
"""
from __future__ import annotations

import os
import stat
import sys

from ..core import installed
from ..core.sources import SKIPPED      # left out of a folder's listing, as the build's snapshot leaves them
from ..core.stored import sha256_of

ABSENT = "absent"                # what a read found where no file was
LISTING = "list:"               # a folder's record: LISTING + the SHA-256 of its sorted names
# A read of an installed distribution: INSTALLED + its normalised name -> its version (no project
# path begins with a slash: a Recorder's keys are relative).
INSTALLED = "/installed/"
# An environment variable the lab read: ENVIRON + its name -> the SHA-256 of its value, or ABSENT, or
# HIDDEN where the lab may not see it (sandbox.lab_environment): no value of it can change the lab.
ENVIRON, HIDDEN = "/environ/", "hidden"
# A lab whose reading is not all seen (it started a process, whose reads this process does not see):
# PROJECT -> what it did, in its process; the build keys it on every source (project_digest).
PROJECT = "/project/"
# The audit events of a lab that starts another process; of one that opens a database or a native
# library: the file it names (sqlite reads it, and a library's code runs, in C: no `open` is seen).
STARTS_A_PROCESS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                    "os.forkpty"}
NAMES_A_FILE = {"sqlite3.connect", "ctypes.dlopen"}
# Set by the harness, not the build's: never what makes a lab's results differ.
HARNESS_VARIABLES = {"HOME", "TMPDIR", "MPLBACKEND", "PYTHONHASHSEED"}


def file_record(path: str) -> str:
    """What a lab found at `path`: its SHA-256, a folder's listing, ABSENT, or what else it is (a pipe, a
    device: never read, for the build reads what a lab names, and a lab may name one to hang it on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return ABSENT
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        return listing_record(path) if stat.S_ISDIR(mode) else f"{SPECIAL}{stat.S_IFMT(mode):o}"
    with os.fdopen(fd, "rb") as handle:
        try:
            return sha256_of(handle.read())
        except OSError:
            return ABSENT


SPECIAL = "special:"       # (a file_record of what is no file nor folder: its kind)


def environ_record(value: str | None) -> str:
    return ABSENT if value is None else sha256_of(value.encode("utf-8", "surrogateescape"))


def project_digest(snapshot: dict[str, str]) -> str:
    """Every source of the course as the build's snapshot holds it: what a lab whose reading is not
    all seen (PROJECT) is keyed on; "" without a snapshot (nothing then holds it as it was)."""
    if not snapshot:
        return ""
    return sha256_of("\0".join(f"{rel}\0{seen}" for rel, seen in sorted(snapshot.items())).encode())


def listing_record(path: str) -> str:
    try:
        names = sorted(name for name in os.listdir(path) if name not in SKIPPED)
    except OSError:
        return ABSENT
    return LISTING + sha256_of("\0".join(names).encode("utf-8", "surrogateescape"))


def _real(path: str) -> str:
    """os.path.realpath(path), told by the kernel where the path exists (Linux: a stat of each of its
    parts in Python, looked at in its turn, cost a lab 0.1-0.2 s for the modules a traceback asks)."""
    try:
        handle = os.open(path, _O_PATH | os.O_CLOEXEC) if _O_PATH else None
    except OSError:
        handle = None
    if handle is None:
        return os.path.realpath(path)
    try:
        real = os.readlink(f"/proc/self/fd/{handle}")
    except OSError:
        real = ""
    finally:
        os.close(handle)
    return real if real.startswith("/") and not real.endswith(" (deleted)") else os.path.realpath(path)


_O_PATH = getattr(os, "O_PATH", 0)
_PAUSED = [0]          # while above 0, the harness itself is looking (labrun's snapshots of the lab's folder)


class unrecorded:
    """`with unrecorded():` what the harness reads is not the lab's reading."""

    def __enter__(self):
        _PAUSED[0] += 1

    def __exit__(self, *exc):
        _PAUSED[0] -= 1


class Recorder:
    """Installed in a lab's process (`install`): every file under `root` it opens for reading and
    every folder it lists there, not under `ignored` (its own working folder, the cache), by path
    relative to `root`, with what it held when first read (`reads`)."""

    def __init__(self, root: str, ignored: tuple[str, ...], mirrors: dict[str, str] | None = None,
                 provided: tuple[str, ...] = ()):
        """`mirrors`: folders laid out to stand for the project's (nbsource.lay_folder): a listing of
        one is the listing of the folder it stands for. `provided`: files the build laid in the lab's
        folder (its inputs, its data files): which of them it opened is kept too (`used`)."""
        self.root = os.path.realpath(root) + os.sep
        # (and a virtualenv inside the project, .venv/: the packages it imported are kept by version)
        prefix = os.path.realpath(sys.prefix) + os.sep
        inside = (prefix,) if prefix.startswith(self.root) and prefix != self.root else ()
        self.ignored = tuple(os.path.realpath(folder) + os.sep for folder in ignored) + inside
        self.mirrors = {os.path.realpath(k): os.path.realpath(v) for k, v in (mirrors or {}).items()}
        self.provided = {os.path.realpath(path): path for path in provided}
        self.reads: dict[str, str] = {}
        self.used: set[str] = set()
        self.busy = False
        # Absolute paths that lead outside the project, neither through (no "..") nor into a folder the
        # lab may write (the ignored ones): they are not looked at again. Formatting a traceback asks for the
        # real path of every module's file, and each step of that was a stat looked at in its turn
        # (0.3-0.4 s of a pandas notebook's 0.9 s).
        self.elsewhere: set[str] = set()
        self.declared: tuple[str, ...] = ()    # variables site.yaml's lab_access lets it see (HIDDEN else)
        self.set: set[str] = set()             # variables the lab set or removed: its own, not the build's

    def install(self) -> "Recorder":
        """Record from now on: every open and listing (an audit hook), every stat (os.stat, os.lstat:
        Path.exists and os.path.isfile ask them), every variable read of os.environ."""
        sys.addaudithook(self._hook)
        for name in ("stat", "lstat"):
            setattr(os, name, self._stat(getattr(os, name)))
        environ = object.__new__(_RecordedEnviron)
        environ.__dict__.update(os.environ.__dict__, recorder=self)     # the same variables, read through us
        os.environ = environ
        return self

    def _stat(self, stat):
        def recorded(path, *args, **kwargs):
            try:
                return stat(path, *args, **kwargs)
            finally:                                  # (a stat that fails read ABSENT)
                self._looked_at(path)
        recorded.__wrapped__ = stat
        return recorded

    def _looked_at(self, path) -> None:
        if self.busy or _PAUSED[0] or isinstance(path, int):
            return
        path = os.fsdecode(os.fspath(path))
        if path in self.elsewhere:
            return
        self.busy = True
        try:
            real = _real(path)
            self._seen(real, listing=False)
            if os.path.isabs(path) and ".." not in path.split(os.sep) \
                    and not (path + os.sep).startswith((self.root, *self.ignored)) \
                    and not (real + os.sep).startswith((self.root, *self.ignored)):
                self.elsewhere.add(path)
        finally:
            self.busy = False

    def variable(self, name: str, value: str | None) -> None:
        """The lab read environment variable `name` (None: not set), which it did not set itself."""
        key = ENVIRON + name
        if self.busy or _PAUSED[0] or name in HARNESS_VARIABLES or name in self.set or key in self.reads:
            return
        from .sandbox import visible
        self.reads[key] = environ_record(value) if visible(name, self.declared) else HIDDEN

    def _hook(self, event: str, args: tuple) -> None:
        if self.busy or _PAUSED[0]:
            return
        if event in STARTS_A_PROCESS:
            self.reads.setdefault(PROJECT, event)
            return
        if event in NAMES_A_FILE:
            if args and isinstance(args[0], (str, bytes)) and os.sep in os.fsdecode(args[0]):
                self._looked_at(args[0])
            return
        if event not in ("open", "os.listdir", "os.scandir"):
            return
        if event != "open" and sys._getframe(1).f_code.co_filename.startswith("<frozen importlib"):
            return      # the import system's look at a folder of sys.path: what it imports is opened
        path = args[0] if args else None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):       # a file descriptor, or os.listdir() of the working folder
            path = "." if path is None and event != "open" else None
            if path is None:
                return
        if event == "open":
            mode, flags = args[1], args[2]
            if (mode and any(c in mode for c in "wax+")) or (not mode and flags & (os.O_WRONLY | os.O_RDWR)):
                self.busy = True            # (its look at the link is no read)
                try:
                    self._written(path)
                finally:
                    self.busy = False
                return                      # a write: the sandbox keeps it in the lab's own folder
        self.busy = True
        try:
            self._seen(os.path.realpath(path), listing=event != "open")
        finally:
            self.busy = False

    def _written(self, path: str) -> None:
        """A file the lab writes where a link to the project's file lies (a notebook's neighbour, laid
        beside it): the link goes, and the lab writes its own file there, as in Jupyter it would
        write over the one in its folder; the project's is never touched."""
        absolute = os.path.abspath(path)
        if self.mirrors and os.path.realpath(os.path.dirname(absolute)) in self.mirrors and os.path.islink(absolute):
            os.unlink(absolute)

    def _seen(self, real: str, listing: bool) -> None:
        if real in self.provided:
            self.used.add(self.provided[real])
        if listing and real in self.mirrors:
            real = self.mirrors[real]
        if not real.startswith(self.root) or (real + os.sep).startswith(self.ignored):
            return                  # (the ignored folders themselves too: a stat of the cache is no read)
        if real.endswith(".pyc") and f"{os.sep}__pycache__{os.sep}" in real:
            import importlib.util        # an import that found its cached bytecode: the source it stands for
            try:
                real = importlib.util.source_from_cache(real)
            except ValueError:
                pass
        rel = real[len(self.root):].replace(os.sep, "/")
        if rel.startswith(".") or "/." in rel:
            return                  # hidden (.git/, .env): no lab may read it (sandbox.py), nor is it a source
        key = rel + "/" if listing else rel
        if key not in self.reads:
            self.reads[key] = listing_record(real) if listing else file_record(real)


class _RecordedEnviron(type(os.environ)):
    """os.environ in a lab's process: each variable read is recorded (Recorder.variable)."""

    def __getitem__(self, key):
        try:
            value = super().__getitem__(key)
        except KeyError:
            self.recorder.variable(key, None)
            raise
        self.recorder.variable(key, value)
        return value

    def __setitem__(self, key, value):
        if not _PAUSED[0]:
            self.recorder.set.add(key)
        super().__setitem__(key, value)

    def __delitem__(self, key):
        if not _PAUSED[0]:
            self.recorder.set.add(key)
        super().__delitem__(key)


class BuildRecorder(Recorder):
    """The build process's own reading of the project: every file it opens under `root` that is not
    one of its sources (`known`, relative paths), nor under `ignored` (its cache, its output and
    staging folders, the generator's own files). A source the build reads is in
    its snapshot; what else it reads (a file that requirements.txt includes with `-r`) is found here,
    not in a list of what the build may read, and kept with what the labs read (pipeline).
    Folders it lists are not kept: the sources' own (the snapshot's) are the only ones it walks."""

    def __init__(self, root: str, ignored: tuple[str, ...], known):
        super().__init__(root, ignored)
        self.known = known

    def _hook(self, event: str, args: tuple) -> None:
        if event != "open":
            return
        path = args[0] if args else None
        # The build's own paths are absolute, from the project's folder (a relative one is a name in
        # a folder opened by descriptor: shutil.rmtree's), and mostly a source's: known without a realpath.
        if not isinstance(path, str) or not path.startswith(self.root) or path.startswith(self.ignored) \
                or path[len(self.root):] in self.known:
            return
        super()._hook(event, args)


_RECORDING: list = [None]         # the build recorder now on in this process (one audit hook serves all)


def _dispatch(event: str, args: tuple) -> None:
    recorder = _RECORDING[0]
    if recorder is not None:
        recorder._hook(event, args)


class recording:
    """`with recording(BuildRecorder(...)):` the build process's reads are kept while it builds. An
    audit hook stays for good, so one is installed per process, and handed the recorder of the build
    now running (none in a process forked meanwhile: a lab host is not the build)."""
    installed = False

    def __init__(self, recorder: BuildRecorder):
        self.recorder = recorder

    def __enter__(self) -> BuildRecorder:
        if not recording.installed:
            sys.addaudithook(_dispatch)
            os.register_at_fork(after_in_child=lambda: _RECORDING.__setitem__(0, None))
            recording.installed = True
        _RECORDING[0] = self.recorder
        return self.recorder

    def __exit__(self, *exc) -> None:
        _RECORDING[0] = None


def current(root: str, rel: str, snapshot: dict[str, str]) -> str:
    """What `rel` (a Recorder's key) holds now: as the build's `snapshot` took it when it
    is a source, else read now."""
    if rel.endswith("/"):
        return listing_record(os.path.join(root, rel[:-1]))
    found = snapshot.get(rel)
    return found if found is not None else file_record(os.path.join(root, rel))


def stale(root, reads: dict[str, str], snapshot: dict[str, str], versions: dict[str, str] | None = None) -> list[str]:
    """The files and folders among `reads` that no longer hold what the lab read, and the installed
    distributions it imported that are not at the version it ran with (`versions`: as
    installed.versions() gave them, for a caller that asks of many labs; else read here)."""
    root = str(root)
    found = []
    for rel, seen in reads.items():
        if rel.startswith(INSTALLED):
            versions = installed.versions() if versions is None else versions
            now = versions.get(rel[len(INSTALLED):], ABSENT)
        elif rel.startswith(ENVIRON):
            now = seen if seen == HIDDEN else environ_record(os.environ.get(rel[len(ENVIRON):]))
        elif rel == PROJECT:
            now = project_digest(snapshot)
        else:
            now = current(root, rel, snapshot)
        if now != seen:
            found.append(rel)
    return sorted(found)


def imported_packages(root: str) -> list[str]:
    """In a lab's process, once it ran: the top-level modules it has imported from anywhere but the
    standard library, the project (whose files it read are recorded) and the generator (the
    harness, in the lab's key). The build finds their distributions (`installed_reads`)."""
    import sysconfig
    paths = sysconfig.get_paths()
    stdlib = tuple({paths["stdlib"] + os.sep, paths["platstdlib"] + os.sep})
    project = os.path.realpath(root) + os.sep
    own = __name__.partition(".")[0]
    found = set()
    for name, module in list(sys.modules.items()):
        top = name.partition(".")[0]
        file = getattr(module, "__file__", None)
        if top in found or top == own or not isinstance(file, str):
            continue
        packaged = f"{os.sep}site-packages{os.sep}" in file or f"{os.sep}dist-packages{os.sep}" in file
        if packaged or not (file.startswith(stdlib) or os.path.realpath(file).startswith(project)):
            found.add(top)
    return sorted(found)


def installed_reads(modules) -> dict[str, str]:
    """The reads that stand for these top-level modules (imported_packages): each distribution
    that provides one, with its version now."""
    versions = installed.versions()
    return {INSTALLED + dist: versions[dist] for dist in sorted(set(installed.providers(modules).values()))}


def portable_reads(reads: dict[str, str]) -> dict[str, str]:
    """What of a lab's reads a frozen lab keeps (freeze.py): the project's files it read, not what holds
    whatever the machine that builds has (installed versions, environment variables)."""
    return {rel: seen for rel, seen in reads.items() if not rel.startswith((INSTALLED, ENVIRON, PROJECT))}


def archived_reads(art, root, snapshot: dict[str, str]) -> list[str]:
    """What a notebook page's archive holds beside the notebook (render/archive.py): the course files its
    run read; none for a script lab, which has no archive. One answer for the page and the files."""
    from ..project.nbsource import runs_as_notebook     # (not at the top: a build with nothing to do reads this module)
    if not runs_as_notebook(art.lab.script):
        return []
    return project_files_read(art.reads or {}, art.lab.script.relative_to(root).as_posix(), snapshot)


def project_files_read(reads: dict, besides: str, snapshot: dict[str, str]) -> list[str]:
    """The course's own files (`snapshot`: the build's of its sources) among a run's `reads`,
    other than `besides` (the notebook itself), none hidden or under a hidden folder: what a student's
    rerun needs beside the notebook (render/archive.py)."""
    return sorted(rel for rel in reads if rel in snapshot and rel != besides
                  and not any(part.startswith(".") for part in rel.split("/")))
