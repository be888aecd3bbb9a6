"""A lab's run as one value each way: what the build asks for (LabRun) and what the run reports (LabResult).

The scheduler (compute.py) plans a LabRun once, from the lab and the build, and it crosses whole
to the lab host (labhost.py), to the lab's process (labrun.py) and, under serve, to the checkpoint
a run resumes from (checkpoint.py). The lab's process writes its LabResult as JSON at the run's
`result`; the scheduler reads it back, adds what the build knows of it, and stores it (labstore.py).
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field

from ..project.cells import Cell
from .sandbox import Access


NO_SPACE = 28        # a lab's exit code when the disk was too full to write even its failure (ENOSPC)


@dataclass(frozen=True)
class LabRun:
    """One run of a lab, as its process is given it (picklable: it crosses processes)."""
    script: str                     # the lab's script or notebook
    cells: tuple[Cell, ...]         # what it runs (a run resumed from a checkpoint: the cells from there on)
    display: str                    # "script" or "jupyter": how what a cell shows is captured (labipython.py)
    fonts: tuple[str, ...]          # what its figures' text falls back on (figurefonts.py)
    staging: str                    # its own folder: its working folder, TMPDIR and result are in it
    workdir: str                    # where its cells run
    result: str                     # where its LabResult is written
    preview: bool = False           # draws no figure and ends once its results.json is handed on (compute.py)
    watch: tuple[str, ...] = ()     # (project, cache[, folders laid out to stand for the project's]): what
    #                                 of the project it reads is recorded (labreads.py); (): nothing is
    provided: tuple[str, ...] = ()  # the files the build laid in its folder: it reports which it opened
    access: Access = Access()       # what it may read, reach, see and allocate (sandbox.py)
    writable: str | None = None     # serve's: the folder holding `staging` that it may write instead
    budget: int = 0                 # serve's: bytes of memory its checkpoints may hold; 0: it takes none
    resume: int = 0                 # serve's: start from its checkpoint after this cell, if the host has one
    warm: tuple[str, ...] = ()      # what the host imports before it forks the run (warm.py)


@dataclass
class LabResult:
    """What a lab's run reports: what each cell printed, showed and saved, or why it failed; what it read."""
    cells: list[dict]               # per cell run: {"stdout", "figures", "wrote", "value", "error"[, "outputs"]}
    error: dict | None = None       # {"line", "message", "trace"}: the lab failed there
    reads: dict[str, str] = field(default_factory=dict)       # what of the project it read -> what that held
    packages: list[str] = field(default_factory=list)         # the top-level packages it imported
    confined: bool = False          # whether its writes were confined (sandbox.confine)
    unconfined: list[str] = field(default_factory=list)       # what of it the system could not confine
    checkpoints: list[dict] = field(default_factory=list)     # serve's: those taken ({"after", "pid", ...})
    resumed: int = 0                # serve's: the cell it resumed after; 0: it ran from the first
    skipped: str = ""               # serve's: why no checkpoint was taken after some cell
    dropped: int = 0                # serve's: of its oldest checkpoints, how many ended to stay in budget
    inputs: dict[str, str] = field(default_factory=dict)      # the build's: other labs' results it was given

    @staticmethod
    def failed(message: str) -> LabResult:
        """The result of a run that ended without one of its own (killed, stopped, or no run at all)."""
        return LabResult([], {"line": 0, "trace": "", "message": message})

    def to_json(self) -> str:
        return json.dumps(_whole_text(dataclasses.asdict(self)))

    @classmethod
    def from_json(cls, text: str) -> LabResult:
        """The result a lab's process wrote, checked for the shape the harness writes (code the lab ran
        may have written anything there): ValueError for any other."""
        data = json.loads(text)
        if not (isinstance(data, dict) and "cells" in data and _shaped(data, RESULT)):
            raise ValueError("not a result as the lab's harness writes one")
        return cls(**data)


# The shape of a LabResult's JSON, as the harness writes it: each key's type (a tuple: a list of that,
# a dict: a mapping of str to that, a set: one of these types).
_TEXT, _NUMBER = {str, type(None)}, {int, float}
OUTPUT = dict       # (an nbformat output: checked where it is shown, outputs.py)
CELL = {"name": str, "stdout": str, "figures": (str,), "wrote": (str,), "value": _TEXT, "error": _TEXT,
        "outputs": (OUTPUT,)}
RESULT = {"cells": (CELL,), "error": {type(None), frozenset({("line", int), ("message", str), ("trace", str)})},
          "reads": {str: str}, "packages": (str,), "confined": bool, "unconfined": (str,),
          "checkpoints": ({"after": int, "pid": int, "reads": {str: str}, "provided": (str,)},), "resumed": int,
          "skipped": str, "dropped": int, "inputs": {str: str}}


def _shaped(value, shape) -> bool:
    """Whether `value` has `shape` (RESULT's notation); a record's keys are checked, never more than it names."""
    if isinstance(shape, frozenset):                    # a record whose keys are all required
        return isinstance(value, dict) and value.keys() == {key for key, _ in shape} and \
            all(_shaped(value[key], kind) for key, kind in shape)
    if isinstance(shape, set):
        return any(_shaped(value, kind) for kind in shape)
    if isinstance(shape, tuple):
        return isinstance(value, list) and all(_shaped(item, shape[0]) for item in value)
    if isinstance(shape, dict) and str in shape:        # a mapping of text to one shape
        return isinstance(value, dict) and all(isinstance(k, str) and _shaped(v, shape[str]) for k, v in value.items())
    if isinstance(shape, dict):                         # a record: the keys it has, of these
        return isinstance(value, dict) and value.keys() <= shape.keys() and \
            all(_shaped(value[key], shape[key]) for key in value)
    if shape is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, shape)


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _whole_text(value):
    """`value` with every string whole Unicode: a lone surrogate a lab printed ("\\ud800", half of a
    character) is U+FFFD, as a browser shows what it cannot read; a pair stays the character it is."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace") \
            if LONE_SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {_whole_text(key): _whole_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_text(item) for item in value]
    return value
