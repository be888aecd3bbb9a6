"""The build replaces only what it made: its marked output folder and its own staging folders. What is
unchanged is linked from the last site, and only what the last build left exactly as it was: a file
changed by hand is written anew, its times put back or not."""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from support import computed, run_build, tiny_site, tree_bytes
from support import reading_site

from sitegen.publish.write import MARK


def test_a_folder_with_files_the_build_did_not_make_is_refused_and_kept(tmp_path):
    root = tiny_site(tmp_path / "site")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "thesis.txt").write_text("三年的心血", encoding="utf-8")
    result = run_build(root, notes, tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (f"error: {notes}: this folder holds files the build did not make (it has no {MARK}), and a build "
            "replaces its output folder whole") in result.stderr
    assert [p.name for p in notes.iterdir()] == ["thesis.txt"]
    assert (notes / "thesis.txt").read_text(encoding="utf-8") == "三年的心血"


def test_an_empty_folder_is_taken_and_marked_and_then_replaced(tmp_path):
    root, out, cache = tiny_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    out.mkdir()
    assert run_build(root, out, cache).returncode == 0
    assert (out / MARK).is_file() and (out / "index.html").is_file()
    (root / "content/index.md").write_text((root / "content/index.md").read_text(encoding="utf-8") + "\n新的一段。\n",
                                           encoding="utf-8")
    assert run_build(root, out, cache).returncode == 0
    assert "新的一段。" in (out / "index.html").read_text(encoding="utf-8")


def test_siblings_of_the_output_are_never_touched(tmp_path):
    """A backup made with cp -a, a folder named like an old staging folder, anything beside dist/."""
    root, out, cache = tiny_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    assert run_build(root, out, cache).returncode == 0
    subprocess.run(["cp", "-a", str(out), str(tmp_path / "dist.old")], check=True)
    for name in ("dist.tmp-keep", "dist.bak", ".dist.tmp-mine"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "mine.txt").write_text("keep", encoding="utf-8")
    backup = tree_bytes(tmp_path / "dist.old")
    (root / "content/index.md").write_text((root / "content/index.md").read_text(encoding="utf-8") + "\n又一段。\n",
                                           encoding="utf-8")
    assert run_build(root, out, cache).returncode == 0
    assert tree_bytes(tmp_path / "dist.old") == backup
    for name in ("dist.tmp-keep", "dist.bak", ".dist.tmp-mine"):
        assert (tmp_path / name / "mine.txt").read_text(encoding="utf-8") == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".dist.sitegen-spare", ".dist.tmp-mine", "cache", "dist", "dist.bak", "dist.old", "dist.tmp-keep", "site"])


def test_staging_folders_of_a_killed_build_are_cleared_by_the_next(tmp_path):
    root, out, cache = tiny_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    assert run_build(root, out, cache).returncode == 0
    stale = tmp_path / ".dist.sitegen-tmp-abc123"          # as a build killed while writing leaves it
    (stale / "course").mkdir(parents=True)
    (stale / MARK).write_bytes(b"x")
    (stale / "course/half.html").write_text("<!doctype html>", encoding="utf-8")
    empty = tmp_path / ".dist.sitegen-tmp-def456"           # killed before it was even marked
    empty.mkdir()
    foreign = tmp_path / ".dist.sitegen-tmp-notours"        # named like ours, but holds someone's file
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep", encoding="utf-8")
    (root / "content/index.md").write_text((root / "content/index.md").read_text(encoding="utf-8") + "\n一段。\n",
                                           encoding="utf-8")
    assert run_build(root, out, cache).returncode == 0
    assert not stale.exists() and not empty.exists()
    assert (foreign / "mine.txt").read_text(encoding="utf-8") == "keep"


@pytest.fixture()
def built(tmp_path):
    root, out, cache = reading_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    assert computed(run_build(root, out, cache)) == {"tiny", "reader"}
    time.sleep(0.2)             # past the kernel clock's tick: a later write shows in the files' times
    return root, out, cache


def tamper(path):
    data = path.read_bytes()
    path.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])


def add_sentence(root):
    guide = root / "content/guide.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\n一句。\n", encoding="utf-8")


def test_a_prose_edit_links_the_unchanged_files_and_writes_the_changed(built):
    root, out, cache = built
    before = {rel: (out / rel).stat().st_ino for rel in ("materials/tensors.npz", "reader.html", "guide.html")}
    add_sentence(root)
    result = run_build(root, out, cache)
    assert result.returncode == 0, result.stderr
    after = {rel: (out / rel).stat().st_ino for rel in before}
    assert after["materials/tensors.npz"] == before["materials/tensors.npz"]      # the same file, linked
    assert after["reader.html"] == before["reader.html"]
    assert after["guide.html"] != before["guide.html"] and "一句" in (out / "guide.html").read_text(encoding="utf-8")


