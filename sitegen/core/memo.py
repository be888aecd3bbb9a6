"""Slow, pure steps remembered in the cache folder, keyed on a hash of their inputs.

Used for what a prose edit would otherwise redo for nothing: highlighting a
lab's cells, parsing an unchanged page, rendering a page whose inputs did not
change. Rendered files are kept as blobs named by their hash and handed out as
Stored files, never read again unless they must be, and then checked against
their hash (stored.py): a blob changed since it was kept fails the build before
it publishes anything, which is then run again checking every blob it takes
(`verify`). Entries are written to a temporary name and renamed; entries a
build did not use are dropped at the end of a build (the sweep: a listing of
every folder it used), once the entries written since the last sweep are more
than a few (SWEEP_SLACK) or SWEEP_EVERY builds ran without one: a prose edit
leaves a handful, not worth listing thousands of names for each time.

An entry's value is a pure function of its key, so a copy of it is as good as
the file: at its end a build also writes every entry it used into one file
(PACK), which the next build reads once instead of opening a file per entry
(thousands on a large course). Entries the pack lacks are read from their files;
it is written again only when it lacks, or holds in vain, more than a few.
Beside it, a build records what it found item by item (RECORDS: a page's
entry, by name, under the phase's context), so that the next build, in the
same context, takes an unchanged page's entry without working out its key.
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

from . import stamp
from .cachedir import FOLDERS, LABS, MEMO
from .errors import DamagedFile
from .installed import normalised, versions
from .stamp import generator_files
from .stored import Stored, file_state, sha256_of

GENERATOR = Path(stamp.GENERATOR)     # the sitegen package
TEMPORARY = ".tmp-"       # what the cache holds under this prefix is being written, or was by a killed build
PACK = "pack"             # every entry the last build used, in one file: {namespace/key: bytes}, pickled
# Entries the pack may lack or hold in vain (at least; or a twentieth of those used) before it is written
# again: a prose edit changes a handful, which are read from their own files rather than rewriting it.
PACK_SLACK = 64
# What the last build recorded item by item (Memo.recorded), and how many entries were written in how
# many builds since the last sweep: {"phases": {phase: (context, items)}, "unswept": (entries, builds)}
RECORDS = "records"
SWEEP_SLACK = 256         # entries written since the last sweep (at least; or a tenth of those used)
SWEEP_EVERY = 50          # builds, at most, from one sweep to the next
# What turns sources into published bytes besides the generator's own code: every distribution the
# generator depends on (rendering: its own declaration, never listed here), and those that they bring
# for it (latexcodec, pybtex's; mdurl, markdown-it-py's).
BROUGHT = ("latexcodec", "mdurl", "webencodings", "markupsafe")


@functools.cache
def rendering() -> tuple[str, ...]:
    """The distributions the generator depends on (sitegen/dependencies.txt, which pyproject.toml reads
    too), and BROUGHT: a new version of any may change what it makes."""
    import re
    lines = (GENERATOR / "dependencies.txt").read_text(encoding="utf-8").splitlines()
    names = {re.match(r"[A-Za-z0-9._-]+", line)[0].lower() for line in lines if line.strip() and not line.startswith("#")}
    return tuple(sorted(names | set(BROUGHT)))


CHECK = 8       # bytes of BLAKE2b after an entry's own, which say that it is whole (Memo._read)


def _check(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=CHECK).digest()




def clear_temporaries(cache: Path) -> None:
    """Remove what killed builds left half-written in the cache (call with the cache's lock held), and
    a link where the cache keeps a folder of its own (labs/, memo/, live/): the build writes only
    what it made, never through a link to somewhere else (the link goes; what it points to stays)."""
    for name in FOLDERS:
        if (cache / name).is_symlink():
            (cache / name).unlink()
    labs = cache / LABS
    folders = [entry.path for entry in os.scandir(labs) if entry.is_dir(follow_symlinks=False)] if labs.is_dir() else []
    for folder in [*folders, cache / MEMO]:     # (a memo entry is written in memo/, then moved to its place)
        for stale in Path(folder).glob(f"{TEMPORARY}*"):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)


def read_pickled(path: Path | str) -> dict:
    """The dict pickled in `path` by an earlier build; {} when there is none yet, or it is damaged
    or cut short: as if there were none."""
    try:
        with open(path, "rb") as handle:
            found = pickle.load(handle)
    except Exception:
        return {}
    return found if isinstance(found, dict) else {}


def digest(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def package_version(package: str) -> str:
    """The installed version; importlib.metadata, which costs more to import than the rest of a
    no-change build, only when no `.dist-info` folder names it."""
    found = versions().get(normalised(package))
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


def installed_digest() -> str:
    """Every installed distribution and its version, hashed (not kept: serve sees an install): what
    a notebook's notes and download say of the packages its code imports follows from it."""
    return digest(*sorted(f"{name}={version}" for name, version in versions().items()))


def environment() -> dict:
    """What computations run with; read without importing NumPy or Matplotlib."""
    return dict(_environment())


def generator_digest() -> str:
    """The generator's own files (code, vocabulary.yaml, the math font, the theme): a change to it invalidates what it made.
    Read once per process: the code that runs is the code that was imported."""
    return _generator()[0]


def generator_states() -> dict[str, tuple]:
    """Each of those files' state (stored.file_state) as generator_digest read it, by relative path."""
    return _generator()[1]


@functools.lru_cache(maxsize=None)
def _generator() -> tuple[str, dict[str, tuple]]:
    parts, states = [], {}
    for rel, path in sorted(generator_files().items()):
        states[rel] = file_state(path)          # (before it is read: a write meanwhile shows in the next)
        with open(path, "rb") as handle:
            parts += [rel.encode(), handle.read()]
    return digest(*parts), states


@functools.lru_cache(maxsize=None)
def makers_digest() -> str:
    """What makes every remembered entry: the generator's code and the versions of Python and of every
    package that makes bytes. Part of every key and record context (Memo), so that no phase can forget
    it: a new version of either makes everything anew."""
    return digest(generator_digest(), sys.version, *(f"{name}={package_version(name)}" for name in rendering()))


class Memo:
    """Remembered entries, each named by its namespace and a hash of its key and of makers_digest()."""

    def __init__(self, folder: Path | None, verify: bool = False, whole: bool = True):
        self.folder = folder
        self.verify = verify        # check each blob handed out (stored) by its hash, not only as it is read
        self.used: dict[str, set[str]] = {}
        # The last build's pack and records, read on first use; not by a build that reads a few
        # entries, from their files, and prunes nothing (whole=False: patch.py).
        self.packed: dict[str, bytes] | None = None if whole else {}
        self.looked_up: dict[str, bytes] = {}           # entries this build found or stored: the next pack
        self.last_records: dict | None = None if whole else {}
        self.records: dict[str, tuple[str, dict]] = {}  # this build's: written by prune()
        self.written = 0                                # entries and blobs written by this build

    # Three kinds of entries, each with one verb: `data` (bytes), `file` (bytes kept as a Stored file,
    # handed out unread) and `value` (a picklable object). Each is called as (namespace, key, make):
    # the entry of that key, made by `make()` and kept when there is none (without `make`, None);
    # or with the name of an entry alone, as a phase's record names it (incremental.py), for a lookup.
    def name(self, namespace: str, key_parts: tuple) -> str | None:
        """The name of the key's entry (None without a memo folder)."""
        return None if self.folder is None else f"{namespace}/{digest(namespace, makers_digest(), *key_parts)}"

    def _lookup(self, namespace: str, key_parts: tuple | None) -> tuple[str | None, bytes | None]:
        """The entry's name (see above) and its bytes, if there is one."""
        name = namespace if key_parts is None else self.name(namespace, key_parts)
        return name, None if name is None else self._read(name)

    def data(self, namespace: str, key_parts: tuple | None = None, make: Callable[[], bytes] | None = None) -> bytes | None:
        """The bytes of the entry (see above); counted as used by this build."""
        name, found = self._lookup(namespace, key_parts)
        if found is None and make is not None:
            found = make()
            self._put(name, found)
        return found

    def file(self, namespace: str, key_parts: tuple | None = None,
             make: Callable[[], bytes] | None = None) -> bytes | Stored | None:
        """The entry's bytes as a Stored file (without a memo folder, the bytes), never read on a hit:
        a page or notebook that did not change is linked into the output, not read and written
        again. The entry holds the bytes' hash and size; the bytes are kept once, under their
        hash (blobs/), written even when a blob of that hash is there (it may have been changed).
        Not looked at unless `verify`: then handed out only if whole."""
        name, entry = self._lookup(namespace, key_parts)
        if entry is not None:
            sha, _, size = entry.decode().partition(" ")
            try:
                found = Stored(self._blob(sha), sha, int(size))
                if self.verify:
                    found.read()
                return found
            except (ValueError, DamagedFile):
                pass
        if make is None:
            return None
        data = make()
        if name is None:
            return data
        sha = sha256_of(data)
        self._write(self._blob(sha), data)
        self.written += 1
        self._put(name, f"{sha} {len(data)}".encode())
        return Stored(self._blob(sha), sha, len(data))

    def value(self, namespace: str, key_parts: tuple | None = None, make: Callable[[], object] | None = None) -> object:
        """The object pickled in the entry (the cache is the author's own folder, as trusted as the lab
        scripts the build runs): parsed pages and YAML, whose parsers cost more than unpickling. A
        lookup without `make` returns None when there is none (such values are never None)."""
        name, data = self._lookup(namespace, key_parts)
        if data is not None:
            try:
                return pickle.loads(data)[0]
            except Exception:       # damaged, or from another version of a class
                pass
        if make is None:
            return None
        value = make()
        self._put(name, pickle.dumps((value,), protocol=pickle.HIGHEST_PROTOCOL))
        return value

    def _read(self, name: str) -> bytes | None:
        """The bytes of the entry named `name`, if any; counted as used by this build."""
        namespace, _, key = name.partition("/")
        self.used.setdefault(namespace, set()).add(key)
        if self.packed is None:
            self.packed = read_pickled(f"{self.folder}/{PACK}")
        data = self.packed.get(name)
        if data is None:
            try:
                with open(f"{self.folder}/{name}", "rb") as handle:        # (pathlib costs more)
                    written = handle.read()
            except OSError:
                return None
            data = written[:-CHECK]
            if len(written) < CHECK or _check(data) != written[-CHECK:]:
                return None             # emptied, cut short or changed since it was written: not there
        self.looked_up[name] = data
        return data

    def _put(self, name: str | None, data: bytes) -> None:
        if name is None:
            return
        namespace, _, key = name.partition("/")
        self.used.setdefault(namespace, set()).add(key)
        self._write(f"{self.folder}/{name}", data + _check(data))
        self.written += 1
        self.looked_up[name] = data
        if self.packed and self.packed.get(name, data) != data:
            self.packed.clear()     # it held what could not be used (a class that changed): write it again

    def _write(self, path: Path | str, data: bytes) -> None:
        """Written to a temporary name in the memo's folder and moved: a killed build leaves no half
        entry, and what it left is in one folder (clear_temporaries)."""
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMPORARY, dir=self.folder)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)

    def _blob(self, sha: str) -> str:
        self.used.setdefault("blobs", set()).add(sha)
        return f"{self.folder}/blobs/{sha}"      # (a Path costs more, for every page of every build)

    # What the last build found item by item (a page checked, rendered, indexed), for a phase whose
    # context is unchanged to take each unchanged item's result as it is, by the name of its entry,
    # instead of working out and looking up the item's key: a few microseconds a page, not a tenth
    # of a millisecond. Only a build that succeeded writes them (prune).
    def recorded(self, phase: str, context: str) -> dict:
        """What the last build recorded for `phase`, if it did so in this `context`; else {}."""
        found = self._last_records().get("phases", {}).get(phase)
        context = digest(makers_digest(), context)
        return found[1] if (isinstance(found, tuple) and len(found) == 2 and found[0] == context
                            and isinstance(found[1], dict)) else {}

    def record(self, phase: str, context: str, items: dict, used: list[str] = ()) -> None:
        """This build's results of `phase` in `context`, item by item, for the next build; `used`: the
        entries of those taken as they were (not read: a phase that needs their bytes looks them
        up), counted as used so that prune keeps them."""
        for name in used:
            namespace, _, key = name.partition("/")
            self.used.setdefault(namespace, set()).add(key)
        if self.folder is not None:
            self.records[phase] = (digest(makers_digest(), context), items)

    def _last_records(self) -> dict:
        if self.last_records is None:
            self.last_records = read_pickled(f"{self.folder}/{RECORDS}") if self.folder is not None else {}
        return self.last_records

    def prune(self, sweep: bool = False) -> None:
        """Write this build's records; pack the entries it used for the next build (unless the pack
        it read differs by only a few); and, when it is time (see the module's docstring) or
        `sweep`, drop the entries of the namespaces it used that it did not use."""
        if self.folder is None:
            return
        packed = self.packed or {}
        differ = len(self.looked_up.keys() ^ packed.keys())
        if not packed or differ > max(PACK_SLACK, len(self.looked_up) // 20):
            self._write(f"{self.folder}/{PACK}", pickle.dumps(self.looked_up, protocol=pickle.HIGHEST_PROTOCOL))
        last = self._last_records().get("unswept")
        entries, builds = last if isinstance(last, tuple) and len(last) == 2 else (0, SWEEP_EVERY)
        entries, builds = entries + self.written, builds + 1
        used = sum(map(len, self.used.values()))
        sweep = sweep or entries > max(SWEEP_SLACK, used // 10) or builds >= SWEEP_EVERY
        self._write(f"{self.folder}/{RECORDS}", pickle.dumps(
            {"phases": self.records, "unswept": (0, 0) if sweep else (entries, builds)}, protocol=pickle.HIGHEST_PROTOCOL))
        if not sweep:
            return
        for namespace, keys in self.used.items():
            try:
                names = os.listdir(f"{self.folder}/{namespace}")     # (a Path per entry costs ten times this)
            except (FileNotFoundError, NotADirectoryError):           # only looked up, never stored
                continue
            for name in (set(names).difference(keys) if not keys.issuperset(names) else ()):
                try:
                    os.unlink(f"{self.folder}/{namespace}/{name}")
                except FileNotFoundError:
                    pass
