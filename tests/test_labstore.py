"""What a lab's finished run becomes: a cache entry with the build's provenance, or a failure
naming the lab's script; and what labs reading it find in inputs/<id>/results.json."""
import hashlib
import json

import pytest

from sitegen.project.config import Lab
from sitegen.core.errors import BuildError, LabFailure
from sitegen.labs.labstore import input_bytes, read_results, store
from sitegen.labs.runs import LabResult


def finished_run(tmp_path, results: bytes = b'{"x": [1.5, 2.0], "seed": 7}'):
    """A lab's staging folder as its process leaves it: work/ with what it wrote, and the run."""
    script = tmp_path / "compute/tiny.py"
    script.parent.mkdir(parents=True)
    script.write_text("# %% save\n", encoding="utf-8")
    lab = Lab(id="tiny", title="Tiny", script=script, images="images", downloads="materials", notebook="",
              page="index.md", inputs=(), line=1)
    staging = tmp_path / "staging"
    (staging / "work/out").mkdir(parents=True)
    (staging / "work/out/results.json").write_bytes(results)
    (staging / "work/out/line.png").write_bytes(b"\x89PNG figure")
    (staging / "work/inputs/other").mkdir(parents=True)
    (staging / "work/inputs/other/results.json").write_text("{}", encoding="utf-8")
    run = LabResult([{"name": "save", "stdout": "saved\n", "figures": ["out/line.png"], "value": None,
                      "error": None}])
    return lab, run, staging


def store_run(lab, run, staging, entry: str = "entry", laid: frozenset = frozenset()):
    """Store what the lab wrote in `staging` (read through a descriptor, as the build does) into the entry
    beside it (the build's own folder): returned."""
    import os
    folder = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    try:
        store(lab, "cache-key", "source-key", {"python": "3.11"}, "compute/tiny.py", run, folder,
              staging.with_name(entry), laid)
    finally:
        os.close(folder)
    return staging.with_name(entry)


def test_a_finished_run_becomes_an_entry_whose_provenance_hashes_every_file(tmp_path):
    lab, run, staging = finished_run(tmp_path)
    staging = store_run(lab, run, staging)
    assert sorted(p.name for p in (staging / "files").iterdir()) == ["line.png", "results.json"]   # (not the
    results = json.loads((staging / "files/results.json").read_text(encoding="utf-8"))      # results it read)
    provenance = results.pop("provenance")
    assert results == {"x": [1.5, 2.0], "seed": 7}
    assert provenance["cache_key"] == "cache-key" and provenance["seed"] == 7 and provenance["python"] == "3.11"
    assert provenance["artifacts"] == {"line.png": hashlib.sha256(b"\x89PNG figure").hexdigest()}
    manifest = json.loads((staging / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["cells"][0]["figures"] == ["line.png"]
    assert set(manifest["files"]) == {"line.png", "results.json"}


def test_a_failed_run_is_reported_at_the_line_of_the_lab_script(tmp_path):
    lab, run, staging = finished_run(tmp_path)
    run.error = {"line": 3, "message": "AssertionError: y too small", "trace": "Traceback ..."}
    with pytest.raises(LabFailure) as failure:
        store_run(lab, run, staging)
    assert failure.value.report() == "error: compute/tiny.py:3: lab tiny failed: AssertionError: y too small"
    assert failure.value.trace == "Traceback ..."


@pytest.mark.parametrize("mistake, message", [
    ("no results", "lab tiny wrote no results.json"),
    ("two names", "lab tiny wrote two files named 'line.png': give every artifact a distinct file name"),
    ("symlink", "lab tiny wrote a symlink out/link.txt -> /etc/passwd: a lab's outputs must be files it wrote itself"),
    ("nan", "lab tiny failed: non-finite values (NaN or inf) in results.json at x[1]"),
])
def test_what_a_lab_wrote_wrong_is_named(tmp_path, mistake, message):
    lab, run, staging = finished_run(tmp_path, b'{"x": [1.5, NaN]}' if mistake == "nan" else b'{"x": 1}')
    work = staging / "work/out"
    if mistake == "no results":
        (work / "results.json").unlink()
    elif mistake == "two names":
        (work / "more").mkdir()
        (work / "more/line.png").write_bytes(b"another")
    elif mistake == "symlink":
        (work / "link.txt").symlink_to("/etc/passwd")
    with pytest.raises(BuildError) as failure:
        store_run(lab, run, staging)
    assert failure.value.report() == f"error: compute/tiny.py: {message}"


def test_a_folder_swapped_for_a_link_is_never_followed_and_what_lies_outside_stays_where_it_is(tmp_path):
    """What a lab (or something it started, still running) makes of its folder as the build stores it: a
    folder become a link to the course's, say. Nothing outside the lab's folder is read, copied or moved."""
    lab, run, staging = finished_run(tmp_path)
    (tmp_path / "course").mkdir()
    (tmp_path / "course/.env").write_text("API_TOKEN=secret", encoding="utf-8")
    (staging / "work/zzz").symlink_to(tmp_path / "course")
    with pytest.raises(BuildError, match="wrote a symlink zzz -> "):
        store_run(lab, run, staging)
    assert (tmp_path / "course/.env").read_text(encoding="utf-8") == "API_TOKEN=secret"
    assert not list(tmp_path.joinpath("entry").rglob(".env"))
    # A link the build laid itself (a notebook's neighbour) is no output of the lab's, and is not read.
    store_run(lab, run, staging, "entry2", frozenset({"zzz"}))
    assert sorted(p.name for p in (tmp_path / "entry2/files").iterdir()) == ["line.png", "results.json"]


def test_results_must_be_a_json_object_of_finite_numbers():
    assert read_results(b'{"a": [1, 2.5]}') == {"a": [1, 2.5]}
    assert "not valid JSON" in read_results(b"{'a': 1}")
    assert "holds list, not an object" in read_results(b"[1, 2]")
    assert read_results(b'{"a": {"b": [Infinity]}}').endswith("in results.json at a.b[0]")


def test_readers_get_the_results_as_the_lab_wrote_them_without_the_builds_provenance():
    results = {"x": [1.5], "provenance": {"cache_key": "k"}}
    assert json.loads(input_bytes(results)) == {"x": [1.5]}
    assert input_bytes(results) == json.dumps({"x": [1.5]}, indent=2).encode()
