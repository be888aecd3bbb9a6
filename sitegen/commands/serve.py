"""`python build.py serve`: build, serve dist/ with Cloudflare's own emulator, rebuild on change.

The emulator is `wrangler pages dev` (pinned in package.json), so the preview
answers redirects, 404s and _headers exactly as Pages will. Preview builds add
one script that asks for `__build-id.txt` twenty times a second and reloads the page
when it changes: the emulator serves files only, and its own live reload is an
inline script talking to another port, which the pages' Content-Security-Policy
(rightly) blocks. The rebuild runs in this process, its imports warm; the page's
question goes to the emulator, so neither waits for the other. Its lab host is
kept too, with a checkpoint of each lab after each cell: an edit to a late
cell runs that cell onward, not the lab from its first (labs/resume.py).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..core.cachedir import WRANGLER, cache_folder
from ..core.errors import BuildError, Problem
from ..core.sources import SOURCES

EMULATOR_ENV = {"WRANGLER_SEND_METRICS": "false", "CLOUDFLARE_CF_FETCH_ENABLED": "false"}
# The newest date the pinned wrangler's workerd supports is 2026-05-03; Pages
# serves static files the same way for any recent date.
COMPATIBILITY_DATE = "2026-04-01"
INSTALL = "npm ci --prefix tools --ignore-scripts"


def wrangler(root: Path) -> Path:
    """The project's pinned wrangler (tools/package-lock.json); what to run when it is missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise BuildError(Problem("tools/package.json", 0, "Node.js 20 and npm are needed for the Cloudflare "
                                                          "emulator: install them (e.g. apt-get install nodejs npm)"))
    binary = root / "tools" / "node_modules" / ".bin" / "wrangler"
    if not binary.exists():
        raise BuildError(Problem("tools/package.json", 0, f"the Cloudflare emulator is not installed: run `{INSTALL}`"))
    return binary


