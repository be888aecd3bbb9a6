"""Fast, incremental and reproducible builds: what runs when, and identical bytes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import EPOCH, REPO, computed, edit, reading_site, run_build, tree_bytes



@pytest.fixture()
def built(tmp_path):
    root, out, cache = reading_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    assert computed(run_build(root, out, cache)) == {"tiny", "reader"}
    return root, out, cache


def imports_of_a_build(root, out, cache):
    """The build's output, and the modules its process imported."""
    result = subprocess.run([sys.executable, "-X", "importtime", str(REPO / "build.py"), "--root", str(root),
                             "--out", str(out), "--cache", str(cache)], capture_output=True, text=True,
                            env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH}, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line}


def test_unchanged_build_runs_nothing_and_imports_no_numpy(built):
    stdout, imported = imports_of_a_build(*built)
    assert "[nothing changed]" in stdout
    assert not {"numpy", "matplotlib", "jinja2", "markdown_it", "nbformat"} & imported


def test_a_prose_edit_imports_neither_what_labs_use_nor_what_runs_them(built):
    root, out, cache = built
    with open(root / "content/reader.md", "a", encoding="utf-8") as page:
        page.write("\n又一句。\n")
    stdout, imported = imports_of_a_build(root, out, cache)
    assert "tiny cached" in stdout and "markdown_it" in imported
    assert not {"numpy", "matplotlib", "nbformat", "yaml", "multiprocessing", "sitegen.labs.labhost",
                "sitegen.labs.labrun"} & imported


def test_a_prose_edit_runs_no_lab_and_imports_no_converter_it_remembered(built):
    """Highlighting, formulas and notebooks are remembered: an edited sentence needs none of their libraries."""
    root, out, cache = built
    guide = root / "content/guide.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\n多一句话。\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-X", "importtime", str(REPO / "build.py"), "--root", str(root),
                             "--out", str(out), "--cache", str(cache)], capture_output=True, text=True,
                            env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH}, timeout=120)
    assert result.returncode == 0 and computed(result) == set()
    assert "多一句话。" in (out / "guide.html").read_text(encoding="utf-8")
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "jinja2" in imported                              # it did render
    assert not {"latex2mathml.converter", "nbformat"} & imported, result.stderr[-3000:]


def test_a_changed_output_folder_is_rebuilt(built):
    root, out, cache = built
    (out / "guide.html").write_text("damaged", encoding="utf-8")
    result = run_build(root, out, cache)
    assert "[nothing changed]" not in result.stdout and computed(result) == set()
    assert "damaged" not in (out / "guide.html").read_text(encoding="utf-8")


def test_a_damaged_cache_entry_is_detected_and_recomputed(built):
    root, out, cache = built
    entry = next((cache / "labs/tiny").iterdir())
    npz = entry / "files/tensors.npz"
    npz.write_bytes(npz.read_bytes()[:20])                      # truncated
    guide = root / "content/guide.md"       # so the build is not skipped, nor a prose edit patched in (patch.py)
    edit(guide, "title: 导读", "title: 导读一")
    # tiny alone: its key is unchanged, so the lab that reads it keeps its own
    assert computed(run_build(root, out, cache)) == {"tiny"}
    (next((cache / "labs/reader").iterdir()) / "manifest.json").write_text("{", encoding="utf-8")
    edit(guide, "title: 导读一", "title: 导读二")
    assert computed(run_build(root, out, cache)) == {"reader"}


def test_a_page_changed_in_the_cache_is_never_published(built):
    """A rendered page is kept in the cache (memo/blobs) and not looked at while the last site's
    copy serves; when it must be read, it is checked, and one changed there is made again."""
    import hashlib
    import shutil
    root, out, cache = built
    page = (out / "guide.html").read_bytes()
    blob = cache / "memo/blobs" / hashlib.sha256(page).hexdigest()
    with open(blob, "r+b") as handle:               # the same size: as an editor, or a disk error
        handle.write(b"X")
    home = root / "content/index.md"
    for attempt in ("the last site serves", "no site to take it from"):
        home.write_text(home.read_text(encoding="utf-8") + f"\n{attempt}。\n", encoding="utf-8")
        if attempt == "no site to take it from":
            shutil.rmtree(out)
            shutil.rmtree(out.with_name(f".{out.name}.sitegen-spare"))
        result = run_build(root, out, cache)
        assert result.returncode == 0, result.stderr
        assert (out / "guide.html").read_bytes() == page, attempt
    assert blob.read_bytes() == page                 # made again
