"""A lab's artifacts and the cache entry that holds them.

An entry is a folder: `manifest.json` (each cell's printed output and
figures, the provenance, every file's SHA-256) and `files/` (results.json,
figures, downloads). The build's cache keeps one per lab in
`.cache/labs/<id>/<key>/`; a frozen lab is the same folder, committed in
`frozen/<id>/`. An entry is trusted only when every file matches its hash.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import NamedTuple, TYPE_CHECKING

from ..project.cells import Cell
from ..core.stored import Stored, file_state, settled, sha256_of

if TYPE_CHECKING:
    from ..project.config import Lab


NARROW = ".narrow.png"          # a figure's variant for small screens
FILES = "files"                 # an entry's folder of artifacts, beside its manifest.json


class CellOutput(NamedTuple):
    name: str
    stdout: str
    figures: tuple[str, ...]    # artifact names of the PNGs this cell saved
    value: str | None = None    # its last expression as Jupyter shows it (labs with display: jupyter)
    error: str | None = None    # the error it raised, as meant (a cell tagged raises-exception)
    outputs: tuple = ()         # display: jupyter: what it showed, as nbformat outputs (labipython.py)
    wrote: tuple[str, ...] = ()  # artifact names of the files it wrote or changed (its figures among them)


@dataclass(frozen=True)
class Artifacts:
    lab: Lab
    cells: tuple[Cell, ...]
    outputs: dict[str, CellOutput]
    files: dict[str, Path]      # artifact name -> file in the cache entry
    provenance: dict
    recomputed: bool            # False when read from the cache (or from frozen/)
    entry: Path | None = None   # the cache entry (or frozen/ folder) it was read from
    hashes: dict = None         # artifact name -> its SHA-256, as the manifest lists them
    sizes: dict = None          # artifact name -> its size in bytes, as found when read
    reads: dict = None          # what of the project it read, as it found it (labreads.py)
    inputs: dict = None         # lab id -> SHA-256 of the results.json it was given of that lab
    resumed: int = 0            # made by serve's run resumed after this cell (0: run from its first)

    # Pickled (what the last build found for every lab: labplan.py), the files are not given as
    # Paths, which cost more to unpickle than all the rest of two hundred labs: they are made again
    # from the entry on first use, and a lab's published files need none (stored).
    def __reduce__(self):
        state = dict(self.__dict__)
        state.pop("files", None)
        return _unpickled_artifacts, (state,)

    def __getattr__(self, name: str):
        if name != "files" or "hashes" not in self.__dict__:
            raise AttributeError(name)
        folder = self.entry / FILES
        files = {artifact: folder / artifact for artifact in self.hashes}
        object.__setattr__(self, "files", files)
        return files

    def stored(self, name: str) -> Stored:
        """Artifact `name` as published: its file, hash and size, known without reading it."""
        return Stored(f"{self.entry}/{FILES}/{name}", self.hashes[name], self.sizes[name])

    @cached_property
    def digest(self) -> str:
        """Everything of this lab a page or notebook can show, hashed (see artifacts_digest)."""
        return sha256_of(json.dumps([self.provenance, self.hashes, self.outputs], sort_keys=True).encode())

    @cached_property
    def figures(self) -> list[str]:
        """Every figure, once, in the order the cells first drew it (a cell may save one again)."""
        return list(dict.fromkeys(f for out in self.outputs.values() for f in out.figures))

    @cached_property
    def _numbers(self) -> dict[str, int]:
        return {name: number for number, name in enumerate((f for f in self.figures if not f.endswith(NARROW)), 1)}

    def figure_path(self, name: str) -> str:
        """Published path of a figure: figure-01.png, figure-02.png, ... in order; a figure's narrow
        variant (NAME.narrow.png, its panels stacked for phones) beside it, as figure-02.narrow.png."""
        if name.endswith(NARROW):
            return self.figure_path(name[: -len(NARROW)] + ".png")[: -len(".png")] + NARROW
        return f"{self.lab.images}/figure-{self._numbers[name]:02d}.png"

    def narrow(self, name: str) -> str | None:
        """The narrow variant the lab saved of figure `name`, if any."""
        variant = name[: -len(".png")] + NARROW
        return variant if variant in self.figures else None

    @cached_property
    def results(self) -> dict:
        """The lab's results.json, parsed once."""
        return json.loads(self.files["results.json"].read_text(encoding="utf-8"))


def _unpickled_artifacts(state: dict) -> Artifacts:
    art = object.__new__(Artifacts)
    art.__dict__.update(state)
    return art


def artifacts_digest(artifacts: dict[str, Artifacts]) -> str:
    """Everything of every lab a page can show, as one hash: its provenance, every file it published
    (results.json among them) and what each cell printed and showed. Two runs at the same
    SOURCE_DATE_EPOCH that computed other numbers have the same provenance, never the same files."""
    return sha256_of("\0".join(f"{lab}={art.digest}" for lab, art in sorted(artifacts.items())).encode())




def load_entry(lab: Lab, cells: tuple[Cell, ...], entry: Path, recomputed: bool, memo=None) -> Artifacts | None:
    """An intact cache entry as Artifacts, or None when missing or damaged. With a Memo, files
    whose state (size, times, inode) is as when they were last found intact are not hashed again
    (stored.py says why that is safe)."""
    try:
        manifest = json.loads((entry / "manifest.json").read_text(encoding="utf-8"))
        folder = entry / FILES
        files = {name: folder / name for name in manifest["files"]}
        state = [(name, *file_state(path)) for name, path in files.items()]
        if memo is None or memo.data("intact", (str(entry), manifest["files"], state)) is None:
            for name, digest in manifest["files"].items():
                if sha256_of(files[name].read_bytes()) != digest:
                    return None
            if memo is not None and settled(state):
                memo.data("intact", (str(entry), manifest["files"], state), lambda: b"ok")
        outputs = {c["name"]: CellOutput(c["name"], c["stdout"], tuple(c["figures"]), c.get("value"), c.get("error"),
                                     tuple(c.get("outputs", ())), tuple(c.get("wrote", ())))
                   for c in manifest["cells"]}
        if [c.name for c in cells] != list(outputs):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Artifacts(lab, cells, outputs, files, manifest["provenance"], recomputed, entry, manifest["files"],
                     {name: size for name, size, *_ in state}, manifest.get("reads", {}), manifest.get("inputs", {}),
                     manifest.get("resumed", 0))
