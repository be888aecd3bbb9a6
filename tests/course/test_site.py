"""The course site around the lab: pages, navigation, Pages files, and the link checker."""
from __future__ import annotations

from helpers import Elements

from support import run_build, tree_bytes

PAGES = ["index.html", "404.html", "course/guide.html", "course/reference.html", "course/lab11.html",
         "course/reference/frontier-patches-to-tokens.html",
         "course/reference/frontier-attention-worked-example.html"]


def test_every_page_is_chinese_html5_with_one_h1(site):
    for path in PAGES:
        html = (site / path).read_text(encoding="utf-8")
        assert html.startswith("<!doctype html>\n<html lang=\"zh-CN\">"), path
        page = Elements(html)
        assert len(page.find("h1")) == 1, path
        assert page.find("main", id="main") and page.find("a", **{"class": "skip-link"}), path


def test_reference_index_has_the_lecture05_anchor_listing_the_full_attention_material(site):
    page = Elements((site / "course/reference.html").read_text(encoding="utf-8"))
    assert page.find("h2", id="lecture05")
    hrefs = {attrs["href"] for _, attrs, _ in page.find("a") if "href" in attrs}
    assert {"lab11", "reference/frontier-patches-to-tokens",
            "reference/frontier-attention-worked-example"} <= hrefs


def test_breadcrumbs_and_previous_next_follow_site_yaml(site):
    import re
    html = (site / "course/lab11.html").read_text(encoding="utf-8")
    page = Elements(html)
    nav = re.search(r'<nav class="breadcrumbs".*?</nav>', html, flags=re.S).group(0)
    assert re.findall(r'href="([^"]+)"', nav) == ["../", "reference#lecture05"]
    assert '<li aria-current="page">LAB 09 · 视觉 Attention 完整层</li>' in nav
    assert page.find("a", rel="prev", href="reference/frontier-attention-worked-example")
    assert page.find("a", rel="next", href="reference")
    first = Elements((site / "course/guide.html").read_text(encoding="utf-8"))
    assert not first.find("a", rel="prev") and first.find("a", rel="next")


def test_404_links_are_root_absolute(site):
    page = Elements((site / "404.html").read_text(encoding="utf-8"))
    hrefs = [attrs["href"] for _, attrs, _ in page.find("a") if not attrs["href"].startswith("#")]
    assert hrefs and all(h.startswith("/") for h in hrefs)


def test_sitemap_robots_and_headers(site):
    sitemap = (site / "sitemap.xml").read_text()
    assert "<loc>https://codingai-lec02.pages.dev/course/lab11</loc>" in sitemap
    assert "404" not in sitemap and sitemap.count("<loc>") == len(PAGES) - 1
    assert "Sitemap: https://codingai-lec02.pages.dev/sitemap.xml" in (site / "robots.txt").read_text()
    headers = (site / "_headers").read_text()
    assert headers.count("Cache-Control: public, max-age=0, must-revalidate") == 1
    assert "/assets/*\n  ! Cache-Control\n" in headers


def test_all_paths_ascii_and_within_pages_limits(site):
    files = [p for p in site.rglob("*") if p.is_file()]
    assert len(files) < 20_000
    for path in files:
        rel = path.relative_to(site).as_posix()
        assert rel.isascii() and " " not in rel, rel
        assert path.stat().st_size < 25 * 2**20


def test_broken_anchor_fails_with_file_and_line(project):
    root, out, cache = project
    assert run_build(root, out, cache).returncode == 0
    before = tree_bytes(out)
    guide = root / "content/course/guide.md"
    lines = guide.read_text(encoding="utf-8").splitlines()
    lines.append("再看 [不存在的页](missing.md)。")
    guide.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elsewhere = out.with_name("warned")             # (a page the site lacks: its text, and a warning)
    result = run_build(root, elsewhere, cache)
    assert result.returncode == 0 and (f"warning: content/course/guide.md:{len(lines)}: links to missing.md, which is "
                                       "no page or label of this site: shown as its text") in result.stderr
    assert "再看 不存在的页。" in (elsewhere / "course/guide.html").read_text(encoding="utf-8")
    result = run_build(root, out, cache, "--strict")        # (as the deploy builds)
    assert result.returncode == 1 and f"content/course/guide.md:{len(lines)}: links to missing.md" in result.stderr
    guide.write_text("\n".join(lines[:-1] + ["再看 [不存在的一节](lab09.md#no-such-section)。"]) + "\n",
                     encoding="utf-8")
    result = run_build(root, out, cache, "--strict")      # (without: a warning; the link opens the page)
    assert result.returncode == 1
    assert (f"content/course/guide.md:{len(lines)}: href=\"lab11#no-such-section\" in course/guide.html: "
            "course/lab11.html has no id 'no-such-section'") in result.stderr
    assert tree_bytes(out) == before


def test_search_index_holds_each_pages_prose_by_section_and_no_code_or_tables(site, site_results):
    import json
    index = json.loads((site / "search.json").read_text(encoding="utf-8"))
    by_url = {page["url"]: page for page in index["pages"]}
    assert set(by_url) == {path.removesuffix(".html").removesuffix("index") for path in PAGES if path != "404.html"}
    lab = by_url["course/lab11"]
    assert lab["title"] == "LAB 09 · 视觉 Attention 完整层"
    page = Elements((site / "course/lab11.html").read_text(encoding="utf-8"))
    headings = {attrs["id"]: text.rstrip("#") for tag in ("h2", "h3") for _, attrs, text in page.find(tag)
                if not attrs["id"].startswith("explorer-")}        # the explorer is left out, as code is
    sections = {section_id: (heading, text) for section_id, heading, text in lab["sections"]}
    assert {k: v[0] for k, v in sections.items() if k} == headings     # every section, under its own id
    text = " ".join(heading + " " + body for heading, body in sections.values())
    assert "改一块图像，为什么另一块的输出也会改变？" in text          # prose
    assert "返回第二讲" in sections[""][1] and "首页" not in text      # the intro; breadcrumbs left out
    assert "def patchify" not in text and "np.set_printoptions" not in text   # code cells
    table_value = f"{site_results['trace']['scores'][1][3][2]:.4f}"
    assert table_value in (site / "course/lab11.html").read_text(encoding="utf-8")
    assert table_value not in text                                         # tensor tables
    assert "本页目录" not in text and "下一篇" not in text                 # navigation


def test_search_sections_skip_nested_ignored_elements_and_display_math():
    # render marks display formulas data-search-ignore, as it does code cells and tables
    from sitegen.render.search import page_sections
    html = ('<nav>首页</nav><article data-search-body><h1>标题</h1><p>开头 <math display="inline"><mi>x</mi></math></p>'
            '<div class="t" data-search-ignore><div><div>表内</div></div>表尾</div><p>之后</p>'
            '<h2 id="a">一节<a data-search-ignore href="#a">#</a></h2><p>正文</p>'
            '<div class="math" data-search-ignore><math display="block"><mi>y</mi></math></div><p>末尾</p></article><p>页脚</p>')
    assert page_sections(html) == [["", "标题", "开头 x 之后"], ["a", "一节", "正文 末尾"]]
