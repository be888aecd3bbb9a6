"""The block kinds are one registry: a new `::: kind` is one entry in blocks.KINDS and one partial."""
from __future__ import annotations

import pytest

from support import edit, empty_course, run_build, tiny_site

from sitegen.pages import blocks
from sitegen.core.errors import BuildError
from sitegen.pages.prose import format_value, lookup


def _check_value(checking, page, block, art):
    try:
        lookup(art.results, block.args[0])
    except LookupError as exc:
        checking.add(page, block, f"value {block.args[0]}: {exc}")


def _render_value(r, page, block, art):
    value = format_value(lookup(art.results, block.args[0]))
    return r.render_template("partials/value.html", label=block.options.get("label", ""), value=value)


@pytest.fixture()
def with_value_kind(monkeypatch):
    monkeypatch.setitem(blocks.KINDS, "value", blocks.Kind(1, {"label": None}, _check_value, _render_value))


def test_a_new_kind_is_one_entry_and_one_partial(tmp_path, with_value_kind):
    from sitegen.commands.pipeline import build
    root = tiny_site(tmp_path / "site")
    (root / "templates/partials").mkdir(parents=True)          # beside the theme's partials
    (root / "templates/partials/value.html").write_text(
        '<p class="value">{{ label }} <strong>{{ value }}</strong></p>\n', encoding="utf-8")
    edit(root / "content/index.md", "::: downloads", '::: value total label="总和"\n::: downloads')
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True)
    assert '<p class="value">总和 <strong>3.7500</strong></p>' in (tmp_path / "dist/index.html").read_text(encoding="utf-8")


def test_a_kind_checks_its_names_options_and_values(tmp_path, with_value_kind):
    from sitegen.commands.pipeline import build
    root = tiny_site(tmp_path / "site")
    edit(root / "content/index.md", "::: downloads",
         "::: value nothing\n::: value total colour=red\n::: cell setup output=folded\n::: downloads")
    lines = (root / "content/index.md").read_text(encoding="utf-8").splitlines()
    colour, folded = lines.index("::: value total colour=red") + 1, lines.index("::: cell setup output=folded") + 1
    with pytest.raises(BuildError) as caught:       # found while the page is read: before any lab runs
        build(root, tmp_path / "dist", cache=tmp_path / "cache")
    assert [str(p) for p in caught.value.problems] == [
        f"content/index.md:{colour}: '::: value' has no option 'colour' (expected: label)",
        f"content/index.md:{folded}: cell option output= must be 'shown' or 'collapsed' or 'hidden'"]


def widget_site(tmp_path, needs="[x, total]"):
    root = tiny_site(tmp_path / "site")
    (root / "static/sum.js").write_text('for (const s of document.querySelectorAll(".widget.sum")) s.hidden = false;\n',
                                        encoding="utf-8")
    edit(root / "site.yaml", "    page: index.md\n", f"    page: index.md\n    widget:\n      script: sum.js\n"
                                                       f"      needs: {needs}\n")
    edit(root / "content/index.md", "::: downloads", "::: widget tiny view=small\n::: downloads")
    return root


def test_a_lab_brings_its_own_widget(tmp_path):
    from sitegen.commands.pipeline import build
    root = widget_site(tmp_path)
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True)
    page = (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    assert ('<section class="widget sum" id="sum-tiny-small" data-results="materials/results.json" '
            'data-view="small" hidden data-search-ignore></section>') in page
    assert '<script type="module" src="assets/sum.' in page


def test_a_widget_s_own_stylesheet_is_loaded_by_the_pages_that_hold_it_only(tmp_path):
    from helpers import Elements
    from sitegen.commands.pipeline import build
    root = widget_site(tmp_path)
    (root / "static/sum.css").write_text(".widget.sum { border: 1px solid; }\n", encoding="utf-8")
    edit(root / "site.yaml", "      script: sum.js\n", "      script: sum.js\n      style: sum.css\n")
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True)

    def sheets(name):
        found = Elements((tmp_path / "dist" / name).read_text(encoding="utf-8")).find("link", rel="stylesheet")
        return [e[1]["href"].split(".")[0] for e in found]
    assert sheets("index.html") == ["assets/style", "assets/sum"]
    assert sheets("404.html") == ["/assets/style"]           # (the 404 page is served at any address)
    css = next((tmp_path / "dist/assets").glob("sum.*.css")).read_text(encoding="utf-8")
    assert css == ".widget.sum{border:1px solid}"
    edit(root / "site.yaml", "      style: sum.css", "      style: sum.js")
    with pytest.raises(BuildError, match=r"site.yaml:\d+: labs\[0\].widget.style names a .css file of static/"):
        build(root, tmp_path / "dist", cache=tmp_path / "cache")


