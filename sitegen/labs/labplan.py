"""What a build found in the cache for every lab, remembered as one entry for the next build.

Working out each lab's key (its script's cells and imports, every module it
reads, hashed) and reading its cache entry costs a fraction of a millisecond a
lab, paid by every build, a prose edit's included: about 60 ms on a course of
200 labs. When a build found every lab in the cache (or in frozen/), it
remembers their Artifacts, together with all it read to find them: the files
the labs' keys hashed (by SHA-256), where each imported name was looked for and
what was there, what each lab read (labreads.py) and the state of every file of
every entry. The next build
takes them as they are when all of that is still so; else it works them out
again, lab by lab. The entry's own key is everything else they follow from:
site.yaml, the labs (those it declares and the notebooks that are labs: a notebook
that gains its first code cell becomes one), the generator, the environment, frozen/ and the build's
options.
"""
from __future__ import annotations

import os
from pathlib import Path

from .artifacts import Artifacts
from .labkeys import find_module
from .labreads import stale
from ..core import installed
from ..core.memo import Memo
from ..core.stored import file_state, settled, sha256_of

NAMESPACE = "lab-plan"


def _sha(path: Path, root: str, snapshot: dict[str, str]) -> str | None:
    """A module's SHA-256: as the build's snapshot took it when it is a source, else read now."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if rel in snapshot:
        return snapshot[rel]
    try:
        return sha256_of(path.read_bytes())
    except OSError:
        return None


def remember(memo: Memo, key: tuple, root: Path, snapshot: dict[str, str], artifacts: dict[str, Artifacts],
             found: dict) -> None:
    """Remember `artifacts` (every lab's) under `key`, with what finding them read: `found`, the
    probes labkeys.source_key made ((base, name) -> modules), and each entry's files' states."""
    scripts = {art.lab.script for art in artifacts.values()}
    modules = scripts.union(*found.values())
    states = [(str(path), file_state(path)) for art in artifacts.values()
              for path in [art.entry / "manifest.json", *art.files.values()]]
    if not settled([state for _, state in states]):
        return                      # a file written just now could change unseen: not worth a plan
    memo.value(NAMESPACE, key, lambda: {
        "artifacts": artifacts, "probes": found, "states": states,
        "modules": {str(path): _sha(path, str(root), snapshot) for path in sorted(modules)}})


def recall(memo: Memo, key: tuple, root: Path, snapshot: dict[str, str]) -> dict[str, Artifacts] | None:
    """The Artifacts remembered under `key`, if everything they were found from is still so."""
    plan = memo.value(NAMESPACE, key)
    if plan is None:
        return None
    try:
        if any(find_module(base, name) != modules for (base, name), modules in plan["probes"].items()):
            return None
        if any(_sha(Path(path), str(root), snapshot) != sha for path, sha in plan["modules"].items()):
            return None
        if any(file_state(path) != state for path, state in plan["states"]):
            return None
        versions = installed.versions()          # (read once: not once a lab)
        if any(stale(root, art.reads or {}, snapshot, versions) for art in plan["artifacts"].values()):
            return None             # a data file a lab read (labreads.py) is not as it was
    except OSError:
        return None
    return plan["artifacts"]
