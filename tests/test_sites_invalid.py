"""Every kind of mistake an author makes gets a clear error and costs nothing.

Each folder in tests/sites_invalid/ (but _base) is one mistake, made to the
minimal valid site in _base/ (in the generator's theme):
`edits.yaml` lists text replacements, each of which must match its file
exactly once, any other file is laid over the site, `expected.txt` holds the
lines the build must print (exactly), and `args.txt` the build's extra
arguments, if any. Edits rather than copies: a case breaks the current
templates, not an old copy of them.
The valid site is built once; each case breaks a copy of it and builds into
a copy of its output: exit code 1, the expected lines, and the previous
output byte-identical.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support import CASES, lay, run_build, tiny_site, tree_bytes


def case_names() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("_"))


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")    # the base lab is computed once for all cases


def test_there_are_at_least_twenty_cases():
    assert len(case_names()) >= 20


@pytest.fixture(scope="module")
def good(tmp_path_factory, shared_cache) -> tuple[Path, Path]:
    """The valid site and its output, built once: each case breaks a copy."""
    base = tmp_path_factory.mktemp("good")
    root, out = tiny_site(base / "site"), base / "dist"
    result = run_build(root, out, shared_cache)
    assert result.returncode == 0, result.stderr
    return root, out


@pytest.mark.parametrize("case", case_names())
def test_broken_site_fails_clearly_and_keeps_the_last_good_output(case, tmp_path, shared_cache, good):
    root, out = tmp_path / "site", tmp_path / "dist"
    shutil.copytree(good[0], root)
    shutil.copytree(good[1], out)
    before = tree_bytes(out)

    lay(CASES / case, root)
    args_file = CASES / case / "args.txt"
    args = args_file.read_text(encoding="utf-8").split() if args_file.exists() else []
    result = run_build(root, out, shared_cache, *args)
    assert result.returncode == 1, result.stdout + result.stderr
    printed = result.stderr.splitlines()
    for line in (CASES / case / "expected.txt").read_text(encoding="utf-8").splitlines():
        assert line in printed, f"expected line missing:\n{line}\n--- printed:\n{result.stderr}"
    assert "Traceback" not in result.stderr
    assert tree_bytes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist", "site"]   # nothing left beside it