def test_a_prose_edit_looks_at_no_file_of_the_live_site_it_does_not_replace(built, monkeypatch):
    """Brought up to date from the spare, the new site needs the live one's files only to link
    to them: a file the spare holds as it should be is not looked at in the live site."""
    import sitegen.publish.write
    from sitegen.commands.pipeline import build
    root, out, cache = built
    add_sentence(root)
    assert build(root, out, cache=cache).rendered          # the spare is now the site before the edit
    time.sleep(0.2)
    looked = []
    real = sitegen.publish.write.file_state
    monkeypatch.setattr(sitegen.publish.write, "file_state", lambda path: looked.append(str(path)) or real(path))
    add_sentence(root)
    report = build(root, out, cache=cache)
    live = [path for path in looked if path.startswith(f"{out}/")]
    assert report.files > 10 and looked
    assert set(live) == {f"{out}/{rel}" for rel in ("guide.html", "search.json", MARK)}, live


@pytest.mark.parametrize("times", ["changed", "put back"])
def test_an_output_changed_by_hand_is_written_anew(built, times):
    root, out, cache = built
    results = out / "materials/results.json"
    good, state = results.read_bytes(), results.stat()
    results.write_bytes(good.replace(b"1", b"7"))          # same size, other bytes
    assert results.read_bytes() != good
    if times == "put back":
        os.utime(results, ns=(state.st_atime_ns, state.st_mtime_ns))
    result = run_build(root, out, cache)                   # no source changed: the output did
    assert result.returncode == 0 and "[nothing changed]" not in result.stdout, result.stdout
    assert results.read_bytes() == good
    entry = next((cache / "labs/tiny").iterdir()) / "files/results.json"
    assert entry.read_bytes() == good                      # the cache was never linked to the output
    add_sentence(root)                                     # and a prose edit after that links it again
    inode = results.stat().st_ino
    time.sleep(0.2)
    assert run_build(root, out, cache).returncode == 0
    assert results.stat().st_ino == inode and results.read_bytes() == good


@pytest.mark.slow        # (tests/test_differential.py proves the same in the fast tier, on random edits)
def test_a_site_brought_up_to_date_is_the_one_a_clean_build_makes(built, tmp_path):
    """Pages added, changed, removed, and a file that becomes a folder: after each build the
    output is byte for byte what a clean build makes, and the spare it was made from is the site
    before it. Files changed by hand in either site, their sizes kept, are not taken as they are."""
    root, out, cache = built
    edits = [
        lambda: add_sentence(root),
        lambda: (root / "content/extra.md").write_text("---\ntitle: 附加\n---\n一页。\n", encoding="utf-8"),
        lambda: ((root / "content/extra.md").unlink(),
                 (root / "content/extra").mkdir(),
                 (root / "content/extra/index.md").write_text("---\ntitle: 附加\n---\n成了目录。\n", encoding="utf-8")),
        lambda: (root / "content/extra/index.md").unlink(),
        lambda: (tamper(out / "reader.html"), tamper(out.with_name(".dist.sitegen-spare") / "index.html"),
                 add_sentence(root)),
        lambda: (tamper(out.with_name(".dist.sitegen-spare") / "reader.html"), add_sentence(root)),
    ]
    for number, edit in enumerate(edits):
        edit()
        before = tree_bytes(out)                # (a file changed by hand in the spare may be dist's too: a link)
        assert run_build(root, out, cache).returncode == 0
        clean = tmp_path / f"clean{number}"
        assert run_build(root, clean, tmp_path / f"cache{number}").returncode == 0
        assert tree_bytes(out) == tree_bytes(clean), number
        assert tree_bytes(out.with_name(".dist.sitegen-spare")) == before, number
        time.sleep(0.2)


def test_a_folder_of_the_authors_named_like_the_spare_is_left_alone(tmp_path):
    root, out, cache = tiny_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    mine = tmp_path / ".dist.sitegen-spare"
    mine.mkdir()
    (mine / "notes.txt").write_text("我的笔记", encoding="utf-8")
    for sentence in ("一句。", "又一句。"):
        (root / "content/index.md").write_text((root / "content/index.md").read_text(encoding="utf-8") + sentence,
                                               encoding="utf-8")
        result = run_build(root, out, cache)
        assert result.returncode == 0, result.stderr
        assert [p.name for p in mine.iterdir()] == ["notes.txt"]          # the site before is not kept there
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "我的笔记"
    assert "又一句。" in (out / "index.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dist.sitegen-spare", "cache", "dist", "site"]



def test_where_the_file_system_refuses_hard_links_unchanged_files_are_copied(built, tmp_path, monkeypatch):
    """FAT, some network shares and containers' mounts: os.link fails with EPERM or ENOTSUP."""
    import errno
    from sitegen.commands.pipeline import build
    root, out, cache = built
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    refused = []

    def no_links(source, target, *args, **kwargs):
        refused.append(target)
        raise OSError(errno.EPERM, "Operation not permitted", target)
    monkeypatch.setattr(os, "link", no_links)
    for _ in range(2):
        add_sentence(root)
        time.sleep(0.2)
        build(root, out, cache=cache)
    assert refused                                          # it tried, and copied instead
    # (the clean build in a process of its own, as `built` was: labs forked from this one would
    # inherit what other tests did to Matplotlib here)
    assert run_build(root, tmp_path / "clean", tmp_path / "clean-cache").returncode == 0
    assert tree_bytes(out) == tree_bytes(tmp_path / "clean")
