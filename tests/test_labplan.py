"""What the last build found for every lab (sitegen/labs/labplan.py): taken as it is while all it was
found from is so, worked out lab by lab again as soon as any of it changed."""
from __future__ import annotations

import time

import pytest

from sitegen.core.stored import SETTLED_NS

from support import edit, run_build, tiny_site


@pytest.fixture()
def built(tmp_path):
    """The tiny site, whose lab imports a project module, computed into the cache."""
    root, cache = tiny_site(tmp_path / "site"), tmp_path / "cache"
    (root / "compute/helper.py").write_text("FACTOR = 2\n", encoding="utf-8")
    edit(root / "compute/tiny.py", "import json\n", "import json\nimport helper\n")
    assert run_build(root, tmp_path / "dist", cache).returncode == 0
    time.sleep(SETTLED_NS / 1e9)      # files written just now are not trusted by their state yet
    return root, cache


def scheduled(root, cache, monkeypatch) -> tuple[object, list[str]]:
    """A LabScheduler as the build makes it, and the labs whose keys it worked out."""
    from sitegen.labs import compute, labjobs
    from sitegen.project.config import load_config
    from sitegen.core.memo import Memo
    from sitegen.core.sources import take_snapshot, source_files
    worked_out = []
    real = labjobs.source_key
    monkeypatch.setattr(labjobs, "source_key", lambda cfg, lab, *a, **k: worked_out.append(lab.id) or real(cfg, lab, *a, **k))
    memo = Memo(cache / "memo")
    labs = compute.LabScheduler(load_config(root, memo), cache, memo=memo, snapshot=take_snapshot(source_files(root))[0])
    memo.prune()
    return labs, worked_out


def test_a_lab_found_in_the_cache_is_found_without_its_key_next_time(built, monkeypatch):
    first, worked_out = scheduled(*built, monkeypatch)
    assert worked_out == ["tiny"] and not first.todo
    again, worked_out = scheduled(*built, monkeypatch)
    assert worked_out == [] and not again.todo
    assert again.artifacts["tiny"].provenance == first.artifacts["tiny"].provenance
    assert again.artifacts["tiny"].files == first.artifacts["tiny"].files


def _module_edited(root, cache):
    (root / "compute/helper.py").write_text("FACTOR = 3\n", encoding="utf-8")


def _module_shadowed(root, cache):
    (root / "helper.py").write_text("FACTOR = 4\n", encoding="utf-8")     # found from the project's root too


def _entry_damaged(root, cache):
    results = next(cache.glob("labs/tiny/*/files/results.json"))
    results.write_bytes(results.read_bytes().replace(b"{", b"{ ", 1))


@pytest.mark.parametrize("change", [_module_edited, _module_shadowed, _entry_damaged])
def test_what_the_labs_were_found_from_changing_has_them_worked_out_again(built, monkeypatch, change):
    first, _ = scheduled(*built, monkeypatch)
    change(*built)
    again, worked_out = scheduled(*built, monkeypatch)
    assert worked_out == ["tiny"]
    assert [job.lab.id for job in again.todo] == ["tiny"]      # a new key, or a damaged entry: computed anew


def test_remembered_artifacts_name_their_files_and_make_the_paths_again_on_first_use(built, monkeypatch):
    import pickle
    first, _ = scheduled(*built, monkeypatch)
    art = first.artifacts["tiny"]
    copy = pickle.loads(pickle.dumps(art))
    assert "files" not in copy.__dict__ and copy.stored("results.json") == art.stored("results.json")
    assert copy.files == art.files and copy.provenance == art.provenance and copy.figures == art.figures


def test_the_installed_distributions_are_listed_once_however_many_labs_imported_them(tmp_path, monkeypatch):
    """(Listed once for each lab, they took half the time of a prose edit on a course of 200 labs.)"""
    from sitegen.core import installed
    from sitegen.labs.labreads import INSTALLED
    root, cache = tiny_site(tmp_path / "site"), tmp_path / "cache"
    for n in (2, 3):                # three labs, each importing NumPy and Matplotlib
        (root / f"compute/tiny{n}.py").write_bytes((root / "compute/tiny.py").read_bytes())
        (root / f"content/tiny{n}.md").write_text(f"---\ntitle: 小实验 {n}\nlab: tiny{n}\n---\n::: cell setup\n",
                                                  encoding="utf-8")
        with open(root / "site.yaml", "a", encoding="utf-8") as config:
            config.write(f"  - id: tiny{n}\n    title: 小实验 {n}\n    script: compute/tiny{n}.py\n"
                         f"    images: tiny{n}/images\n    downloads: tiny{n}/materials\n    page: tiny{n}.md\n")
    assert run_build(root, tmp_path / "dist", cache).returncode == 0
    time.sleep(SETTLED_NS / 1e9)
    scheduled(root, cache, monkeypatch)                 # (the plan, remembered as a build takes it)
    listed, real = [], installed.versions
    monkeypatch.setattr(installed, "versions", lambda: listed.append(1) or real())
    labs, worked_out = scheduled(root, cache, monkeypatch)
    assert worked_out == [] and not labs.todo and sorted(labs.artifacts) == ["tiny", "tiny2", "tiny3"]
    assert all(any(rel.startswith(INSTALLED) for rel in art.reads) for art in labs.artifacts.values())
    assert len(listed) == 1
