"""What the last build read and wrote, as file states: a build that finds them all as they were has
nothing to do, and says so having read one small file and looked at the others' states.

The stamp (written only by a build that succeeded, and only when every state it holds had settled:
stored.py says why a settled state is enough) holds how the build was asked to build; the
interpreter and the version of every installed distribution; the state of each of the generator's
own files and of each of the project's sources as the build read them; what the labs read outside
the sources; and each output file's state as the build wrote it. A build whose every one of these
is the same stops at once (pipeline.build), importing neither the phases nor hashlib. When any
differs (a file touched but not changed too), the build goes on to its fingerprint of the sources'
hashes, which decides.

Only os, sys and marshal are imported here (and installed.py; stored.py, which adds collections and
time): on a course of 3,000 pages the whole check is a few thousand stat calls, and the
interpreter's start and imports would otherwise cost more than it.
"""
from __future__ import annotations

import marshal
import os
import sys

from . import installed
from .cachedir import STAMP
from .stored import file_state, files_in, settled_before, settled_since

GENERATOR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # the sitegen package
FORMAT = 2
SKIPPED_IN_GENERATOR = frozenset({"__pycache__"})


def generator_files() -> dict[str, str]:
    """The generator's own files (code, vocabulary, fonts, the theme): relative path -> path."""
    return files_in(GENERATOR, SKIPPED_IN_GENERATOR)


def project_states(root: str, names: tuple[str, ...], skip: frozenset[str],
                   recorded: dict[str, tuple] | None = None) -> dict[str, tuple] | None:
    """The state of every file under the project's source folders `names` (as sources.source_files
    walks them: `skip` left out), by relative path; None when one cannot be looked at, or (given the
    states `recorded`) as soon as one is not as recorded there."""
    states = {}
    try:
        for name in names:
            path = os.path.join(root, name)
            found = {f"{name}/{rel}": file for rel, file in files_in(path, skip).items()} if os.path.isdir(path) \
                else {name: path} if os.path.lexists(path) else {}
            for rel, file in found.items():
                states[rel] = state = file_state(file)
                if recorded is not None and recorded.get(rel) != state:
                    return None             # (an edit is found without looking at the rest)
    except OSError:
        return None
    return states


def write(cache, key: list, generator: dict[str, tuple], project: dict[str, tuple] | None,
          reads: dict[str, str], outputs: dict[str, list], report: tuple) -> None:
    """Record this build for the next (or, when a state it would hold had not settled, or `project`
    is None, remove the last record: the next build then hashes what it must). `key`: how it was
    asked to build; `outputs`: write_site's records."""
    path = os.path.join(cache, STAMP)
    before = settled_before()
    versions = installed.versions()
    if project is None or not all(
            settled_since(state[2], before) for state in (*generator.values(), *project.values())):
        if os.path.lexists(path):
            os.unlink(path)
        return
    stamp = {"format": FORMAT, "key": [sys.version, sys.executable, *key], "versions": versions,
             "generator": generator, "project": project, "reads": reads,
             "outputs": {rel: tuple(record[1:]) for rel, record in outputs.items()}, "report": report}
    os.makedirs(cache, exist_ok=True)
    with open(path + ".tmp", "wb") as handle:
        handle.write(marshal.dumps(stamp))
    os.replace(path + ".tmp", path)


def unchanged(cache, root: str, out: str, key: list, names: tuple[str, ...], skip: frozenset[str]) -> dict | None:
    """The last build's stamp, when everything it holds is as it was (its `report` and `reads`,
    which the caller checks); else None. `names`, `skip`: the project's sources (project_states)."""
    try:
        with open(os.path.join(cache, STAMP), "rb") as handle:
            stamp = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(stamp, dict) or stamp.get("format") != FORMAT or stamp["key"] != [sys.version, sys.executable, *key]:
        return None
    if installed.versions() != stamp["versions"]:
        return None
    try:
        if {rel: file_state(path) for rel, path in generator_files().items()} != stamp["generator"]:
            return None
    except OSError:
        return None
    if project_states(root, names, skip, stamp["project"]) != stamp["project"]:
        return None
    return stamp if _outputs_as_written(out, stamp["outputs"]) else None


def _outputs_as_written(out: str, recorded: dict[str, tuple]) -> bool:
    """The output folder holds exactly the files the build wrote, each in the state it left it in,
    and that state has settled (a write since would show)."""
    try:
        found = files_in(out)
        if found.keys() != recorded.keys():
            return False
        before = settled_before()
        for rel, path in found.items():
            state = file_state(path)
            if state != recorded[rel] or not settled_since(state[2], before):
                return False
    except OSError:
        return False
    return True
