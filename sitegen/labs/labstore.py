"""What a lab's finished run becomes: its cache entry, and what labs reading it get.

`store` turns the files a lab's process wrote into a cache entry (files/,
results.json with the build's provenance, manifest.json of its cells), or a
LabFailure naming the lab's own line; `read_results` checks a results.json
and `input_bytes` is what readers find in inputs/<id>/results.json.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
from pathlib import Path

from ..core.stored import sha256_of
from ..core.errors import BuildError, LabFailure, Problem
from ..project.nbsource import runs_as_notebook


def _non_finite(value, path="") -> list[str]:
    if isinstance(value, float):
        return [] if math.isfinite(value) else [path or "(top)"]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _non_finite(v, f"{path}[{i}]")]
    return []


def computed_at() -> str:
    from datetime import datetime, timezone
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch else datetime.now(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def read_results(data: bytes) -> dict | str:
    """A lab's results.json as an object, or what is wrong with it."""
    try:
        results = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        return f"wrote a results.json that is not valid JSON ({exc}): write it with json.dump"
    if not isinstance(results, dict):
        return f"wrote a results.json that holds {type(results).__name__}, not an object ({{\"key\": value, ...}})"
    bad = _non_finite(results)
    if bad:
        return f"failed: non-finite values (NaN or inf) in results.json at {', '.join(bad[:5])}"
    return results


def input_bytes(results: dict) -> bytes:
    """What labs that read this one find in inputs/<id>/results.json: its results as it wrote them,
    without the build's provenance (which hashes its figures, encoded after its cells have run)."""
    return json.dumps({k: v for k, v in results.items() if k != "provenance"}, indent=2).encode()


def written(folder: int, name: str) -> bytes:
    """A file a lab wrote in its folder (`folder`: a descriptor the build opened on it before the lab
    ran, which no rename or link of the lab's can move), read only if `name` there is a regular file (no
    link, no pipe a lab made to hang the build on, no device): OSError or ValueError otherwise."""
    import stat
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{name} is not a file")
        return handle.read()


def remove(path: Path) -> None:
    """A folder a lab could write in, gone: a link the lab left in its place is removed, not followed."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def store(lab, key, source, env, rel_script, run, folder: int, entry: Path, laid: frozenset = frozenset()) -> None:
    """Turn what lab `lab` wrote in its folder's work/ (`folder`: written's descriptor; its run's
    LabResult: `run`) into a new cache entry `entry` (a folder of the build's own, which the lab never
    held), or raise its failure. `laid`: the links the build laid in work/ (a notebook's neighbours, by
    their paths in it), which are not its."""
    if run.error:
        err = run.error
        raise LabFailure(Problem(rel_script, err["line"], f"lab {lab.id} failed: {err['message']}"), err["trace"])
    out = entry / "files"
    out.mkdir(parents=True)
    names = _copied(lab, rel_script, folder, out, laid)
    if "results.json" not in names:
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote no results.json"))
    results = read_results((out / "results.json").read_bytes())
    if isinstance(results, str):
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} {results}"))
    provenance = {"lab": lab.id, "script": rel_script,
                  "script_sha256": sha256_of(lab.script.read_bytes()) if not runs_as_notebook(lab.script) else None,
                  "seed": results.get("seed"), **env, "computed_at": computed_at(),
                  "cache_key": key, "source_key": source,
                  "artifacts": {name: sha256_of((out / name).read_bytes())
                                for name in sorted(names) if name != "results.json"}}
    results["provenance"] = provenance
    (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    manifest = {"cells": [{**c, "figures": [Path(f).name for f in c["figures"]],
                           "wrote": sorted({Path(f).name for f in c.get("wrote", ())} & names),
                           **({"outputs": [_flat(o) for o in c["outputs"]]} if "outputs" in c else {})}
                          for c in run.cells],
                "provenance": provenance, "reads": run.reads, "inputs": run.inputs,
                **({"resumed": run.resumed} if run.resumed else {}),
                "files": {name: sha256_of((out / name).read_bytes()) for name in sorted(names)}}
    (entry / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")


def _copied(lab, rel_script: str, folder: int, out: Path, laid: frozenset) -> set[str]:
    """Copy the files the lab wrote in its folder's work/ (but its inputs/) into `out`, each by its name;
    their names.
    Read through each folder's own descriptor and never through a link (os.fwalk, O_NOFOLLOW): a lab
    still running, or a process it started, may swap a folder or a file for a link as it is read, and
    what is copied is then still what lies inside `work`, never a file elsewhere."""
    import stat
    names: set[str] = set()

    def link(name: str, rel: str, here: int) -> bool:
        """Whether `name` is a link (a folder's too: fwalk lists it among folders, and enters it not)."""
        try:
            is_link = stat.S_ISLNK(os.stat(name, dir_fd=here, follow_symlinks=False).st_mode)
        except OSError:
            return True                 # (gone as it was read: nothing to copy)
        if is_link and rel not in laid:
            with contextlib.suppress(OSError):
                target = os.readlink(name, dir_fd=here)
                raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote a symlink {rel} -> {target}: a "
                                                        "lab's outputs must be files it wrote itself"))
        return is_link

    for top, folders, files, here_fd in os.fwalk("work", dir_fd=folder, follow_symlinks=False):
        here = os.path.relpath(top, "work")
        if here == ".":
            folders[:] = [name for name in folders if name != "inputs"]
        for name in folders:
            link(name, os.path.normpath(os.path.join(here, name)), here_fd)
        for name in sorted(files):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=here_fd)
            except OSError:
                link(name, os.path.normpath(os.path.join(here, name)), here_fd)
                continue
            with os.fdopen(fd, "rb") as source:
                found = os.fstat(source.fileno())
                if not stat.S_ISREG(found.st_mode):
                    continue            # (a pipe, a socket: no output)
                if name in names:
                    raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote two files named {name!r}: "
                                                            "give every artifact a distinct file name"))
                names.add(name)
                with open(out / name, "xb") as copy:
                    shutil.copyfileobj(source, copy, 1 << 20)
                os.utime(out / name, ns=(found.st_atime_ns, found.st_mtime_ns))     # (as the lab wrote it)
    return names


def _flat(output: dict) -> dict:
    """An output naming a file the lab wrote (a figure, an image) by its artifact name, as files/ keeps it."""
    if "data" not in output:
        return output
    data = {mime: Path(value).name if mime == "figure" else
            {**value, "file": Path(value["file"]).name} if isinstance(value, dict) and "file" in value else value
            for mime, value in output["data"].items()}
    return {**output, "data": data}
