"""What a lab's finished run becomes: its cache entry, and what labs reading it get.

`store` turns the files a lab's process wrote into a cache entry (files/,
results.json with the build's provenance, manifest.json of its cells), or a
LabFailure naming the lab's own line; `read_results` checks a results.json
and `input_bytes` is what readers find in inputs/<id>/results.json.
"""
from __future__ import annotations

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


def store(lab, key, source, env, rel_script, run, work, staging) -> None:
    """Turn what lab `lab` wrote in `work` (its run's LabResult: `run`) into a cache entry in `staging`,
    or raise its failure."""
    if run.error:
        err = run.error
        raise LabFailure(Problem(rel_script, err["line"], f"lab {lab.id} failed: {err['message']}"), err["trace"])
    files: dict[str, Path] = {}
    for path in sorted(p for p in work.rglob("*") if p.relative_to(work).parts[0] != "inputs"):
        if path.is_symlink():
            raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote a symlink {path.relative_to(work)} -> "
                                     f"{os.readlink(path)}: a lab's outputs must be files it wrote itself"))
        if not path.is_file():
            continue
        if path.name in files:
            raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote two files named {path.name!r}: "
                                     "give every artifact a distinct file name"))
        files[path.name] = path
    if "results.json" not in files:
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} wrote no results.json"))
    results = read_results(files["results.json"].read_bytes())
    if isinstance(results, str):
        raise BuildError(Problem(rel_script, 0, f"lab {lab.id} {results}"))
    out = staging / "files"
    out.mkdir()
    for name, path in files.items():
        if name != "results.json":
            shutil.move(path, out / name)
    provenance = {"lab": lab.id, "script": rel_script,
                  "script_sha256": sha256_of(lab.script.read_bytes()) if not runs_as_notebook(lab.script) else None,
                  "seed": results.get("seed"), **env, "computed_at": computed_at(),
                  "cache_key": key, "source_key": source,
                  "artifacts": {name: sha256_of((out / name).read_bytes())
                                for name in sorted(files) if name != "results.json"}}
    results["provenance"] = provenance
    (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    manifest = {"cells": [{**c, "figures": [Path(f).name for f in c["figures"]],
                           **({"outputs": [_flat(o) for o in c["outputs"]]} if "outputs" in c else {})}
                          for c in run.cells],
                "provenance": provenance, "reads": run.reads, "inputs": run.inputs,
                **({"resumed": run.resumed} if run.resumed else {}),
                "files": {name: sha256_of((out / name).read_bytes()) for name in sorted(files)}}
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(work)


def _flat(output: dict) -> dict:
    """An output naming a file the lab wrote (a figure, an image) by its artifact name, as files/ keeps it."""
    if "data" not in output:
        return output
    data = {mime: Path(value).name if mime == "figure" else
            {**value, "file": Path(value["file"]).name} if isinstance(value, dict) and "file" in value else value
            for mime, value in output["data"].items()}
    return {**output, "data": data}
