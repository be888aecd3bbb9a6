"""Slow, pure steps remembered in the cache folder, keyed on a hash of their inputs.

Used for what a prose edit would otherwise redo for nothing: highlighting a
lab's cells, assembling a notebook whose page did not change. Entries are
written to a temporary name and renamed; entries a build did not use are
dropped at the end of the build.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

GENERATOR = Path(__file__).resolve().parent
TEMPORARY = ".tmp-"       # what the cache holds under this prefix is being written, or was by a killed build


def clear_temporaries(cache: Path) -> None:
    """Remove what killed builds left half-written in the cache (call with the cache's lock held)."""
    for stale in [*cache.glob(f"labs/*/{TEMPORARY}*"), *cache.glob(f"memo/*/{TEMPORARY}*")]:
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)


def digest(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _installed() -> dict[str, str]:
    """Every installed distribution's version, from the names of the `.dist-info` folders on the
    path (the wheel spec fixes them as name-version.dist-info, the name normalised): one listing
    of each folder, however many versions are asked for."""
    versions: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist, _, version = name[: -len(".dist-info")].partition("-")
                versions.setdefault(dist.lower().replace("-", "_").replace(".", "_"), version)
    return versions


@functools.lru_cache(maxsize=None)
def package_version(package: str) -> str:
    """The installed version; importlib.metadata, which costs more to import than the rest of a
    no-change build, only when no `.dist-info` folder names it."""
    found = _installed().get(package.lower().replace("-", "_").replace(".", "_"))
    if found:
        return found
    from importlib import metadata
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


@functools.lru_cache(maxsize=None)
def _environment() -> tuple:
    return (("python", sys.version.split()[0]), ("numpy", package_version("numpy")),
            ("matplotlib", package_version("matplotlib")), ("pillow", package_version("pillow")))


def environment() -> dict:
    """What computations run with; read without importing NumPy or Matplotlib."""
    return dict(_environment())


@functools.lru_cache(maxsize=None)
def generator_digest() -> str:
    """The generator's own code and data (vocabulary.yaml, the math font): a change to it invalidates what it made.
    Read once per process: the code that runs is the code that was imported."""
    return digest(*(p.read_bytes() for p in sorted([*GENERATOR.glob("*.py"), *GENERATOR.glob("*.yaml"),
                                                    *GENERATOR.glob("fonts/*")])))


class Memo:
    def __init__(self, folder: Path | None):
        self.folder = folder
        self.used: dict[str, set[str]] = {}

    def _path(self, namespace: str, key_parts: tuple) -> Path | None:
        key = digest(namespace, *key_parts)
        self.used.setdefault(namespace, set()).add(key)
        return None if self.folder is None else self.folder / namespace / key

    def peek(self, namespace: str, key_parts: tuple) -> bytes | None:
        path = self._path(namespace, key_parts)
        try:
            return path.read_bytes() if path else None
        except OSError:
            return None

    def put(self, namespace: str, key_parts: tuple, data: bytes) -> None:
        path = self._path(namespace, key_parts)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMPORARY, dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)

    def get(self, namespace: str, key_parts: tuple, make: Callable[[], bytes]) -> bytes:
        data = self.peek(namespace, key_parts)
        if data is None:
            data = make()
            self.put(namespace, key_parts, data)
        return data

    def remember(self, namespace: str, key_parts: tuple, make: Callable[[], object]) -> object:
        """`make()`'s value, pickled under the key (the cache is the author's own folder, as trusted
        as the lab scripts the build runs); parsed pages and YAML, whose parsers cost more than this."""
        data = self.peek(namespace, key_parts)
        if data is not None:
            try:
                return pickle.loads(data)
            except Exception:       # damaged or from another version of a class: made anew
                pass
        value = make()
        self.put(namespace, key_parts, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        return value

    def prune(self) -> None:
        """Drop entries of the namespaces used in this build that it did not use."""
        if self.folder is None:
            return
        for namespace, keys in self.used.items():
            if not (self.folder / namespace).is_dir():      # only looked up, never stored
                continue
            for path in (self.folder / namespace).iterdir():
                if path.name not in keys:
                    path.unlink(missing_ok=True)