def test_a_widget_s_mistakes_are_named(tmp_path):
    from sitegen.commands.pipeline import build
    root = widget_site(tmp_path, needs="[x, weights]")
    with pytest.raises(BuildError) as caught:
        build(root, tmp_path / "dist", cache=tmp_path / "cache")
    assert "widget: lab tiny's results.json lacks weights, which sum.js needs" in str(caught.value)
    edit(root / "site.yaml", "      script: sum.js", "      script: missing.js")
    with pytest.raises(BuildError, match=r"site.yaml:\d+: labs\[0\].widget.script: no such file static/missing.js"):
        build(root, tmp_path / "dist", cache=tmp_path / "cache")
    edit(root / "site.yaml", "    widget:\n      script: missing.js\n      needs: [x, weights]\n", "")
    with pytest.raises(BuildError, match="widget: lab tiny declares none: add `widget:"):
        build(root, tmp_path / "dist", cache=tmp_path / "cache")


def _mapped_site(tmp_path):
    from support import tiny_site
    root = tiny_site(tmp_path / "site")
    (root / "content/guide.md").write_text("---\ntitle: 导读\ndescription: 先读这一页。\nminutes: 7\n---\n"
                                           + "这一讲讲什么。" * 300 + "\n", encoding="utf-8")
    (root / "content/short.md").write_text("---\ntitle: 短页\n---\n" + "一句话。" * 400 + "\n", encoding="utf-8")
    with open(root / "content/index.md", "a", encoding="utf-8") as page:
        page.write("\n\n## 材料 {#materials}\n\n::: materials\n")
    with open(root / "site.yaml", "a", encoding="utf-8") as config:
        config.write("sequence:\n  - guide.md\n  - short.md\n  - index.md\n")
    return root


def test_the_lecture_s_map_lists_the_reading_order_with_what_each_is_and_the_time_it_asks(tmp_path):
    from helpers import Elements
    from support import run_build
    root = _mapped_site(tmp_path)
    assert run_build(root, root / "dist", root / ".cache", "--strict").returncode == 0
    found = Elements((root / "dist/index.html").read_text(encoding="utf-8"))
    items = [e for e in found.find("li", **{"class": "material"})]
    assert [i[1]["data-path"] for i in items] == ["/guide", "/short", "/"]
    titles = [t[2] for t in found.find("span", **{"class": "material-title"})]
    assert titles == ["导读", "短页", "小实验"]
    meta = [m[2].split(" · 读过")[0] for m in found.find("span", **{"class": "material-meta"})]
    assert meta == ["阅读 · 约 7 分钟", "阅读 · 约 4 分钟", "实验 · 约 1 分钟"]     # 1,600 characters: 4 minutes
    thumbs = found.find("img", **{"class": "material-thumb"})
    assert len(thumbs) == 1 and thumbs[0][1]["alt"] and thumbs[0][1]["src"].startswith("images/figure-01")
    # Another page's words are on this one: an edit there renders it again.
    guide = root / "content/guide.md"
    guide.write_text(guide.read_text(encoding="utf-8").replace("minutes: 7", "minutes: 9"), encoding="utf-8")
    assert run_build(root, root / "dist", root / ".cache").returncode == 0
    assert "阅读 · 约 9 分钟" in (root / "dist/index.html").read_text(encoding="utf-8")


