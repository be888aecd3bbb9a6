"""Page addresses: a page publishes where its front matter `url` says, links by source follow it,
and its old addresses redirect to it through Pages' _redirects."""
from __future__ import annotations

from support import REPO, edit, empty_course, free_port, get, run_build, tiny_site

MOVED = """---
title: 笔记
url: notes/new
aliases: [/notes/old-name, /old/notes.html]
---
回到 [首页](../index.md)。
"""


def moved_site(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "content/notes").mkdir()
    (root / "content/notes/old-name.md").write_text(MOVED, encoding="utf-8")
    edit(root / "content/index.md", "另见 [下载](#files)。", "另见 [下载](#files) 与 [笔记](notes/old-name.md)。")
    return root


def test_a_page_publishes_at_its_url_and_links_by_source_follow_it(tmp_path):
    root = moved_site(tmp_path)
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    dist = tmp_path / "dist"
    assert (dist / "notes/new.html").is_file() and not (dist / "notes/old-name.html").exists()
    assert 'href="notes/new"' in (dist / "index.html").read_text(encoding="utf-8")
    assert 'href="../"' in (dist / "notes/new.html").read_text(encoding="utf-8")     # ../index.md from its source
    assert (dist / "_redirects").read_text(encoding="utf-8") == ("/notes/old-name /notes/new 301\n"
                                                                 "/old/notes.html /notes/new 301\n")


def test_old_addresses_redirect_on_cloudflare_pages(tmp_path, emulator):
    from sitegen.commands.serve import serving
    root = moved_site(tmp_path)
    assert run_build(root, tmp_path / "dist", tmp_path / "cache").returncode == 0
    port = free_port()
    with serving(REPO, tmp_path / "dist", port, tmp_path / "wrangler"):
        for old in ("/notes/old-name", "/old/notes.html"):
            response = get(port, old)
            assert response.status == 301 and response.getheader("Location") == "/notes/new", old
        assert get(port, "/notes/new").status == 200


def test_an_alias_that_would_hide_a_page_is_named(tmp_path):
    root = moved_site(tmp_path)
    edit(root / "content/notes/old-name.md", "aliases: [/notes/old-name, /old/notes.html]",
         "aliases: [/notes/old-name, /404]")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert ("error: content/notes/old-name.md:2: aliases: /404 is the address of 404.html, which the site "
            "publishes: a redirect there would hide it") in result.stderr


def test_a_url_that_is_no_address_is_named(tmp_path):
    root = moved_site(tmp_path)
    edit(root / "content/404.md", "title: 没有找到\n", "title: 没有找到\nurl: 这里\n")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert ("error: content/404.md:3: url '这里' must be a path of ASCII names, e.g. course/lab11 (published as "
            "course/lab11.html)") in result.stderr


def test_the_pages_are_the_sources_markdown_files_and_not_a_jupyter_checkpoint_of_one(tmp_path):
    from sitegen.pages.content import load_pages
    from sitegen.core.sources import take_snapshot, source_files
    root = tiny_site(tmp_path / "site")
    (root / "content/.ipynb_checkpoints").mkdir()
    (root / "content/.ipynb_checkpoints/index-checkpoint.md").write_text("---\ntitle: 旧\n---\n旧。\n", encoding="utf-8")
    (root / "content/notes").mkdir()
    (root / "content/notes/a.md").write_text("---\ntitle: 甲\n---\n甲。\n", encoding="utf-8")
    pages = load_pages(root / "content", take_snapshot(source_files(root))[0])
    assert [(p.source, p.output) for p in pages] == [("content/404.md", "404.html"), ("content/index.md", "index.html"),
                                                     ("content/notes/a.md", "notes/a.html")]


def test_a_site_without_a_home_page_says_to_add_one(tmp_path):
    root = empty_course(tmp_path / "site")
    (root / "content/index.md").rename(root / "content/start.md")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "content/index.md: the site has no home page, which every page links to" in result.stderr
    assert "href=" not in result.stderr         # (said in the author's terms, not in the HTML's)


def test_a_front_matter_key_with_no_value_is_not_given_and_the_first_heading_is_the_title():
    from sitegen.pages.content import parse_page
    page = parse_page("---\ntitle:\ndescription:\n---\n# 第一章\n\n正文。\n", "content/ch1.md", "ch1.html")
    assert page.meta["title"] == "第一章" and "description" not in page.meta


def test_a_page_whose_file_name_pages_cannot_serve_is_named_by_its_source_with_the_fix(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "content/第一章").mkdir()
    (root / "content/第一章/笔记.md").write_text("---\ntitle: 笔记\n---\n正文。\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "error: content/第一章/笔记.md:2: published as 第一章/笔记.html" in result.stderr
    assert "`url: chapter-1/notes`" in result.stderr
    edit(root / "content/第一章/笔记.md", "title: 笔记\n", "title: 笔记\nurl: chapter-1/notes\n")
    assert run_build(root, root / "dist", root / ".cache").returncode == 0
    assert (root / "dist/chapter-1/notes.html").exists()
