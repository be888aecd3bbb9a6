"""The no-change stamp (sitegen/core/stamp.py): a build finding every input and output in the state
the last build left it stops at once, without hashing or importing a phase; and any change to what
the stamp covers (a source's bytes or its mere state, a file added or removed, an output touched,
the generator's files, a package's version, how the build was asked to build, a file a lab read
outside the sources) makes the build look again, and find what a clean build finds."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import EPOCH, REPO, empty_course, lab_prints_a_project_file, run_build, tiny_site, tree_bytes

from sitegen.commands import pipeline
from sitegen.core import installed, stamp
from sitegen.core.cachedir import STAMP
from sitegen.core.stored import SETTLED_NS, file_state


def settle() -> None:
    """Wait until what was just written has settled (stored.py): only then may a state stand for the bytes."""
    time.sleep(2 * SETTLED_NS / 1e9)


def key_of(out: Path, **options) -> list:
    return pipeline.build_key(out, options.get("preview", False), options.get("strict", False),
                              options.get("base_url"), options.get("solutions"))


@pytest.fixture()
def course(tmp_path):
    root = empty_course(tmp_path / "site")
    (root / "content/notes.md").write_text("---\ntitle: 笔记\n---\n第一句。\n", encoding="utf-8")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    settle()                    # (a source written just now is hashed again by the next build: no stamp)
    assert not pipeline.build(root, out, cache=cache).unchanged
    settle()
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is not None
    return root, out, cache


def test_a_build_that_finds_nothing_changed_hashes_nothing_and_imports_no_phase(course):
    root, out, cache = course
    result = subprocess.run([sys.executable, "-X", "importtime", str(REPO / "build.py"), "--root", str(root),
                             "--out", str(out), "--cache", str(cache)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "[nothing changed]" in result.stdout, result.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "sitegen.core.stamp" in imported
    assert not {"hashlib", "pickle", "json", "typing", "sitegen.core.memo", "sitegen.publish.write",
                "sitegen.project.config", "sitegen.labs.compute"} & imported


def same_size_edit(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("第一句", "第二句"), encoding="utf-8")


CHANGES = {
    "a page's bytes, its size the same": lambda root, out: same_size_edit(root / "content/notes.md"),
    "a page's state alone (touched)": lambda root, out: os.utime(root / "content/notes.md"),
    "a page added": lambda root, out: (root / "content/more.md").write_text("---\ntitle: 更多\n---\n又一页。\n",
                                                                           encoding="utf-8"),
    "a page removed": lambda root, out: (root / "content/notes.md").unlink(),
    "a course's own template": lambda root, out: (root / "templates").mkdir() or (root / "templates/extra.html")
    .write_text("<p>extra</p>\n", encoding="utf-8"),
    "an output removed": lambda root, out: (out / "notes.html").unlink(),
    "an output changed by hand": lambda root, out: (out / "notes.html").write_text("damaged", encoding="utf-8"),
    "an output added by hand": lambda root, out: (out / "mine.html").write_text("mine", encoding="utf-8"),
    "an output touched": lambda root, out: os.utime(out / "index.html"),
}


FAST = ("a page's bytes, its size the same", "an output touched")     # the others in the slow tier


@pytest.mark.parametrize("change", [change if change in FAST else pytest.param(change, marks=pytest.mark.slow)
                                    for change in CHANGES])
def test_any_change_the_stamp_covers_makes_the_build_look_again(course, tmp_path, change):
    root, out, cache = course
    CHANGES[change](root, out)
    settle()
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is None
    pipeline.build(root, out, cache=cache)
    assert not (out / "mine.html").exists()
    clean = pipeline.build(root, tmp_path / "clean", cache=tmp_path / "clean-cache")
    assert tree_bytes(out) == tree_bytes(tmp_path / "clean"), clean
    settle()
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is not None     # stamped again


@pytest.mark.parametrize("asked", [{"strict": True}, {"base_url": "https://preview.example.invalid"},
                                   {"solutions": "shown"}, {"preview": True}])
def test_a_build_asked_otherwise_looks_again(course, asked):
    root, out, cache = course
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out, **asked)) is None
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out.parent / "elsewhere")) is None


def test_another_source_date_epoch_looks_again(course, monkeypatch):
    root, out, cache = course
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is None


def test_another_version_of_a_package_that_makes_bytes_looks_again(course, monkeypatch):
    root, out, cache = course
    real = installed.versions()
    monkeypatch.setattr(installed, "versions", lambda: {**real, "jinja2": "0.0.1"})
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is None


def test_an_edit_to_the_generators_own_files_looks_again(tmp_path, monkeypatch):
    generator = tmp_path / "generator"
    generator.mkdir()
    (generator / "code.py").write_text("A = 1\n", encoding="utf-8")
    (generator / "__pycache__").mkdir()
    monkeypatch.setattr(stamp, "GENERATOR", str(generator))
    out, cache, project = tmp_path / "out", tmp_path / "cache", tmp_path / "project"
    out.mkdir()
    project.mkdir()
    (out / "index.html").write_text("<p>site</p>", encoding="utf-8")
    written = {"index.html": ["sha", *file_state(out / "index.html")]}
    settle()
    states = {rel: file_state(path) for rel, path in stamp.generator_files().items()}
    assert list(states) == ["code.py"]                      # (compiled code is not the generator's source)
    stamp.write(cache, ["k"], states, {}, {}, written, (1, 11, []))
    assert stamp.unchanged(cache, str(project), str(out), ["k"], ("content",), frozenset()) is not None
    (generator / "__pycache__/code.cpython.pyc").write_bytes(b"compiled")
    assert stamp.unchanged(cache, str(project), str(out), ["k"], ("content",), frozenset()) is not None
    (generator / "code.py").write_text("A = 2\n", encoding="utf-8")
    assert stamp.unchanged(cache, str(project), str(out), ["k"], ("content",), frozenset()) is None


def test_no_stamp_while_a_state_it_would_hold_has_not_settled(course, monkeypatch):
    root, out, cache = course
    monkeypatch.setattr(stamp, "settled_before", lambda: 0)       # as if everything had just been written
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is None
    (root / "content/notes.md").write_text("---\ntitle: 笔记\n---\n改了。\n", encoding="utf-8")
    pipeline.build(root, out, cache=cache)
    assert not (cache / STAMP).exists()
    monkeypatch.undo()
    settle()
    assert pipeline.build(root, out, cache=cache).unchanged      # (the fingerprint decides, and stamps)
    settle()
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is not None


def test_a_damaged_stamp_is_no_stamp(course):
    root, out, cache = course
    (cache / STAMP).write_bytes(b"\x00not marshal")
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is None
    assert pipeline.build(root, out, cache=cache).unchanged


@pytest.mark.slow
def test_a_file_a_lab_read_outside_the_sources_is_looked_at(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)            # (as run_build builds)
    root = tiny_site(tmp_path / "site")
    lab_prints_a_project_file(root, "data/n.txt", "7", "n =")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    settle()
    assert run_build(root, out, cache).returncode == 0
    settle()
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is not None
    (root / "data/n.txt").write_text("8", encoding="utf-8")
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is None
    result = run_build(root, out, cache)
    assert "tiny computed" in result.stdout and "n = 8" in (out / "index.html").read_text(encoding="utf-8")


def test_a_course_holding_the_generator_itself_is_stamped(tmp_path, monkeypatch):
    """As in the generator's own repository: the theme's files lie inside the project, and are the
    generator's (its states), not the project's templates/ and static/, which the course lacks."""
    import shutil
    from sitegen.core import sources
    root = empty_course(tmp_path / "site")
    shutil.copytree(sources.THEME, root / "sitegen/theme")
    monkeypatch.setattr(sources, "THEME", root / "sitegen/theme")     # (its states: the generator's)
    out, cache = tmp_path / "dist", tmp_path / "cache"
    settle()
    assert not pipeline.build(root, out, cache=cache).unchanged
    settle()
    assert pipeline.as_last_time(root.resolve(), cache, key_of(out)) is not None
