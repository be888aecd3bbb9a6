"""Checkpoints, inside a lab's process under `serve`: the lab as it was after each cell, kept.

After cell k (every cell but the last), the lab's process forks. The child is
the checkpoint: it holds, copy-on-write, the lab's memory as it was then (its
variables, imported modules, IPython's shell), and in memory what the lab had
written in its folder, and it waits. The lab's process goes on to cell k+1.
The lab host (labhost.py) keeps each checkpoint's socket; to run the same lab
with cells k+1 onward changed, it sends the checkpoint the new cells and where
to report, and the checkpoint forks again: that child lays what the lab had
written back into the lab's folder (which the build has laid out anew, at the
same path) and returns into the loop of labrun.run_cells, which goes on from
cell k+1 as if it had never stopped. The checkpoint itself stays, for the next
edit.

A checkpoint is taken only when it is safe to fork: the figures the harness
encodes in threads are done first, and none is taken while the lab runs
threads or processes of its own (they would not be in the copy); serve says so.

What a checkpoint holds is told to the build in the run's result
(`checkpoints`): after which cell, its process, and what the lab had read by
then (labreads.py), so that the build resumes only where all of that is as it
is now (resume.py).
"""
from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import struct
import threading
import time
from pathlib import Path
from .labreads import unrecorded

_HEADER = struct.Struct("=Q")
INPUTS_READY = b"i"     # what a lab's process writes to its pipe once its results.json is final
# A checkpoint is a fork held until the next run: worth it where the cells before it took longer than
# taking and holding it. The first FREE are taken after every cell (a lab of a few cells resumes at
# its last); past them, one only after WORTH seconds of cells since the last: a notebook of a
# thousand quick cells holds a few dozen, not a thousand.
FREE, WORTH = 8, 0.05

# What a lab's process, or a checkpoint, tells the host: one record of a fixed size, which the host
# reads field by field and checks (labhost.py): it unpickles, evaluates and trusts nothing a lab sends,
# for code a notebook runs may write anything on these sockets. (kind, a cell, a value)
RECORD = struct.Struct("=4sqq")
CHECKPOINT = b"ckpt"    # after a cell, the pid of the checkpoint taken, with its socket: the run's
KEPT = b"kept"          # the host's answer to CHECKPOINT and STARTED: it holds that process (for which the
                        # run or the checkpoint waits: while it is its parent, the host can check it is)
MEASURE = b"meas"       # the memory the lab's checkpoints take, please: the run's
MEASURED = b"msrd"      # that memory in bytes: the host's answer
STARTED = b"strt"       # the pid of the run resumed from here: the checkpoint's answer to a run
REFUSED = b"rfsd"       # no run from here (the lab's folder is not the one it was): the checkpoint's answer
EXITED = b"exit"        # how the run it resumed ended (its exit code): the checkpoint's, once it has


def tell(sock: socket.socket, kind: bytes, cell: int = 0, value: int = 0, fds: tuple[int, ...] = ()) -> None:
    """One record (RECORD), with file descriptors, in one message."""
    socket.send_fds(sock, [RECORD.pack(kind, cell, value)], list(fds))


def heard(sock: socket.socket, fds: int = 0) -> tuple[bytes, int, int, list[int]] | None:
    """(kind, cell, value, file descriptors) of one record; None at the end of file or for anything
    that is not one whole record (the descriptors that came with it are closed)."""
    data, received, _, _ = socket.recv_fds(sock, RECORD.size, fds)
    if len(data) != RECORD.size:
        for fd in received:
            os.close(fd)
        return None
    kind, cell, value = RECORD.unpack(data)
    return kind, cell, value, received


