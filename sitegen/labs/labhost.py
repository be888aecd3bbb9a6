"""The lab host: a process that imports what labs use once, then forks a fresh process per lab.

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
"""
from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
from pathlib import Path

from ..project.cells import Cell

INPUTS_READY = b"i"     # what a lab's process writes to its pipe once its results.json is final


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _host(conn, builds_end) -> None:
    """The host's loop: warm up, then fork one process per lab asked for, report each as done."""
    from multiprocessing.connection import wait

    from .labrun import preload, run_lab
    from ..core.lock import forget_in_child
    forget_in_child()           # the build's locks stay the build's
    gc.enable()                 # the build runs without the cycle collector; labs run with it
    builds_end.close()          # so that the build's death reads as end of file here
    children: dict[int, tuple[str, int, str]] = {}     # pipe's read end -> (job id, pid, result file)
    ending: set[int] = set()                          # pids that reported and are exiting

    def stop(*_):
        for pid in {pid for _, pid, _ in children.values()} | ending:
            _kill_group(pid)
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is the build's to handle: it stops us
    preload()
    while True:
        for ready in wait([conn, *children]):
            if ready is conn:
                try:
                    command, job_id, *job = conn.recv()
                except EOFError:             # the build ended or died: so do its labs
                    stop()
                if command == "stop":        # the build gave up on this lab (its timeout)
                    for _, pid, _ in (c for c in children.values() if c[0] == job_id):
                        _kill_group(pid)
                    continue
                script, cells, display, fonts, staging, workdir, result, preview, watch = job
                done_read, done_write = os.pipe()
                pid = os.fork()
                if pid == 0:
                    os.setsid()
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    signal.signal(signal.SIGINT, signal.SIG_DFL)
                    status = 1
                    try:
                        conn.close()
                        os.close(done_read)
                        run_lab(script, cells, display, fonts, staging, workdir, result,
                                announce=lambda: os.write(done_write, INPUTS_READY), preview=preview,
                                watch=watch)
                        os.close(done_write)
                        status = 0
                    finally:
                        os._exit(status)
                os.close(done_write)
                children[done_read] = (job_id, pid, result)
            elif os.read(ready, 1) == INPUTS_READY:      # its results.json is final; it goes on
                conn.send((children[ready][0], INPUTS_READY))
            else:
                job_id, pid, result = children.pop(ready)
                os.close(ready)
                if os.path.exists(result):
                    ending.add(pid)
                    conn.send((job_id, 0))
                else:                        # it died without a result: say how
                    _kill_group(pid)         # and take what it started with it
                    _, status = os.waitpid(pid, 0)
                    conn.send((job_id, os.waitstatus_to_exitcode(status)))
        for pid in list(ending):
            if os.waitpid(pid, os.WNOHANG)[0]:
                ending.discard(pid)


class LabHost:
    """The build's handle on the lab host process."""

    def __init__(self):
        context = multiprocessing.get_context("fork")
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_host, args=(theirs, self.conn), daemon=True)
        # Born with SIGTERM ending it quietly and deaf to Ctrl-C (the build's to handle), not with
        # the build's handlers: stopped while still importing, it must print no traceback.
        handlers = signal.signal(signal.SIGTERM, signal.SIG_DFL), signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self.process.start()
        finally:
            signal.signal(signal.SIGTERM, handlers[0])
            signal.signal(signal.SIGINT, handlers[1])
        theirs.close()

    def run(self, job_id: str, script: str, cells: tuple[Cell, ...], display: str, fonts: tuple[str, ...],
            staging: Path, workdir: Path, result: Path, preview: bool = False,
            watch: tuple[str, str] | None = None) -> None:
        """Start a lab (labrun.run_lab), or with `preview` its preview, known to the host as `job_id`;
        `watch`: (project, cache), to record what of the project it reads (labreads.py)."""
        self.conn.send(("run", job_id, script, cells, display, fonts, str(staging), str(workdir), str(result),
                        preview, watch))

    def kill(self, job_id: str) -> None:
        """Stop a running lab and everything it started; finished() then reports it."""
        self.conn.send(("stop", job_id))

    def finished(self, timeout: float | None = None) -> tuple[str, int | bytes] | None:
        """(job id, exit code) of the next lab to be done, 0 once its result is written, or
        (job id, INPUTS_READY) once its results.json is final; None if neither comes within
        `timeout` seconds."""
        if timeout is not None and not self.conn.poll(timeout):
            return None
        return self.conn.recv()

    def stop(self) -> None:
        """End the host and any lab it still runs."""
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()
        self.conn.close()