@pytest.mark.slow
def test_a_reader_is_reused_while_the_bytes_it_read_are_the_same_and_runs_when_they_change(built):
    """Early cut-off: an edit to the read lab that leaves its results.json as it was runs the read
    lab alone; one that changes them runs the reader too. Either build equals a clean one."""
    root, out, cache = built
    edit(root / "compute/tiny.py", "print('saved')", "print('saved', 'again')")        # the same results
    assert computed(run_build(root, out, cache)) == {"tiny"}
    kept = tree_bytes(out)
    assert "saved again" in (out / "index.html").read_text(encoding="utf-8")
    clean = run_build(root, out.with_name("clean"), cache.with_name("clean-cache"))
    assert computed(clean) == {"tiny", "reader"} and tree_bytes(out.with_name("clean")) == kept
    edit(root / "compute/tiny.py", "'total': float(x.sum())", "'total': float(x.sum()) + 1")   # other results
    assert computed(run_build(root, out, cache)) == {"tiny", "reader"}
    edit(root / "compute/tiny.py", "'total': float(x.sum()) + 1", "'total': float(x.sum())")   # as they were
    assert computed(run_build(root, out, cache)) == {"tiny", "reader"}      # (one entry per lab: made anew)
    assert tree_bytes(out) == kept


def test_a_changed_numpy_version_invalidates_the_cache(built, monkeypatch):
    from sitegen.core import memo
    from sitegen.labs.compute import compute_labs
    from sitegen.project.config import load_config
    root, out, cache = built
    cfg = load_config(root)
    assert not any(a.recomputed for a in compute_labs(cfg, cache).values())
    real = memo._environment()
    monkeypatch.setattr(memo, "_environment", lambda: tuple((k, "9.9.9" if k == "numpy" else v) for k, v in real))
    fresh = compute_labs(cfg, cache)
    assert all(a.recomputed for a in fresh.values())
    assert fresh["tiny"].provenance["numpy"] == "9.9.9"


@pytest.mark.slow
def test_two_clean_builds_serial_and_parallel_are_byte_identical(tmp_path):
    root = reading_site(tmp_path / "site")
    first = run_build(root, tmp_path / "a/dist", tmp_path / "a/cache", "--jobs", "1")
    # The second is given relative paths: labs run in folders of their own, not in the caller's.
    second = run_build(Path("site"), Path("b/dist"), Path("b/cache"), "--jobs", "2", cwd=tmp_path)
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    a, b = tree_bytes(tmp_path / "a/dist"), tree_bytes(tmp_path / "b/dist")
    assert a.keys() == b.keys()
    assert [path for path in a if a[path] != b[path]] == []
    assert {"index.html", "reader.html", "guide.html", "materials/tensors.npz", "reader/materials/results.json"} <= set(a)


@pytest.mark.parametrize("package", ["jinja2", "markdown-it-py", "mdit-py-plugins", "html5lib", "pygments", "latex2mathml", "pillow", "rcssmin", "fonttools",
                                     "pyyaml", "numpy", "matplotlib"])
def test_a_new_version_of_any_package_that_makes_bytes_changes_the_fingerprint(tmp_path, monkeypatch, package):
    from sitegen.commands import pipeline
    from sitegen.core import memo
    before = pipeline.fingerprint({"site.yaml": "0"}, [str(tmp_path)])
    real, env = memo.package_version, memo._environment()
    monkeypatch.setattr(memo, "package_version", lambda name: "0.0.1" if name == package else real(name))
    monkeypatch.setattr(memo, "_environment", lambda: tuple((k, "0.0.1" if k == package else v) for k, v in env))
    memo.makers_digest.cache_clear()
    try:
        assert pipeline.fingerprint({"site.yaml": "0"}, [str(tmp_path)]) != before
    finally:
        memo.makers_digest.cache_clear()