def test_the_map_marks_what_this_reader_opened_and_offers_where_they_left_off(tmp_path, browser, emulator):
    from sitegen.commands.serve import serving
    from support import REPO, free_port, run_build
    root = _mapped_site(tmp_path)
    assert run_build(root, root / "dist", root / ".cache").returncode == 0
    port = free_port()
    with serving(REPO, root / "dist", port, tmp_path / "wrangler"):
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        assert page.locator(".materials-resume").is_hidden()           # nothing read yet
        page.goto(f"http://127.0.0.1:{port}/short")
        page.goto(f"http://127.0.0.1:{port}/")
        visited = page.eval_on_selector_all(".material", "ms => ms.map(m => m.classList.contains('material-visited'))")
        assert visited == [False, True, True]
        assert page.locator(".materials-resume a").inner_text() == "短页"       # the last opened, but this one
        page.goto(f"http://127.0.0.1:{port}/short")
        page.goto(f"http://127.0.0.1:{port}/guide")
        page.goto(f"http://127.0.0.1:{port}/")
        assert page.locator(".materials-resume a").inner_text() == "导读"
        assert page.locator(".materials-resume a").get_attribute("href") == "guide"
        assert page.evaluate("document.cookie") == "" and page.evaluate("document.documentElement.scrollWidth") <= 1280
        page.close()


# -- callouts: this site's ::: note ... ::: end, and the same boxes in MyST's, Quarto's and GitHub's syntax --

BOXES = """---
title: 框
---
::: note title="本站的"
本站语法的框。
::: end

```{tip} MyST 的
MyST 的框。
```

::: {.callout-warning collapse="true"}
## Quarto 的
Quarto 的框。
:::

> [!CAUTION]
> GitHub 的框。

::: exercise
题。
::: solution
::: important
解答里的框。
::: end
答。
::: end
"""
# The book's numbered things, beside the boxes: a theorem and its proof, a formula, a figure, a table.
BOOK = """
```{prf:theorem} 存在性
:label: thm-exist
$\\det A \\neq 0$ 时有解，见 [](#demand)。
```

```{prf:proof}
:class: dropdown
求逆即可。
```

```{math}
:label: demand
\\begin{aligned} q_0 &= 100 - 10 p_0 - 5 p_1 - 3 p_2 - 2 p_3 - p_4 \\\\ q_1 &= 50 - p_0 - 10 p_1 \\end{aligned}
```

![蓝色的方块](cat.png "第一张图。"){#blue}

| a | b |
|---|---|
| 1 | 2 |

: 一些数 {#numbers}

由 {eq}`demand`、{prf:ref}`thm-exist`、[](#blue) 与 [](#numbers) 可知，见 {cite}`li2019` 与 {term}`注意力`。

```{glossary}
注意力
  一种加权平均。
```
"""
# Margin notes and tabs, in each syntax.
ASIDES = """
::: margin title="本站的"
本站的旁注。
::: end

```{margin} MyST 的
MyST 的旁注。
```

::: {.column-margin}
Quarto 的旁注。
:::

::: tab title=本站的
本站的选项。
::: end

::::{tab-set}
:::{tab-item} MyST 的
MyST 的选项。
:::
::::

::: {.panel-tabset}
## Quarto 的
Quarto 的选项。
:::
"""
PIXEL = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c636060f80f0000010100"
                      "5a4d6e4b0000000049454e44ae426082")


def test_a_callout_in_each_syntax_is_a_box_labelled_by_its_kind_and_title(tmp_path):
    from sitegen.commands.pipeline import build
    from helpers import Elements
    root = empty_course(tmp_path / "site")
    (root / "content/boxes.md").write_text(BOXES, encoding="utf-8")
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True, solutions="shown")
    page = Elements((tmp_path / "dist/boxes.html").read_text(encoding="utf-8"))
    boxes = {attrs["class"]: attrs for tag, attrs, text in page.find("aside", role="note")}
    assert sorted(boxes) == sorted(f"callout callout-{kind}" for kind in ("note", "tip", "warning", "caution", "important"))
    labels = {}
    for attrs in boxes.values():
        [(tag, _, text)] = [e for e in page.elements if e[1].get("id") == attrs["aria-labelledby"]]
        labels[attrs["class"].split("-")[-1]] = (tag, text)
    assert labels == {"note": ("p", "注意 本站的"), "tip": ("p", "提示 MyST 的"), "warning": ("summary", "警告 Quarto 的"),
                      "caution": ("p", "小心"), "important": ("p", "重要")}
    [folded] = page.find("details", **{"class": "callout-fold"})
    assert "open" not in folded[1] and "Quarto 的框。" in folded[2]
    [exercise] = page.find("section", **{"class": "exercise"})
    assert "解答里的框。" in exercise[2] and "答。" in exercise[2]        # the callout's end closed it alone


