"""A failed check fails the build, names the check, and leaves the last good dist/ alone."""
from __future__ import annotations

import pytest

from support import copy_project, run_build, tree_bytes

LAB = "compute/lab09_vision_attention.py"


def break_lab(root, old: str, new: str) -> int:
    path = root / LAB
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return text[: text.index(old)].count("\n") + 1


@pytest.mark.slow
def test_softmax_over_wrong_axis_fails_the_build_and_keeps_dist(tmp_path):
    root = copy_project(tmp_path / "project")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    assert run_build(root, out, cache).returncode == 0
    before = tree_bytes(out)
    break_lab(root, "e/e.sum(axis=-1,keepdims=True)", "e/e.sum(axis=-2,keepdims=True)")
    result = run_build(root, out, cache)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if "softmax_rows_sum_one" in line]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {LAB}:")
    assert "check softmax_rows_sum_one failed: row sums" in lines[0]
    assert "Traceback" not in result.stderr
    assert tree_bytes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "dist", "project"]


def test_exception_in_lab_names_the_failing_line(tmp_path):
    root = copy_project(tmp_path / "project")
    line = break_lab(root, "patches = patchify(image)", "patches = patchify(image_typo)")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1
    assert f"error: {LAB}:{line}: lab lab09 failed: NameError: name 'image_typo' is not defined" in result.stderr
    assert not (tmp_path / "dist").exists()
    debug = run_build(root, tmp_path / "dist", tmp_path / "cache", "--debug")
    assert "Traceback" in debug.stderr and debug.returncode == 1


def test_every_seed_check_recorded(site_results):
    assert set(site_results["checks"]) >= {"manual_readback", "softmax_rows_sum_one", "residuals",
                                           "identical_tokens_uniform", "no_position_permutation_equivariance"}
    assert all(value is True for value in site_results["checks"].values())
