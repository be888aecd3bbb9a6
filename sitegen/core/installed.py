"""The installed distributions, read from their `.dist-info` folders on sys.path.

The wheel spec fixes a distribution's folder as name-version.dist-info, and
lists its top-level modules in top_level.txt or, failing that, in its RECORD:
one listing of each folder of sys.path gives every version, and a few hundred
small files the module each one provides. importlib.metadata does the same for
a tenth of a second, and costs more to import than a no-change build takes.

Nothing is kept between calls but what a folder's own time stamp vouches for:
installing or removing a distribution changes the listing of its folder, so a
long-lived process (serve) sees it in its next build.

Only os and sys are imported here: a no-change build asks for versions.
"""
from __future__ import annotations

import os
import sys

DIST_INFO = ".dist-info"
_OWNERS: dict = {}          # (each folder of sys.path, its mtime) -> {top-level module: distribution}
_DISTS: dict = {}           # (each folder of sys.path, its mtime) -> {distribution: (version, its .dist-info folder)}


def normalised(package: str) -> str:
    return package.lower().replace("-", "_").replace(".", "_")


def _listing(entry: str) -> list[str]:
    try:
        return os.listdir(entry or ".")
    except OSError:
        return []


def versions() -> dict[str, str]:
    """Every installed distribution's version, by normalised name (the first on sys.path wins, as
    the import system's)."""
    return {dist: version for dist, (version, _) in _each_folder(_DISTS, _dists_in).items()}


def owners() -> dict[str, str]:
    """The distribution (normalised name) that provides each top-level module, by the module's name."""
    return _each_folder(_OWNERS, _owners_in)


def _each_folder(kept: dict, read) -> dict:
    """What `read` finds in each folder of sys.path, the first folder's where two find the same name;
    a folder's is read again only when its listing changed (its time stamp), else taken from `kept`."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            key = (entry, os.stat(entry or ".").st_mtime_ns)
        except OSError:
            continue
        if key not in kept:
            kept[key] = read(entry)
        for name, value in kept[key].items():
            found.setdefault(name, value)
    return found


def _dists_in(entry: str) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for name in _listing(entry):
        if name.endswith(DIST_INFO):
            dist, _, version = name[: -len(DIST_INFO)].partition("-")
            found.setdefault(normalised(dist), (version, os.path.join(entry or ".", name)))
    return found


def providers(modules) -> dict[str, str]:
    """The installed distribution (normalised name) that provides each of these top-level modules, for
    those one does: by its list of modules, or failing that (an editable install) by its name."""
    found, names = owners(), versions()
    provided = {module: found.get(module) or normalised(module) for module in modules}
    return {module: dist for module, dist in provided.items() if dist in names}


def project_name(dist: str) -> str | None:
    """The name a distribution (by normalised name) gives itself, its METADATA's Name (PyYAML for
    pyyaml, as requirements.txt would write it); that of the first on sys.path, as versions()."""
    _, folder = _each_folder(_DISTS, _dists_in).get(dist, (None, None))
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, "METADATA"), encoding="utf-8") as handle:
            for line in handle:         # (its headers, up to the first empty line)
                if not line.strip():
                    break
                if line.startswith("Name:"):
                    return line[len("Name:"):].strip()
    except OSError:
        pass
    return None


def _owners_in(entry: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in sorted(_listing(entry)):
        if not name.endswith(DIST_INFO):
            continue
        dist = normalised(name[: -len(DIST_INFO)].partition("-")[0])
        folder = os.path.join(entry or ".", name)
        try:
            with open(os.path.join(folder, "top_level.txt"), encoding="utf-8") as handle:
                modules = handle.read().split()
        except OSError:
            try:
                with open(os.path.join(folder, "RECORD"), encoding="utf-8") as handle:
                    paths = [line.split(",", 1)[0] for line in handle]
            except OSError:
                continue
            tops = {path.split("/", 1)[0] for path in paths if "/" in path or path.endswith(".py")}
            modules = sorted(top.removesuffix(".py") for top in tops
                             if top not in ("..", "__pycache__") and not top.endswith((DIST_INFO, ".data")))
        for module in modules:
            found.setdefault(module, dist)
    return found
