"""Frozen labs: computed once where they can be, committed in frozen/, reused by builds elsewhere
while the lab's code is unchanged, and refused (never silently stale) once it changes."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from support import edit, run_build, tiny_site, tree_bytes


def test_a_frozen_lab_is_reused_elsewhere_and_refused_once_its_code_changes(tmp_path):
    root = tiny_site(tmp_path / "site")
    frozen = run_build(root, tmp_path / "dist", tmp_path / "cache", "freeze")
    assert frozen.returncode == 0, frozen.stderr
    assert "froze frozen/tiny: commit it" in frozen.stdout
    manifest = json.loads((root / "frozen/tiny/manifest.json").read_text(encoding="utf-8"))
    assert manifest["provenance"]["source_key"] and (root / "frozen/tiny/files/results.json").is_file()

    # Elsewhere: a fresh clone with an empty cache, and another NumPy than the one that froze it.
    clone = tmp_path / "clone"
    shutil.copytree(root, clone)
    results = (clone / "frozen/tiny/files/results.json").read_text(encoding="utf-8")
    elsewhere = run_build(clone, tmp_path / "clone-dist", tmp_path / "clone-cache")
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert "[tiny frozen]" in elsewhere.stdout and not (tmp_path / "clone-cache/labs").exists()
    assert (tmp_path / "clone-dist/materials/results.json").read_text(encoding="utf-8") == results

    # The lab's code changes: the build refuses to publish the frozen numbers, naming the lab.
    before = tree_bytes(tmp_path / "clone-dist")
    edit(clone / "compute/tiny.py", "/ 4", "/ 5")
    stale = run_build(clone, tmp_path / "clone-dist", tmp_path / "clone-cache")
    assert stale.returncode == 1 and "Traceback" not in stale.stderr
    assert ("error: frozen/tiny: lab tiny is frozen, but its script (or a module it imports) changed since: "
            "run `python build.py freeze tiny` where it can be computed and commit frozen/tiny, or delete "
            "frozen/tiny to compute it in every build") in stale.stderr
    assert tree_bytes(tmp_path / "clone-dist") == before

    # Freezing again computes it anew and the build goes on.
    again = run_build(clone, tmp_path / "clone-dist", tmp_path / "clone-cache", "freeze", "tiny")
    assert again.returncode == 0 and "tiny computed" in again.stdout, again.stderr
    assert json.loads((clone / "frozen/tiny/files/results.json").read_text(encoding="utf-8"))["total"] == sum(range(6)) / 5


def test_a_frozen_lab_ignores_the_versions_it_runs_with(tmp_path, monkeypatch):
    """As Quarto's freeze: the point is to reuse results where they cannot be computed."""
    from sitegen.core import memo
    from sitegen.labs.compute import compute_labs
    from sitegen.project.config import load_config
    root = tiny_site(tmp_path / "site")
    assert run_build(root, tmp_path / "dist", tmp_path / "cache", "freeze").returncode == 0
    real = memo._environment()
    monkeypatch.setattr(memo, "_environment", lambda: tuple((k, "0.1" if k == "numpy" else v) for k, v in real))
    art = compute_labs(load_config(root), tmp_path / "other-cache")["tiny"]
    assert not art.recomputed and art.entry == root / "frozen/tiny"


def test_freezing_an_unknown_lab_names_the_labs(tmp_path):
    root = tiny_site(tmp_path / "site")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "freeze", "tiy")
    assert result.returncode == 1 and "error: site.yaml: freeze: no lab 'tiy' (labs: tiny)" in result.stderr
    assert not (root / "frozen").exists()


@pytest.mark.slow
def test_a_frozen_reader_stands_while_what_it_read_is_the_same_and_is_refused_once_it_differs(tmp_path):
    from support import reading_site
    root = reading_site(tmp_path / "site")
    assert run_build(root, tmp_path / "dist", tmp_path / "cache", "freeze", "reader").returncode == 0
    edit(root / "compute/tiny.py", "print('saved')", "print('saved', 'again')")     # tiny's results: the same
    same = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert same.returncode == 0 and re.search(r"\[tiny computed in [0-9.]+ s, reader frozen\]", same.stdout), same.stderr
    before = tree_bytes(tmp_path / "dist")
    edit(root / "compute/tiny.py", "/ 4", "/ 5")                                      # tiny's results: others
    stale = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert stale.returncode == 1 and "Traceback" not in stale.stderr
    assert ("error: frozen/reader: lab reader is frozen, but the results of tiny, which it reads, changed since: "
            "run `python build.py freeze reader`") in stale.stderr
    assert tree_bytes(tmp_path / "dist") == before
