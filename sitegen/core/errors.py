"""Problems reported as `path:line: message`, all of a phase at once."""
from __future__ import annotations

import collections
import errno
import os


class Problem(collections.namedtuple("Problem", "path line message")):
    """What is wrong, in which file (relative to the project) and on which line (0: the whole file)."""
    __slots__ = ()      # (not typing.NamedTuple: importing typing costs a tenth of a no-change build)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class BuildError(Exception):
    """One or more problems; the build stops before writing anything."""

    def __init__(self, problems: list[Problem] | Problem):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__(self.report())

    def report(self) -> str:
        if len(self.problems) == 1:
            return f"error: {self.problems[0]}"
        lines = [f"error: {len(self.problems)} problems"]
        lines += [f"  {i}. {p}" for i, p in enumerate(self.problems, 1)]
        return "\n".join(lines)


class LabFailure(BuildError):
    """A lab's own code failed; `trace` is its full traceback (shown with --debug)."""

    def __init__(self, problem: Problem, trace: str):
        super().__init__(problem)
        self.trace = trace


class SourcesChanged(BuildError):
    """Sources changed while the build read them: it publishes nothing of what it made, and is run
    again (pipeline.build), so that what it publishes is one state of the sources, never a mix."""

    def __init__(self, rels):
        super().__init__([Problem(rel, 0, "changed while the build was reading it: build again once "
                                          "it is saved") for rel in rels])


class DamagedFile(BuildError):
    """A file the build kept (a rendered page in the cache, a lab's output) does not hold what it was
    kept as, found as it was read to be published: changed by hand, or by a disk error. The build
    publishes nothing, and is run again checking every kept file it takes (pipeline.build)."""

    def __init__(self, path):
        super().__init__(Problem(str(path), 0, "does not hold what the build kept there (changed by hand, or "
                                               "a disk error): delete the cache folder (.cache) and build again"))


class Collector:
    """Gathers problems during a phase, then raises them together."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: str, line: int, message: str) -> None:
        self.problems.append(Problem(str(path), line, message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise BuildError(self.problems)


# What the system says when a file cannot be written or read, and what to do about it.
_OS_ADVICE = {
    errno.ENOSPC: "the disk is full: free some space and build again",
    errno.EDQUOT: "the disk quota is used up: free some space and build again",
    errno.EROFS: "the file system is read-only: build into a writable folder (--out, --cache)",
    errno.EACCES: "permission denied: build into a folder you may write (--out, --cache), or fix its permissions",
    errno.EPERM: "not permitted: build into a folder you may write (--out, --cache), or fix its permissions",
    errno.EFBIG: "the file is too large for this file system",
    errno.ENAMETOOLONG: "the path is too long: use a shorter folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder: choose another path",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n)",
}


# What to do when the disk that holds the cache, where labs run and write, is full (said by every lab's
# failure there, whichever write met it).
DISK_FULL = ("the disk that holds the build's cache, where labs write, is full, or a lab filled it: free some "
             "space, or build with --cache on another disk")


def disk_full(exc: BaseException) -> bool:
    """Whether `exc` says the disk (or the user's quota on it) is full."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def os_problem(exc: OSError, root=None) -> Problem | None:
    """An OSError on a file as the author's problem (disk full, read-only, permissions), or None
    when it is not of that kind (then it is a bug of ours)."""
    advice = _OS_ADVICE.get(exc.errno)
    if advice is None:
        return None
    path = str(exc.filename or "")
    if root is not None and path.startswith(str(root) + os.sep):
        path = path[len(str(root)) + 1:]
    return Problem(path or "(output)", 0, f"{exc.strerror}: {advice}")


# Modules whose package has another name on PyPI.
_PACKAGES = {"yaml": "PyYAML", "PIL": "Pillow"}


def missing_package(exc: ModuleNotFoundError) -> str | None:
    """The advice for a package of the requirements that is not installed (None for our own modules)."""
    top = (exc.name or "").split(".")[0]
    if not top or top == "sitegen":
        return None
    return (f"error: the Python package {_PACKAGES.get(top, top)} (module '{top}') is not installed: "
            "run `pip install -r requirements.txt` in the project's virtualenv (see README.md)")