def free_port() -> int:
    """A port nothing on this machine listens on now."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def emulator_command(root: Path, dist: Path, port: int) -> list[str]:
    # Its devtools port too is chosen free: with wrangler's fixed default (9229), a second
    # emulator (another project's preview, a parallel test) fails to start.
    return [str(wrangler(root)), "pages", "dev", str(dist), "--ip", "127.0.0.1", "--port", str(port),
            "--inspector-port", str(free_port()), "--compatibility-date", COMPATIBILITY_DATE]


def check_port_free(port: int) -> None:
    """A port something already listens on (another `serve`, another project's preview) is an error
    naming it: else the browser would show that other site while this one seemed to serve."""
    import socket
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise BuildError(Problem("serve", 0, f"port {port} is in use (another `serve`, or another program): "
                                                 f"stop it, or choose another with --port {port + 1}")) from None


def _die_with_parent() -> None:
    """In the emulator's process, before it runs: sent SIGTERM when serve ends in any way, even
    killed outright (Linux's PR_SET_PDEATHSIG; elsewhere serve's own handlers stop it)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def start_emulator(root: Path, dist: Path, port: int, workdir: Path, **popen) -> subprocess.Popen:
    """Start `wrangler pages dev`; its `.wrangler/` state goes to workdir, not the project.

    It runs in a process group of its own, so that stop_emulator() ends the
    workerd processes it starts as well as wrangler itself, and it is told to
    stop when the process that started it dies.
    """
    command = emulator_command(root, dist, port)
    workdir.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(command, cwd=workdir, env={**os.environ, **EMULATOR_ENV}, start_new_session=True,
                            preexec_fn=_die_with_parent, **popen)


def wait_until_serving(process: subprocess.Popen, port: int, timeout: float = 90) -> None:
    """Return once the emulator answers on the port; an error if it ended or never answered."""
    import urllib.error
    import urllib.request
    deadline = time.time() + timeout
    while True:
        if process.poll() is not None:
            raise BuildError(Problem("wrangler", 0, f"the Pages emulator ended (exit code {process.returncode}) "
                                                    f"before it served port {port}; its output says why"))
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return
        except urllib.error.HTTPError:
            return                            # it answers, even if not with 200
        except OSError:
            if time.time() > deadline:
                raise BuildError(Problem("wrangler", 0, f"the Pages emulator did not start on port {port}"))
            time.sleep(0.3)


def stop_emulator(process: subprocess.Popen) -> None:
    """End the emulator's whole process group: SIGTERM to all of it, then SIGKILL to what is left."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@contextlib.contextmanager
def serving(root: Path, dist: Path, port: int, workdir: Path, timeout: float = 90):
    """The emulator serving `dist` on 127.0.0.1:port, once it answers; stopped on exit."""
    check_port_free(port)
    process = start_emulator(root, dist, port, workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_serving(process, port, timeout)
        yield process
    finally:
        stop_emulator(process)


def watched(root: Path, out: Path, cache: Path) -> list[Path]:
    """What an edit to rebuilds: the sources' files and folders, and each top folder of the project
    that the last build read a file or folder in outside them (a lab's data folder, data/), unless it
    is hidden (.venv/: installed packages, whose versions key the labs) or holds what the build writes;
    and each file at the project's top it read (notes.txt beside site.yaml: the top folder itself
    holds the output and the cache). (An installed distribution's read, labreads.INSTALLED, is
    neither.)"""
    from ..core.memo import read_pickled
    from ..core.cachedir import STATE
    found = {root / name for name in SOURCES if (root / name).exists()}
    for rel in read_pickled(cache / STATE).get("reads", {}):
        top, _, rest = rel.partition("/")
        folder = root / top
        if rest and top and not top.startswith(".") and folder.is_dir() and not any(
                folder == made or folder in made.parents for made in (out, cache)):
            found.add(folder)
        elif not rest and top and folder.is_file():
            found.add(folder)
    return sorted(found)


def serve(root: Path, out: Path, port: int, rebuild, cache: Path | None = None) -> int:
    """Serve `out` with the emulator, rebuild (`rebuild(quiet=False)`, True when it built) on every
    change to what `watched` names; `cache`: the build's (default: ROOT/.cache)."""
    from watchfiles import watch    # before anything else: a missing package is said at once
    cache = cache_folder(root, cache).resolve()

    wrangler(root)                   # say what is missing before building anything
    check_port_free(port)
    # Stopped like Ctrl-C, the emulator too: by SIGTERM, and by SIGHUP (the terminal closed).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.default_int_handler)
    rebuild()
    process = start_emulator(root, out, port, cache / WRANGLER)
    try:
        wait_until_serving(process, port)
        print(f"serving {out} at http://127.0.0.1:{port}/ (Ctrl-C stops)", file=sys.stderr)
        watching = watched(root, out, cache)
        while watching:
            caught_up = False
            # (it yields nothing every 0.2 s of quiet: the first time, the watch has begun, and what
            # changed before it began, as the emulator started or the watch began again, is built)
            for changes in watch(*watching, rust_timeout=200, yield_on_timeout=True):
                if not changes:
                    if not caught_up:
                        caught_up = True
                        rebuild(quiet=True)
                    continue
                names = sorted({Path(path).relative_to(root).as_posix() for _, path in changes})
                print(f"changed: {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}", file=sys.stderr)
                started = time.perf_counter()
                if rebuild():
                    print(f"rebuilt in {time.perf_counter() - started:.2f} s; open pages reload", file=sys.stderr)
                # Watched anew after every build: a lab may read a folder it did not, and a file saved by
                # renaming a new one over it (notes.txt) is another file, whose old watch sees nothing more
                # (the test of it failed one run in five); what changes meanwhile, the first quiet moment builds.
                watching = watched(root, out, cache)
                break
            else:
                break
    except KeyboardInterrupt:
        pass
    finally:
        stop_emulator(process)
    return 0