def test_a_prose_edit_renders_only_the_pages_that_show_what_changed(tmp_path, monkeypatch):
    """A body edit renders its own page; a title edit also the pages that show that title (previous
    and next in the sequence, breadcrumbs); everything else comes from the memo, byte-identical."""
    from sitegen.commands.pipeline import build
    from support import edit
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)        # the fresh build computes its labs again
    root = reading_site(tmp_path / "site")
    for name, parent in (("a", ""), ("b", ""), ("c", "parent: b.md\n")):
        (root / f"content/{name}.md").write_text(f"---\ntitle: 页 {name}\n{parent}---\n正文 {name}。\n", encoding="utf-8")
    edit(root / "site.yaml", "labs:\n", "sequence: [a.md, b.md, guide.md]\n\nlabs:\n")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    first = build(root, out, cache=cache)
    assert len(first.rendered) == 7                       # index, 404, reader, guide, a, b, c
    edit(root / "content/guide.md", "公式", "一个公式")
    from sitegen.core.memo import Memo
    named, real_name = set(), Memo.name
    monkeypatch.setattr(Memo, "name", lambda self, namespace, key: named.add((namespace, repr(key))) or real_name(self, namespace, key))
    report = build(root, out, cache=cache)
    assert report.rendered == ("content/guide.md",) and report.patched
    # and the other pages' keys were not even worked out, patched into the last site (patch.py): the
    # page's own, its last version's (parsed; its HTML read, for its anchors) and its neighbour's, shown
    assert [sum(n == namespace for n, _ in named) for namespace in ("page", "page-check", "search", "notebook",
            "formula-characters", "html-check", "parsed")] == [1, 1, 1, 0, 0, 2, 3]
    named.clear()
    edit(root / "content/b.md", "title: 页 b", "title: 页 B")
    # a and guide show it as next / previous, c as its parent; the others' records say that they read
    # nothing of b: taken as they were, their keys not even worked out
    assert sorted(build(root, out, cache=cache).rendered) == ["content/a.md", "content/b.md", "content/c.md",
                                                              "content/guide.md"]
    assert sum(namespace == "page" for namespace, _ in named) == 4
    monkeypatch.setattr(Memo, "name", real_name)
    fresh = build(root, tmp_path / "fresh", cache=tmp_path / "fresh-cache")
    assert len(fresh.rendered) == 7 and tree_bytes(out) == tree_bytes(tmp_path / "fresh")


def test_a_page_left_as_it_was_is_checked_again_where_it_links_into_one_that_changed(tmp_path, monkeypatch):
    """The last build's check of an unchanged page is taken as it was, but for its #anchors in pages
    that changed: renaming a heading breaks the links to it from pages not edited, and says so;
    an unchanged page's warnings are still reported (and by a build that finds nothing changed)."""
    from sitegen.core.errors import BuildError
    from sitegen.commands.pipeline import build
    from support import edit
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root = reading_site(tmp_path / "site")
    (root / "content/a.md").write_text("---\ntitle: 甲\n---\n见[乙的一节](b.md#part)。\n\n## 空\n\n## 下一节\n\n文字。\n",
                                       encoding="utf-8")
    (root / "content/b.md").write_text("---\ntitle: 乙\n---\n## 一节 {#part}\n\n内容。\n", encoding="utf-8")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    first = build(root, out, cache=cache)
    edit(root / "content/guide.md", "公式", "一个公式")
    assert build(root, out, cache=cache).warnings == first.warnings != ()      # a.md's, though a.md was not read
    edit(root / "content/b.md", "{#part}", "{#other}")
    broken = build(root, out, cache=cache).warnings          # (a warning: the link opens b at its top)
    dead = [p for p in broken if "b.html has no id 'part'" in p.message]
    assert [(p.path, p.line) for p in dead] == [("content/a.md", 4)] and len(broken) == len(first.warnings) + 1
    assert build(root, out, cache=cache).warnings == broken                 # said again, nothing changed
    edit(root / "content/guide.md", "一个公式", "一个公式。")
    assert build(root, out, cache=cache).warnings == broken                 # and when another page changed
    with pytest.raises(BuildError) as failed:
        build(root, out, cache=cache, strict=True)
    assert any("b.html has no id 'part'" in p.message for p in failed.value.problems), failed.value.problems
    edit(root / "content/b.md", "{#other}", "{#part}")
    assert build(root, out, cache=cache).warnings == first.warnings