def test_margin_notes_and_tabs_in_each_syntax_are_boxes_labelled_by_their_title(tmp_path):
    from sitegen.commands.pipeline import build
    from helpers import Elements
    root = empty_course(tmp_path / "site")
    (root / "content/asides.md").write_text("---\ntitle: 旁注\n---\n" + ASIDES, encoding="utf-8")
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True)
    page = Elements((tmp_path / "dist/asides.html").read_text(encoding="utf-8"))
    titles = {e[1]["id"]: e[2] for e in page.find("p", **{"class": "callout-title"})}
    shown = [(attrs["class"], titles[attrs["aria-labelledby"]], text)
             for _, attrs, text in page.find("aside", role="note")]
    assert [(kind.split("-")[-1], title) for kind, title, _ in shown] == [
        ("margin", "旁注 本站的"), ("margin", "旁注 MyST 的"), ("margin", "旁注"),
        ("tab", "选项 本站的"), ("tab", "选项 MyST 的"), ("tab", "选项 Quarto 的")]
    assert [text.strip().endswith(said + "。") for (_, _, text), said in zip(shown, (
        "本站的旁注", "MyST 的旁注", "Quarto 的旁注", "本站的选项", "MyST 的选项", "Quarto 的选项"))] == [True] * 6


LIST_TABLES = """
::: list-table header-rows=1 title="本站的表"
::: row
::: entry
写法
::: end
::: entry
结果
::: end
::: end
::: row
::: entry
```md
**粗**
```
::: end
::: entry
- 一项
- 两项
::: end
::: end
::: end

`````{list-table} MyST 的表
:header-rows: 1

* - 写法
  - 结果
* - ```md
    **粗**
    ```
  - ````{tip}
    格子里的框。
    ````
`````

表后的脚注[^after]。

[^after]: 一个脚注。
"""


def test_a_table_whose_cells_hold_blocks_in_each_syntax_is_a_table_its_first_rows_the_header(tmp_path):
    from sitegen.commands.pipeline import build
    from helpers import Elements
    root = empty_course(tmp_path / "site")
    (root / "content/tables.md").write_text("---\ntitle: 表\n---\n" + LIST_TABLES, encoding="utf-8")
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True)
    shown = (tmp_path / "dist/tables.html").read_text(encoding="utf-8")
    page = Elements(shown)
    assert [attrs["aria-label"] for _, attrs, _ in page.find("div", **{"class": "table-scroll"})] == ["本站的表", "MyST 的表"]
    assert [text for _, _, text in page.find("caption")] == ["本站的表", "MyST 的表"]
    assert [text.strip() for _, _, text in page.find("th", scope="col")] == ["写法", "结果"] * 2
    cells = [text for _, _, text in page.find("td")]
    assert len(cells) == 4 and all("**粗**" in cells[k] for k in (0, 2))
    assert "一项" in cells[1] and "格子里的框。" in cells[3]
    assert [e[1]["class"] for e in page.find("aside", role="note")] == ["callout callout-tip"]
    assert page.find("ul") and ":::" not in shown and "{list-table}" not in shown