def send_run(sock: socket.socket, message, fds: tuple[int, ...] = ()) -> None:
    """The host's run for a checkpoint (pickled: only ever from the host to a lab), with file
    descriptors, over a Unix socket."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    socket.send_fds(sock, [_HEADER.pack(len(data))], list(fds))
    sock.sendall(data)


def receive_run(sock: socket.socket, fds: int = 0):
    """(message, file descriptors) from `send_run`, in a checkpoint; (None, []) once the other end is
    closed."""
    header, received, _, _ = socket.recv_fds(sock, _HEADER.size, fds)
    if len(header) < _HEADER.size:
        return None, []
    (size,), chunks = _HEADER.unpack(header), []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            return None, received
        chunks.append(chunk)
        size -= len(chunk)
    return pickle.loads(b"".join(chunks)), received


class Reporting:
    """Where a run reports (the host's ends): its result file, its announce pipe, its control socket,
    the one a checkpoint registers on. A resumed run gets new ones."""

    def __init__(self, result: str, announce_fd: int | None, control_fd: int | None):
        self.reset(result, announce_fd, control_fd)

    def reset(self, result: str, announce_fd: int | None, control_fd: int | None) -> None:
        self.result, self.announce_fd = result, announce_fd
        self.control = socket.socket(fileno=control_fd) if control_fd is not None else None

    def announce(self) -> None:
        if self.announce_fd is not None:
            os.write(self.announce_fd, INPUTS_READY)

    def close(self) -> None:
        if self.announce_fd is not None:
            os.close(self.announce_fd)
        if self.control is not None:
            self.control.close()


class Checkpointer:
    """Takes the checkpoints of one lab's run (`after`), and is what a resumed run continues with."""

    def __init__(self, reporting: Reporting, staging: Path, writable: str, recorder, budget: int):
        self.reporting, self.staging, self.recorder, self.budget = reporting, staging, recorder, budget
        self.writable, self.inode = writable, os.stat(writable).st_ino
        self.start = _state(staging)           # the folder as the build laid it out
        self.kept: dict[tuple[str, int, int], bytes] = {}    # file state -> its bytes, read once
        self.taken: list[dict] = []            # what the build is told of each checkpoint
        self.skipped = ""                      # why none was taken after some cell
        self.resumed = 0                       # in a resumed run: the cell it resumed after
        self.dropped = 0                       # its oldest, ended while it ran to stay within `budget`
        self.since = time.monotonic()          # when the last checkpoint was taken (or the run started)
        # What the process was given open (the build's stdout sent to a file of the course): not the
        # lab's own, and no offset of its own that a resumed run would share.
        self.inherited = set(_descriptors().items())

    def after(self, k: int, harness_threads: int):
        """Cell k is done: fork a checkpoint, where it is worth one (FREE, WORTH). Returns None in the
        lab's process, which goes on; in a resumed run (a child of the checkpoint), the new cells to run
        from k on."""
        if len(self.taken) >= FREE and time.monotonic() - self.since < WORTH:
            return None
        if threading.active_count() > 1 + harness_threads:
            self.skipped = f"no checkpoint after cell {k}: the lab runs threads of its own"
            return None
        if children() - {point["pid"] for point in self.taken}:
            self.skipped = f"no checkpoint after cell {k}: the lab runs processes of its own"
            return None
        if held := self._open_files():
            # A fork shares each open file's offset with the run it is taken from: a run resumed from it
            # would read on, or write over, where the first run left it.
            self.skipped = f"no checkpoint after cell {k}: the lab holds {held[0]} open"
            return None
        self._bound()
        files, folders, gone = self._written()
        here = os.getcwd()
        point = {"after": k, "reads": dict(self.recorder.reads) if self.recorder else {},
                 "provided": sorted(self.recorder.used) if self.recorder else []}
        ours, theirs = socket.socketpair()
        with unrecorded():              # (the harness's fork: no process of the lab's)
            pid = os.fork()
        if pid:
            theirs.close()
            try:
                tell(self.reporting.control, CHECKPOINT, k, pid, (ours.fileno(),))
                answer = heard(self.reporting.control)
                if answer is None or answer[:3] != (KEPT, k, pid):
                    raise ConnectionError
            except OSError:             # the host ended the channel: the lab wrote on it what it may not
                ours.close()
                self._end(pid)
                self.skipped = (f"no checkpoint after cell {k}: the lab wrote on the harness's channel to the "
                                "build, which the build then closed")
                return None
            ours.close()
            self.taken.append({**point, "pid": pid})
            self.since = time.monotonic()
            return None
        self.taken.append({**point, "pid": os.getpid()})
        ours.close()
        self.reporting.close()           # the run's ends: the host must hear when the run ends
        os.setsid()                      # stopping a run it resumes does not stop it
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        return self._wait(theirs, k, (files, folders, gone, here))

    def _open_files(self) -> list[str]:
        """The files of the project or of the lab's folder that the lab opened and holds open (Linux)."""
        roots = tuple(os.path.realpath(folder) + os.sep for folder in
                      (self.writable, *((self.recorder.root,) if self.recorder else ())))
        return sorted(os.path.basename(target) for fd, target in _descriptors().items()
                      if target.startswith(roots) and (fd, target) not in self.inherited)

    def _bound(self) -> None:
        """While this run's checkpoints take more than the budget (their pages part from the lab's as
        it goes on), end the oldest: a lab that rewrites large arrays cell after cell stays bounded
        while it runs, not only once the build is over (resume.py drops the oldest of all labs)."""
        while self.taken and self._measured([point["pid"] for point in self.taken]) > self.budget:
            self._end(self.taken.pop(0)["pid"])
            self.dropped += 1

    @staticmethod
    def _end(pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    def _measured(self, pids: list[int]) -> int:
        """The memory these checkpoints take, as the host measures it (those it holds of this lab):
        confined, the lab may read only its own /proc folder (sandbox.py)."""
        if self.reporting.control is None:
            return sum(pss(pid) for pid in pids)
        try:
            tell(self.reporting.control, MEASURE)
            answer = heard(self.reporting.control)
        except OSError:                 # (the host ended the channel: see after)
            answer = None
        return answer[2] if answer is not None and answer[0] == MEASURED else 0

    def _wait(self, sock: socket.socket, k: int, written: tuple):
        while True:
            run, fds = receive_run(sock, 2)     # the run to resume from here (a LabRun)
            if run is None:                 # the host dropped it, or ended
                os._exit(0)
            if _inode(self.writable) != self.inode:     # its confinement no longer covers the lab's folder
                for fd in fds:
                    os.close(fd)
                with contextlib.suppress(OSError):
                    tell(sock, REFUSED)
                continue
            with unrecorded():
                pid = os.fork()
            if pid == 0:
                sock.close()
                os.setsid()
                self.reporting.reset(run.result, *fds)
                self.taken, self.resumed = [c for c in self.taken if c["after"] <= k], k
                self.since = time.monotonic()
                with unrecorded():
                    self._lay(*written)
                return run.cells
            for fd in fds:
                os.close(fd)
            with contextlib.suppress(OSError):
                tell(sock, STARTED, k, pid)
                heard(sock)             # (the host's KEPT: it checked the run is this one's child, which it
            _, status = os.waitpid(pid, 0)      # is till then)
            with contextlib.suppress(OSError):
                tell(sock, EXITED, k, os.waitstatus_to_exitcode(status))

    def _written(self) -> tuple[dict[str, bytes], list[str], list[str]]:
        """What the lab changed in its folder since the build laid it out: files with their bytes,
        folders it made, and what it removed."""
        now = _state(self.staging)
        files = {}
        for rel, stamp in now.items():
            if stamp is None:
                continue
            if self.start.get(rel) != stamp:
                if (rel, *stamp) not in self.kept:
                    self.kept[(rel, *stamp)] = (self.staging / rel).read_bytes()
                files[rel] = self.kept[(rel, *stamp)]
        folders = [rel for rel, stamp in now.items() if stamp is None and rel not in self.start]
        gone = [rel for rel in self.start if rel not in now]
        return files, sorted(folders), sorted(gone, reverse=True)

    def _lay(self, files: dict[str, bytes], folders: list[str], gone: list[str], here: str) -> None:
        """Make the newly laid-out folder what the lab's was when the checkpoint was taken, and work
        there again (the folder it worked in was moved into the cache)."""
        import shutil
        for rel in gone:
            path = self.staging / rel
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
        for rel in folders:
            (self.staging / rel).mkdir(parents=True, exist_ok=True)
        for rel, data in files.items():
            path = self.staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink():
                path.unlink()
            path.write_bytes(data)
        os.chdir(here)


def _descriptors() -> dict[str, str]:
    """This process's open file descriptors -> what each is open on (Linux; elsewhere none)."""
    found = {}
    with contextlib.suppress(OSError):
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                found[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return found


def pss(pid: int) -> int:
    """A process's proportional set size in bytes (Linux): its own pages, and its share of those
    it shares; 0 where it cannot be read (ended, or not Linux)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def children() -> set[int]:
    """The processes this one started and that still run (Linux; elsewhere none are seen)."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                found.update(int(pid) for pid in handle.read().split())
    except OSError:
        pass
    return found


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _state(folder: Path) -> dict[str, tuple[int, int] | None]:
    """Every file (its modification time and size) and folder (None) under `folder`; links as
    files of their own (a notebook's neighbours are links the build lays)."""
    found: dict[str, tuple[int, int] | None] = {}
    with unrecorded():
        for top, dirs, names in os.walk(folder):
            for name in dirs + names:
                path = os.path.join(top, name)
                rel = os.path.relpath(path, folder)
                if name in dirs and not os.path.islink(path):
                    found[rel] = None
                else:
                    stat = os.lstat(path)
                    found[rel] = (stat.st_mtime_ns, stat.st_size) if not os.path.islink(path) else (0, -1)
    return found
