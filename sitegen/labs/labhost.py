"""The lab host: a program that imports what labs use once, then forks a fresh process per lab.
The build starts it (`python -c`, with the build's sys.path and environment, string hashing fixed),
and talks to it over one socket: it holds nothing else of the build's.

The build starts it as soon as it knows something changed, so NumPy and
Matplotlib are imported while the build reads its configuration and works
out which labs must run; it is stopped at once when none must. The build
itself never imports what labs use.

Each lab's process starts a session of its own (so its process group holds
the lab and anything it starts, and the terminal's Ctrl-C reaches only the
build), and holds the write end of a pipe that it closes once its result is
written: the build hears of it before the process has torn itself down.
Before that, it writes one byte to the pipe once its cells have all run and
its results.json is final, so labs reading it can start. The
host stops a lab's whole process group when the build asks (a timeout), and
every lab's when the build ends or dies.

Under `serve` the host is kept from build to build (`LabHost(keep=BYTES)`,
resume.py). Each lab it runs then holds a control socket on which it hands
the host a checkpoint after each cell (checkpoint.py): the host keeps each
checkpoint's socket, drops the ones a new run of that lab supersedes, and
starts a run from one when the build asks (`resume`). A resumed run is the
checkpoint's child, not the host's: the checkpoint reports how it ended. A
checkpoint ends when the host drops it or itself ends (its socket's end of
file).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from multiprocessing.connection import Connection

from ..core.errors import disk_full
from .runs import NO_SPACE, LabRun
from .warm import warm
from .checkpoint import (CHECKPOINT, EXITED, INPUTS_READY, KEPT, MEASURE, MEASURED, REFUSED,  # noqa: F401 - (INPUTS_READY:
                         STARTED, heard, pss, send_run, tell)                                 # compute.py's too)
RELEASED = "released"  # the host's answer to "release": every run it held is stopped
# How long the host waits for a checkpoint's answer, or for a lab to take the host's: a checkpoint
# answers as soon as it has forked (milliseconds); one that does not is dropped, never waited for.
ANSWER_SECONDS = 30
# The checkpoints the host holds of one lab, at most (a socket and a pidfd each): the harness takes a
# few dozen of a notebook of a thousand cells (checkpoint.FREE, WORTH); a lab that registers more is
# refused, not let run the host out of descriptors.
KEPT_MAX = 200


def _kill_group(pid: int, tree: bool = False) -> None:
    """End a lab's process and its group; with `tree`, everything it started first (_end_descendants).
    Not for serve's runs, whose descendants are the checkpoints it keeps."""
    if tree:
        _end_descendants(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _end_descendants(pid: int) -> None:
    """End every process below `pid`, whatever session or group each made (a child started with
    start_new_session or setsid, a daemon that forked twice: a lab is their subreaper, so each is
    still its descendant)."""
    for each in _descendants(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(each, signal.SIGKILL)


def _end_own_descendants() -> None:
    """In a lab's process, a subreaper that may read only its own /proc folder (sandbox.py): end its
    children, whose children then become its own, until none is left."""
    from .checkpoint import children
    while kids := children():
        for pid in kids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for pid in kids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (read from /proc; none where there is no /proc)."""
    parents: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    with open(f"/proc/{entry.name}/stat", "rb") as handle:
                        parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
                    parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(parents.get(pid, ()))
    while todo:
        found.append(each := todo.pop())
        todo += parents.get(each, ())
    return found


def _parent(pid: int) -> int | None:
    """The parent of process `pid` (Linux's /proc), or None if there is no such process."""
    if not 0 < pid < 1 << 22:           # (Linux's largest pid_max)
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _is_socket(fd: int) -> bool:
    import stat
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


class _Named:
    """The processes a lab named to the host (its checkpoints, the runs they resumed), each checked as
    the child of one the host knew when it was named, and held by a pidfd: its number, once it has
    ended and another process took it, never names that other process to the host."""

    def __init__(self):
        self.fds: dict[int, int] = {}

    def take(self, pid: int, parent: int) -> bool:
        """Hold `pid` if it is a child of `parent`, named once; whether it is (and is held)."""
        if pid in self.fds or _parent(pid) != parent:
            return False
        try:
            fd = os.pidfd_open(pid)
        except OSError:                 # (no more descriptors: nothing is held that is not held right)
            return False
        if _parent(pid) != parent:      # (it ended, and its number was taken, as it was opened)
            os.close(fd)
            return False
        self.fds[pid] = fd
        return True

    def alive(self, pid: int) -> bool:
        """Whether `pid`, named and held, is still the process that was named."""
        fd = self.fds.get(pid)
        if fd is None:
            return False
        try:
            signal.pidfd_send_signal(fd, 0)
        except ProcessLookupError:
            return False
        except OSError:
            pass
        return True

    def forget(self, pid: int, wait: float = 0) -> None:
        """Let `pid` go, once it has ended if it ends within `wait` seconds (a pidfd reads so then)."""
        if (fd := self.fds.pop(pid, None)) is not None:
            if wait:
                import select
                select.select([fd], [], [], wait)
            os.close(fd)


def _subreaper() -> None:
    """Processes this one starts that lose their parent become its children, not init's (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)     # PR_SET_CHILD_SUBREAPER


class _Host:
    """The host's state: the labs running, and (kept hosts) each lab's checkpoints."""

    def __init__(self, conn):
        self.conn = conn
        self.children: dict[int, tuple[str, int, str, socket.socket | None]] = {}
        #              pipe's read end -> (job id, pid, result file, the checkpoint it was resumed from)
        self.controls: dict[socket.socket, tuple[str, int, int, int]] = {}  # a run's control socket -> (its
        #                               lab's id, its pid, the cell it resumed after, its number of cells)
        self.named = _Named()                             # the pids labs named: checked, and held
        self.forked: set[int] = set()                     # the runs it forked itself, until reaped
        self.kept: dict[str, dict[int, tuple[socket.socket, int]]] = {}   # lab id -> cell -> checkpoint
        self.owed: dict[socket.socket, str | None] = {}   # checkpoints whose resumed run's status is to come
        self.ending: set[int] = set()                     # pids that reported and are exiting
        self.keeping: set[int] = set()                    # pids of runs that take checkpoints (serve's)

    def fds(self) -> list[int]:
        """What a lab's process must not hold of the host's: else a checkpoint dropped, or a run
        ended, would not read as end of file where it should (and its pidfds are the host's)."""
        held = [self.conn.fileno(), *self.children, *(c.fileno() for c in self.controls), *self.named.fds.values()]
        return held + [sock.fileno() for cells in self.kept.values() for sock, _ in cells.values()]

    def end(self, pid: int, tree: bool = False) -> None:
        """_kill_group, for a pid the host forked, or one a lab named while it is still that process (which
        ends by its pidfd too: a process that left no group of its own is not missed)."""
        if pid in self.forked:
            _kill_group(pid, tree)
        elif self.named.alive(pid):
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.named.fds[pid], signal.SIGKILL)
            _kill_group(pid, tree)

    def stop(self, *_) -> None:
        _end_descendants(os.getpid())       # every lab, checkpoint, and what they started, whatever its session
        for pid in {pid for _, pid, _, _ in self.children.values()} | self.ending | \
                {pid for cells in self.kept.values() for _, pid in cells.values()}:
            self.end(pid)
        os._exit(0)

    def run(self, job_id: str, run: LabRun) -> None:
        keep = run.budget
        done_read, done_write = os.pipe()
        ours, theirs = socket.socketpair() if keep else (None, None)
        if keep:
            self.drop(job_id, lambda after: after > run.resume)
        pid, (source, point) = None, self.kept.get(job_id, {}).get(run.resume, (None, 0))
        if source is not None:
            pid = self._resume(job_id, run.resume, source, point, run, (done_write, theirs.fileno()))
        if pid is None:
            from .labrun import run_lab
            warm(run.warm)
            source = None
            pid = os.fork()
            if pid == 0:
                os.setsid()
                if not keep:                # (serve's runs fork checkpoints, which fork runs: left as they were)
                    _subreaper()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                code = 0
                try:
                    for fd in self.fds() + [done_read] + ([ours.fileno()] if ours else []):
                        os.close(fd)
                    run_lab(run, done_write, theirs.fileno() if theirs else None)
                except OSError as exc:      # (a full disk, where not even its failure could be written)
                    code = NO_SPACE if disk_full(exc) else 1
                finally:
                    if not keep:            # what it started ends with it (serve's checkpoints are its children)
                        _end_own_descendants()
                    os._exit(code)
        os.close(done_write)
        if source is None:
            self.forked.add(pid)
        if theirs is not None:
            theirs.close()
            ours.settimeout(ANSWER_SECONDS)         # (a lab that takes no answer of the host's: dropped)
            # (a checkpoint is after one of its cells, past the one it resumed after)
            self.controls[ours] = (job_id, pid, run.resume if source is not None else 0, len(run.cells))
            self.keeping.add(pid)
        self.children[done_read] = (job_id, pid, run.result, source)

    def _resume(self, lab: str, after: int, sock: socket.socket, point: int, command, fds) -> int | None:
        """Start a run from a checkpoint (process `point`): the pid of its process, or None if the
        checkpoint is gone, refuses, or answers what is not a child of its own (the run then starts
        from the first cell)."""
        try:
            if sock in self.owed:               # the status of the last run it resumed
                heard(sock)
                del self.owed[sock]
            send_run(sock, command, fds)
            answer = heard(sock)
        except OSError:                         # (a timeout among them)
            answer = None
        if answer is not None and answer[0] == STARTED and not answer[3] and self.named.take(answer[2], point):
            with contextlib.suppress(OSError):
                tell(sock, KEPT, after, answer[2])      # (the checkpoint waits for it before it reaps the run)
            return answer[2]
        if answer is None or answer[0] != REFUSED:      # it is gone, or says what it may not
            self.drop(lab, lambda cell: cell == after)
        return None

    def drop(self, lab: str, which) -> None:
        """Drop a lab's checkpoints after the cells `which` says: their processes end."""
        cells = self.kept.get(lab, {})
        for after in [after for after in cells if which(after)]:
            sock, pid = cells.pop(after)
            self.owed.pop(sock, None)
            sock.close()
            self.end(pid)
            self.named.forget(pid, wait=5)      # (what it held is let go: what is measured next counts that)

    def registered(self, control: socket.socket) -> None:
        """A running lab took a checkpoint, asks what its checkpoints take, or ended (its control
        socket closed). A record that is none of these, or not as the harness writes it (a checkpoint
        that is no child of the run, a cell out of range, no socket with it), ends the channel: the
        lab takes no more checkpoints, and nothing it named is kept."""
        lab, run, first, cells = self.controls[control]
        try:
            message = heard(control, 1)
        except OSError:
            message = None
        if message is not None:
            kind, after, pid, fds = message
            if kind == MEASURE and not fds:     # what its checkpoints take (it may not read their /proc)
                with contextlib.suppress(OSError):
                    tell(control, MEASURED, 0, sum(pss(pid) for _, pid in self.kept.get(lab, {}).values()))
                    return
            elif (kind == CHECKPOINT and len(fds) == 1 and first < after < cells and _is_socket(fds[0])
                  and (after in self.kept.get(lab, {}) or len(self.kept.get(lab, {})) < KEPT_MAX)
                  and self.named.take(pid, run)):     # (the run waits for KEPT: it is the parent still)
                self.drop(lab, lambda cell: cell == after)
                checkpoint = socket.socket(fileno=fds[0])
                checkpoint.settimeout(ANSWER_SECONDS)
                self.kept.setdefault(lab, {})[after] = (checkpoint, pid)
                try:
                    tell(control, KEPT, after, pid)
                except OSError:
                    self.drop(lab, lambda cell: cell == after)
                else:
                    return
                fds = []
            for fd in fds:
                os.close(fd)
        del self.controls[control]
        control.close()

    def ended(self, ready: int) -> None:
        job_id, pid, result, source = self.children.pop(ready)
        os.close(ready)
        tree = pid not in self.keeping
        self.keeping.discard(pid)
        # Its pipe said it is over; it ends now, whatever it goes on doing (a lab may say so and go on, or
        # leave what it started running: the build then stores its folder, which nothing of it may touch).
        self.end(pid, tree)
        dropped = source is not None and source.fileno() < 0      # (its checkpoint dropped meanwhile)
        if os.path.exists(result):
            if source is None:
                self.ending.add(pid)
            else:
                if not dropped:
                    self.owed[source] = None
                self.named.forget(pid)
            self.conn.send((job_id, 0))
            return
        self.named.forget(pid)
        if source is None:
            _, status = os.waitpid(pid, 0)
            self.forked.discard(pid)
            self.conn.send((job_id, os.waitstatus_to_exitcode(status)))
        elif dropped:                           # none is left to say how it ended: a failure
            self.conn.send((job_id, 1))
        else:                                   # the checkpoint it came from says how it ended
            self.owed[source] = job_id

    def status(self, sock: socket.socket) -> None:
        """A checkpoint says how the run it resumed ended (an exit code; anything else is a failure)."""
        job_id = self.owed.pop(sock)
        try:
            answer = heard(sock)
        except OSError:
            answer = None
        code = answer[2] if answer is not None and answer[0] == EXITED and -256 < answer[2] < 256 else 1
        if job_id is not None:
            self.conn.send((job_id, code))

    def release(self) -> None:
        """Stop every run (not the checkpoints): the build is over."""
        for ready, (_, pid, _, source) in list(self.children.items()):
            self.end(pid, pid not in self.keeping)
            self.named.forget(pid)
            self.children.pop(ready)
            os.close(ready)
            if source is None:
                self.ending.add(pid)
            elif source.fileno() >= 0:          # (its checkpoint is still held: it says how it ended)
                self.owed[source] = None
        self.conn.send((RELEASED, 0))


def main(given: dict) -> None:
    """The host process (LabHost starts it: `given` is its connection's descriptor, `keep` and the
    modules to import): warm up, then fork one process per lab asked for, report each as done.
    Its only descriptor of the build's is that connection: the build's death reads as its end of
    file, and the build's locks (close-on-exec) stay the build's."""
    from multiprocessing.connection import wait

    from .labrun import host_setup
    conn, keep = Connection(given["fd"]), given["keep"]
    host = _Host(conn)
    if not keep:                # a lab stopped before it ended what it started leaves those to the host
        _subreaper()
    signal.signal(signal.SIGTERM, host.stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is the build's to handle: it stops us
    host_setup()
    warm(tuple(given["warm"]))
    while True:
        for ready in wait([conn, *host.children, *host.controls, *host.owed]):
            if ready is conn:
                try:
                    command, job_id, *given = conn.recv()
                except EOFError:             # the build ended or died: so do its labs
                    host.stop()
                if command == "run":
                    host.run(job_id, *given)
                elif command == "stop":      # the build gave up on this lab (its timeout)
                    for _, pid, _, _ in (c for c in host.children.values() if c[0] == job_id):
                        host.end(pid, pid not in host.keeping)
                elif command == "drop":      # these checkpoints of a lab, or all past a cell
                    cells, above = given
                    host.drop(job_id, (lambda after: after > above) if cells is None else set(cells).__contains__)
                elif command == "release":
                    host.release()
                elif command == MEASURED:    # what each checkpoint it holds takes
                    conn.send((MEASURED, {(lab, after): pss(pid) for lab, cells in host.kept.items()
                                          for after, (_, pid) in cells.items()}))
            elif ready in host.controls:
                host.registered(ready)
            elif ready in host.owed:
                host.status(ready)
            elif ready not in host.children:
                continue                     # ended while this round's others were handled
            elif os.read(ready, 1) == INPUTS_READY:      # its results.json is final; it goes on
                conn.send((host.children[ready][0], INPUTS_READY))
            else:
                host.ended(ready)
        for pid in list(host.ending):
            with contextlib.suppress(ChildProcessError):
                if not os.waitpid(pid, os.WNOHANG)[0]:
                    continue
            host.ending.discard(pid)
            host.forked.discard(pid)


class LabHost:
    """The build's handle on the lab host process. A host that `keep`s (serve's, kept from build to
    build) takes checkpoints of the labs it runs, each lab's at most `keep` bytes, and outlives the
    builds: at a build's end `stop()` stops only the labs still running, and `close()` ends it."""

    def __init__(self, keep: int = 0, warm: tuple[str, ...] = ()):
        self.keep = keep
        ours, theirs = socket.socketpair()
        self.conn = Connection(ours.detach())
        # A new interpreter, not a fork of the build, with string hashing fixed (PYTHONHASHSEED=0): a
        # lab (a fork of the host) that prints a set prints it in the same order in every build, as two
        # clean builds must give the same bytes, while the build runs with Python's own random seed
        # (never started twice to fix it). It imports from where the build does (its sys.path).
        # (and the build's command line, for `ps` to say whose host it is and whose labs its forks are)
        given = {"fd": theirs.fileno(), "keep": keep, "warm": list(warm), "path": sys.path, "build": sys.orig_argv}
        # Deaf to Ctrl-C (the build's to handle; an ignored signal stays ignored in a new program).
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "import json, sys; given = json.loads(sys.argv[1]); sys.path[:] = given['path']; "
                 "from sitegen.labs.labhost import main; main(given)", json.dumps(given, ensure_ascii=False)],
                pass_fds=(theirs.fileno(),), env={**os.environ, "PYTHONHASHSEED": "0"})
        finally:
            signal.signal(signal.SIGINT, handler)
            theirs.close()

    def run(self, job_id: str, run: LabRun) -> None:
        """Start a lab's run (labrun.run_lab), known to the host as `job_id` (a lab's id, or its preview's
        name). A run with a `budget` (serve's) takes checkpoints, and with `resume` starts from its
        checkpoint after that cell when the host holds one."""
        self.conn.send(("run", job_id, run))

    def kill(self, job_id: str) -> None:
        """Stop a running lab and everything it started; finished() then reports it."""
        self.conn.send(("stop", job_id))

    def drop(self, lab: str, cells=None, above: int = 0) -> None:
        """Drop a lab's checkpoints after these cells, or (`cells` None) after any cell past `above`:
        their processes end."""
        self.conn.send(("drop", lab, None if cells is None else tuple(cells), above))

    def measure(self) -> dict[tuple[str, int], int]:
        """What each checkpoint the host holds takes (its proportional set size), by (lab, after which
        cell). Between builds: what labs still had to say is passed over."""
        self.conn.send((MEASURED, ""))
        while (answer := self.conn.recv())[0] != MEASURED:
            continue
        return answer[1]

    def finished(self, timeout: float | None = None) -> tuple[str, int | bytes] | None:
        """(job id, exit code) of the next lab to be done, 0 once its result is written, or
        (job id, INPUTS_READY) once its results.json is final; None if neither comes within
        `timeout` seconds."""
        if timeout is not None and not self.conn.poll(timeout):
            return None
        return self.conn.recv()

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """End the host and any lab it still runs; a host that keeps stops only the labs (and
        forgets what they were to report), keeping their checkpoints."""
        if not self.keep:
            return self.close()
        if not self.alive():
            return None
        self.conn.send(("release", ""))
        while self.conn.recv()[0] != RELEASED:
            continue                # what the labs it stopped had still to say
        return None

    def close(self) -> None:
        """End the host, every lab it runs and every checkpoint it keeps."""
        if self.alive():
            self.process.terminate()
        self.process.wait()
        self.conn.close()