def test_a_template_edit_renders_every_page_again_and_an_image_beside_the_pages_is_published(tmp_path, monkeypatch):
    """The templates and the images beside the pages are known from the build's snapshot of the
    sources, as the pages are: an edit to a template renders every page anew, with the edit."""
    from sitegen.commands.pipeline import build
    from support import edit, own_copy
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root, out, cache = reading_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    (root / "content/images").mkdir()
    (root / "content/images/dot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))   # (a PNG by its signature)
    (root / "content/images/.ipynb_checkpoints").mkdir()
    (root / "content/images/.ipynb_checkpoints/dot-checkpoint.png").write_bytes(b"old")
    first = build(root, out, cache=cache)
    assert (out / "images/dot.png").is_file() and not (out / "images/.ipynb_checkpoints").exists()
    edit(own_copy(root, "templates/page.html"), "</footer>", "<p>模板改过</p></footer>")
    again = build(root, out, cache=cache)
    assert sorted(again.rendered) == sorted(first.rendered)
    assert "模板改过" in (out / "guide.html").read_text(encoding="utf-8")


def test_the_build_says_how_long_each_lab_it_ran_took(tmp_path):
    import re
    import time
    root = reading_site(tmp_path / "site")
    started = time.perf_counter()
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    wall = time.perf_counter() - started
    took = {lab: float(seconds) for lab, seconds in re.findall(r"([\w-]+) computed in ([0-9.]+) s", result.stdout)}
    assert took.keys() == {"tiny", "reader"}, result.stdout
    assert all(0 <= seconds <= wall for seconds in took.values()), (took, wall)
    edit(root / "content/guide.md", "公式", "一个公式")
    again = run_build(root, tmp_path / "dist", tmp_path / "cache").stdout
    assert "tiny cached" in again and " in " not in again.split("[")[-1], again      # (none said when none ran)


def test_a_code_edit_checks_and_renders_again_only_the_pages_that_show_its_lab(tmp_path, monkeypatch):
    """Each page's check and page are made of the labs it shows (its own, those its blocks name), not of
    every lab: after one notebook's code edit, the other notebook's page and the prose pages are taken
    as they were, their keys not even worked out; the site equals a clean build's, byte for byte."""
    from sitegen.commands.pipeline import build
    from sitegen.core.memo import Memo
    from support import empty_course, write_notebook
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root = empty_course(tmp_path / "site")
    write_notebook(root / "content/a.ipynb", "甲", "x = 1\nx")
    write_notebook(root / "content/b.ipynb", "乙", "y = 2\ny")
    (root / "content/c.md").write_text("---\ntitle: 丙\n---\n见[甲](a.ipynb)。\n", encoding="utf-8")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(root, out, cache=cache)
    named, real_name = set(), Memo.name
    monkeypatch.setattr(Memo, "name", lambda self, namespace, key: named.add((namespace, repr(key))) or real_name(self, namespace, key))
    edit(root / "content/a.ipynb", "x = 1", "x = 3")
    report = build(root, out, cache=cache)
    assert report.computed == ("a",) and report.rendered == ("content/a.ipynb",)
    assert [sum(n == namespace for n, _ in named) for namespace in ("page-check", "page", "notebook")] == [1, 1, 1]
    assert all("content/a.ipynb" in key for namespace, key in named if namespace in ("page-check", "page", "notebook"))
    monkeypatch.setattr(Memo, "name", real_name)
    assert "3" in (out / "a.html").read_text(encoding="utf-8")
    build(root, tmp_path / "fresh", cache=tmp_path / "fresh-cache")
    assert tree_bytes(out) == tree_bytes(tmp_path / "fresh")


def test_a_page_s_check_that_reads_a_lab_its_page_does_not_show_is_not_recorded(tmp_path, monkeypatch):
    """The record of a page's check is made of the labs the page shows (blocks.labs_shown); were a check
    to read another lab's artifacts, its record would not say so: it is then not recorded, and runs again."""
    from sitegen.commands.pipeline import build
    from sitegen.core.memo import Memo
    from sitegen.pages import check
    from support import empty_course, write_notebook
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root = empty_course(tmp_path / "site")
    write_notebook(root / "content/a.ipynb", "甲", "x = 1\nx")
    write_notebook(root / "content/b.ipynb", "乙", "y = 2\ny")
    real_check = check._check_page

    def reads_b_too(page, artifacts, *rest):
        real_check(page, artifacts, *rest)
        if page.source == "content/a.ipynb":
            artifacts.get("b")
    monkeypatch.setattr(check, "_check_page", reads_b_too)
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(root, out, cache=cache)
    named, real_name = set(), Memo.name
    monkeypatch.setattr(Memo, "name", lambda self, namespace, key: named.add((namespace, repr(key))) or real_name(self, namespace, key))
    edit(root / "content/b.ipynb", "y = 2", "y = 5")
    build(root, out, cache=cache)
    assert sorted(key.split(", ")[1] for namespace, key in named if namespace == "page-check") == \
        ["'content/a.ipynb'", "'content/b.ipynb'"]


def test_the_state_of_a_build_by_the_generator_before_its_patch_info_was_kept_pickled_is_read(tmp_path, monkeypatch):
    """The generator before this one kept the patch info in the state as it is: a build that finds it so
    reads it as it is (here a prose edit, patched into the last site; after a real upgrade the
    fingerprint differs and the site is built whole, its memo swept as after a patched build)."""
    import pickle
    from sitegen.commands.pipeline import build
    from support import empty_course
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root = empty_course(tmp_path / "site")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(root, out, cache=cache)
    state = pickle.loads((cache / "last-build.pickle").read_bytes())
    state["patch"] = {**pickle.loads(state["patch"]), "patches": 1}
    (cache / "last-build.pickle").write_bytes(pickle.dumps(state))
    edit(root / "content/index.md", "从实验开始。", "从实验开始吧。")
    assert build(root, out, cache=cache).rendered == ("content/index.md",)
    assert "从实验开始吧" in (out / "index.html").read_text(encoding="utf-8")
