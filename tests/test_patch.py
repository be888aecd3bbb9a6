"""An edit to pages' prose alone is patched into the last site (sitegen/commands/patch.py): only
that page is rendered, read and indexed again, and the site equals a clean build byte for byte.
Any edit a patch cannot see the whole of is a full build, equal to a clean one too."""
from __future__ import annotations

import pytest

from support import EPOCH, edit, empty_course, tree_bytes

PAGES = {
    "a.md": "---\ntitle: 第一篇\n---\n## 起点 {#start}\n\n第一篇的正文，公式 $x^2$。\n\n## 其次 {#then}\n",
    "b.md": "---\ntitle: 第二篇\n---\n## 中段\n\n见[起点](a.md#start)、[](#start)与[第三篇](c.md)。\n",
    "c.md": "---\ntitle: 第三篇\n---\n## 终点\n\n最后一篇。\n",
}


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course of three pages in a sequence, built once."""
    from sitegen.commands.pipeline import build
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root = empty_course(tmp_path / "site")
    with open(root / "site.yaml", "a", encoding="utf-8") as config:
        config.write("sequence:\n" + "".join(f"  - {name}\n" for name in PAGES))
    for name, text in PAGES.items():
        (root / "content" / name).write_text(text, encoding="utf-8")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    assert not build(root, out, cache=cache).patched
    return root, out, cache, tmp_path


def built_like_a_clean_build(course, name: str):
    """This build's report, after checking that its site is a clean build's, byte for byte."""
    from sitegen.commands.pipeline import build
    root, out, cache, tmp_path = course
    report = build(root, out, cache=cache)
    build(root, tmp_path / name, cache=tmp_path / f"{name}-cache")
    assert tree_bytes(out) == tree_bytes(tmp_path / name)
    return report


def test_a_prose_edit_is_patched_in_and_renders_that_page_alone(course):
    root = course[0]
    for n in range(3):              # one after another: each patches the last patched site
        for name in ("b.md", "c.md"):
            page = root / "content" / name
            page.write_text(page.read_text(encoding="utf-8") + f"\n第{n}次补充。\n", encoding="utf-8")
        report = built_like_a_clean_build(course, f"clean{n}")
        assert report.patched and set(report.rendered) == {"content/b.md", "content/c.md"}, report
        assert f"第{n}次补充" in (course[1] / "search.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("change", [
    ("a.md", "title: 第一篇", "title: 第一篇（新）"),               # its neighbours show its title
    ("a.md", "## 起点 {#start}", "## 起点 {#begin}"),               # b.md links to its anchor
    ("a.md", "$x^2$", "$y^2$"),                                      # the math font's glyphs
    ("c.md", "最后一篇。", "![](missing.png) 最后一篇。"),          # a problem: said as a full build says it
    ("c.md", "最后一篇。", "<a href=\"https://example.com\">外链</a>最后一篇。"),   # a warning: said among the others
    ("c.md", "## 终点\n\n最后一篇。", "::: materials\n"),      # a lecture map shows every page
    ("c.md", "最后一篇。", "见[](#then)。最后一篇。"),         # a label no page looked up: not kept for patches
])
def test_an_edit_a_patch_cannot_see_the_whole_of_is_a_full_build(course, change):
    from sitegen.core.errors import BuildError
    from sitegen.commands.pipeline import build
    root, out, cache, tmp_path = course
    name, old, new = change
    edit(root / "content" / name, old, new)
    try:
        report = build(root, out, cache=cache)
    except BuildError as exc:                   # the same problems as a clean build's
        with pytest.raises(BuildError) as clean:
            build(root, tmp_path / "clean", cache=tmp_path / "clean-cache")
        assert exc.report() == clean.value.report()
        return
    assert not report.patched
    build(root, tmp_path / "clean", cache=tmp_path / "clean-cache")
    assert tree_bytes(out) == tree_bytes(tmp_path / "clean")


def test_a_search_index_changed_by_hand_is_not_spliced(course):
    root, out = course[0], course[1]
    (out / "search.json").write_text('{"pages":[]}', encoding="utf-8")
    edit(root / "content/c.md", "最后一篇。", "最后的一篇。")
    report = built_like_a_clean_build(course, "clean")
    assert not report.patched


def test_patched_builds_in_a_row_end_in_a_full_build_that_prunes_what_they_left(course, monkeypatch):
    import hashlib
    from sitegen.commands import patch
    monkeypatch.setattr(patch, "PATCHES", 2)
    root, out, cache = course[0], course[1], course[2]
    kinds = []
    for n in range(4):
        page = root / "content/c.md"
        page.write_text(page.read_text(encoding="utf-8") + f"\n第{n}次。\n", encoding="utf-8")
        kinds.append(built_like_a_clean_build(course, f"clean{n}").patched)
        kept = {path.name for path in (cache / "memo/blobs").iterdir()}
        shipped = {hashlib.sha256(path.read_bytes()).hexdigest() for path in out.rglob("*.html")}
        assert len(kept - shipped) == (n + 1 if n < 2 else n - 2), n    # what each patch left; pruned
    assert kinds == [True, True, False, True]


def test_a_preview_is_patched_too_with_a_build_id_of_its_own(course):
    """serve's builds (preview): the file its pages poll to reload changes with every build."""
    from sitegen.commands.pipeline import build
    root, out, cache, tmp_path = course
    build(root, out, cache=cache, preview=True)
    ids = [(out / "__build-id.txt").read_bytes()]
    edit(root / "content/c.md", "最后一篇。", "最后的一篇。")
    assert build(root, out, cache=cache, preview=True).patched
    ids.append((out / "__build-id.txt").read_bytes())
    build(root, tmp_path / "clean", cache=tmp_path / "clean-cache", preview=True)
    ours, clean = tree_bytes(out), tree_bytes(tmp_path / "clean")
    assert ids[0] != ids[1] and ours.pop("__build-id.txt") and clean.pop("__build-id.txt") and ours == clean