def test_markup_of_other_tools_this_site_does_not_support_is_a_warning_naming_its_line(tmp_path):
    root = empty_course(tmp_path / "site")
    page = root / "content/index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n(intro)=\n见 {sub-ref}`intro`。\n\n```{grid} 旁注\n图。\n```\n",
                    encoding="utf-8")
    lines = page.read_text(encoding="utf-8").splitlines()
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    for marker, said in (("(intro)=", "the MyST target (intro)= stands above no heading or formula"),
                         ("见 {sub-ref}", "the MyST role {sub-ref} is not supported here"),
                         ("```{grid}", "the MyST directive {grid} is not supported here")):
        line = next(n for n, text in enumerate(lines, 1) if text.startswith(marker))
        assert f"warning: content/index.md:{line}: {said}" in result.stderr
    shown = (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    assert "(intro)=" not in shown and "{sub-ref}" not in shown and "{grid}" not in shown
    strict = run_build(root, tmp_path / "strict", tmp_path / "cache", "--strict")
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
    assert "the MyST role {sub-ref} is not supported here" in strict.stderr and "--strict makes it an error" in strict.stderr
    assert not (tmp_path / "strict").exists()


def test_a_notebook_s_markdown_cells_hold_callouts_and_their_notes_name_the_notebook_s_lines(tmp_path):
    import json
    root = empty_course(tmp_path / "site")
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# 笔记本\n\n:::{note} 记住\n要点。\n:::\n"},
        {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "见 {sub-ref}`e1`。"}]}
    text = json.dumps(notebook, ensure_ascii=False, indent=1)
    (root / "content/nb.ipynb").write_text(text, encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    line = next(n for n, text in enumerate(text.splitlines(), 1) if "{sub-ref}" in text)
    assert (f"warning: content/nb.ipynb:{line}: cell 2 (markdown), line 1: the MyST role {{sub-ref}} is not supported here"
            in result.stderr)
    page = (tmp_path / "dist/nb.html").read_text(encoding="utf-8")
    assert '<aside class="callout callout-note"' in page and "要点。" in page and ":::" not in page


def test_callouts_and_numbered_things_are_valid_html_and_accessible_light_and_dark_with_every_box_open(tmp_path, browser, vnu):
    import functools
    import http.server
    import subprocess
    import threading
    from support import REPO
    root = empty_course(tmp_path / "site")
    (root / "content/boxes.md").write_text(BOXES + BOOK + ASIDES + LIST_TABLES, encoding="utf-8")
    (root / "content/cat.png").write_bytes(PIXEL)
    (root / "content/references.bib").write_text("@book{li2019, author = {李航}, title = {统计学习方法}, year = {2019}}\n",
                                                 encoding="utf-8")
    edit(root / "site.yaml", "site:\n", "site:\n  bibliography: references.bib\n")
    # (in a process of its own: what formatting citations loads would stay in this one, which later tests
    # fork their labs' checkpoints from, tests/test_resume.py)
    built = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert built.returncode == 0, built.stderr
    shown = (tmp_path / "dist/boxes.html").read_text(encoding="utf-8")
    assert all(f'id="{label}"' in shown for label in ("thm-exist", "demand", "blue", "numbers", "ref-li2019",
                                                      "term-注意力")), shown
    checked = subprocess.run([*vnu, "--errors-only", str(tmp_path / "dist/boxes.html")], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path / "dist")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for scheme in ("light", "dark"):
            context = browser.new_context(viewport={"width": 360, "height": 800}, color_scheme=scheme, bypass_csp=True)
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/boxes.html")
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            page.add_script_tag(path=str(REPO / "tools/node_modules/axe-core/axe.min.js"))
            violations = page.evaluate("""async () => (await axe.run(document, {runOnly: {type: "tag",
                values: ["wcag2a", "wcag2aa", "wcag21aa", "best-practice"]}})).violations.map(v => v.id)""")
            assert violations == [], (scheme, violations)
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            context.close()
    finally:
        server.shutdown()


def test_footnotes_as_myst_quarto_and_github_write_them_are_numbered_links_listed_at_the_page_s_end(tmp_path):
    """(`[^name]` is MyST's, Pandoc's and GitHub's footnote: before, it showed raw on the page.)"""
    from sitegen.commands.pipeline import build
    from helpers import Elements
    root = empty_course(tmp_path / "site")
    (root / "content/notes.md").write_text(
        "---\ntitle: 脚注\n---\n正文[^first]。\n\n::: note\n框里[^box]。\n::: end\n\n"
        "```{list-table}\n* - ```md\n    [^x]\n    ```\n  - 格子[^first]\n```\n\n"
        "[^box]: 框的脚注。\n[^first]: 第一个脚注，**加粗**。\n", encoding="utf-8")
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True)
    shown = (tmp_path / "dist/notes.html").read_text(encoding="utf-8")
    page = Elements(shown)
    refs = page.find("a", **{"class": "footnote-ref"})
    assert [(e[1]["href"], e[2]) for e in refs] == [("#fn-first", "1"), ("#fn-box", "2"), ("#fn-first", "1")]
    [notes] = page.find("div", **{"class": "footnote"})
    assert notes[1]["role"] == "doc-endnotes" and notes[1]["aria-label"] == "脚注"
    assert [e[1]["id"] for e in page.find("li") if e[1].get("id", "").startswith("fn-")] == ["fn-first", "fn-box"]
    assert "[^first]" not in shown and "[^box]" not in shown and "[^x]" in shown       # (code shows as written)