def test_under_the_lecture_s_map_a_page_is_patched_in_while_its_reading_time_holds(course):
    """The map (::: materials) shows each page's title, description and minutes: an edit that keeps
    them leaves the map's page as it was; one that adds a minute of reading renders it again."""
    from sitegen.commands.pipeline import build
    root, out, cache, tmp_path = course
    with open(root / "content/index.md", "a", encoding="utf-8") as home:
        home.write("\n::: materials\n")
    assert not build(root, out, cache=cache).patched
    edit(root / "content/c.md", "最后一篇。", "最后的一篇。")
    report = built_like_a_clean_build(course, "clean")
    assert report.patched and report.rendered == ("content/c.md",)
    edit(root / "content/c.md", "最后的一篇。", "最后的一篇。" + "长" * 800)
    report = built_like_a_clean_build(course, "clean-longer")
    assert not report.patched and "content/index.md" in report.rendered


def test_an_edit_to_a_page_a_lab_read_runs_the_lab_again(course):
    """A notebook that reads a page of prose (its lines counted) is computed again when that page is
    edited: the edit is no patch of prose alone (it was: the old count stayed on the page)."""
    import json
    root = course[0]
    (root / "content/count.ipynb").write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                         "language": "python"}},
        "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": "print(len(open('c.md', encoding='utf-8').read().splitlines()), 'lines in c.md')"}]}),
        encoding="utf-8")
    assert built_like_a_clean_build(course, "first").computed == ("count",)
    edit(root / "content/c.md", "最后一篇。", "最后一篇。\n\n多了一行。")
    report = built_like_a_clean_build(course, "second")
    assert not report.patched and report.computed == ("count",)
    assert "8 lines in c.md" in (course[1] / "count.html").read_text(encoding="utf-8")
