"""The pages as a student's browser sees them: Debian Chromium, through the Pages emulator."""
from __future__ import annotations

import pytest

from probes import CLIPPED
from support import REPO

PAGES = ["/", "/course/guide", "/course/reference", "/course/lab11",
         "/course/reference/frontier-patches-to-tokens", "/course/reference/frontier-attention-worked-example",
         "/no-such-page"]
AXE = REPO / "tools/node_modules/axe-core/axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


def visit(context, port: int, path: str, retried: bool = False):
    """Open a page and record everything that went wrong while it loaded.

    A request of the site's own that the local emulator dropped (CI's two cores, busy with kernels,
    once reset workerd's connections for four scripts at once) is loaded again, once: a file that
    is missing or broken fails both times, and is reported with the browser's reason."""
    page = context.new_page()
    site = f"http://127.0.0.1:{port}/"
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} ({r.failure})"))
    page.on("request", lambda r: None if r.url.startswith((site, "data:")) else problems.append(f"outside: {r.url}"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 and not (path == "/no-such-page" and r.url == site + path[1:]) else None)
    response = page.goto(site + path.lstrip("/"))
    page.evaluate("async () => { for (let y = 0; y < document.body.scrollHeight; y += 500) {"
                  " window.scrollTo(0, y); await new Promise(r => setTimeout(r, 20)); } window.scrollTo(0, 0); }")
    page.wait_for_load_state("networkidle")
    dropped = problems and all(p.startswith(f"failed: {site}") for p in problems)
    if dropped and not retried:
        page.close()
        return visit(context, port, path, retried=True)
    return page, response, problems


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_loads_cleanly_on_a_phone(browser, served, scheme):
    context = browser.new_context(viewport={"width": 375, "height": 800}, device_scale_factor=2,
                                  is_mobile=True, has_touch=True, color_scheme=scheme)
    for path in PAGES:
        page, response, problems = visit(context, served, path)
        assert response.status == (404 if path == "/no-such-page" else 200), path
        if path == "/no-such-page":    # the document's own 404 is reported once, as it should be
            problems.remove("console error: Failed to load resource: the server responded with a status of 404 (Not Found)")
        assert problems == [], (path, problems)
        # Nothing wider than the phone, except tables, code and formulas that scroll in their own box.
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 375, path
        images = page.evaluate("() => [...document.images].filter(i => !i.complete || !i.naturalWidth).length")
        assert images == 0, path
        page.close()
    context.close()


@pytest.mark.parametrize("scheme,width", [("light", 375), ("dark", 375), ("light", 1280)])
def test_axe_finds_no_accessibility_violations(browser, served, scheme, width):
    # axe is injected as a script; bypass_csp lets the test add it (the site's own pages never need it).
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True)
    for path in PAGES:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{served}{path}")
        for explorer in page.locator(".explorer").all():     # check the explorer as students see it
            explorer.wait_for(state="visible")
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate("""async (tags) => {
            const result = await axe.run(document, {runOnly: {type: "tag", values: tags}});
            return result.violations.map(v => `${v.id}: ${v.help} -> ${v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")}`);
        }""", AXE_TAGS)
        assert violations == [], (path, scheme, violations)
        page.close()
    context.close()


def test_skip_link_comes_first_and_focus_is_visible(browser, served):
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/course/lab11")
    page.keyboard.press("Tab")
    focused = page.evaluate("""() => { const e = document.activeElement, s = getComputedStyle(e);
        return {cls: e.className, top: e.getBoundingClientRect().top, outline: s.outlineStyle, width: s.outlineWidth}; }""")
    assert focused["cls"] == "skip-link" and focused["top"] >= 0
    assert focused["outline"] != "none" and focused["width"] != "0px"
    page.keyboard.press("Enter")
    assert page.evaluate("() => location.hash") == "#main"
    context.close()


@pytest.mark.parametrize("query", ["注意力", "softmax", "意力"])
def test_search_from_the_lab_page_finds_the_lab_and_the_worked_example(browser, served, query):
    """Substrings match, so part of a Chinese word (意力 in 注意力) is found too; results link to the section."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/course/lab11")
    page.fill("#search-input", query)
    page.locator(".search-results li").first.wait_for(timeout=15_000)
    titles = page.locator(".search-results li a").all_inner_texts()
    assert "LAB 09 · 视觉 Attention 完整层" in titles
    assert "参考图解：读回与完整层" in titles
    assert page.locator(".search-status").inner_text() == f"找到 {len(titles)} 个页面"
    result = page.locator(".search-results li", has_text="参考图解：读回与完整层")
    assert query.lower() in result.locator("mark").first.inner_text().lower()
    result.locator("a").click()
    page.wait_for_load_state()
    path, _, section = page.url.partition("#")
    assert path.endswith("/course/reference/frontier-attention-worked-example")
    if section:     # the section the match is in
        text = page.locator(f"[id='{section}']").evaluate(
            "h => { let t = h.textContent, n = h.nextElementSibling;"
            " while (n && !/^H[23]$/.test(n.tagName)) { t += n.textContent; n = n.nextElementSibling; } return t; }")
        assert query.lower() in text.lower()
    page.fill("#search-input", "没有这个词qzx")
    page.locator(".search-status", has_text="没有找到匹配的页面").wait_for(timeout=5_000)
    assert page.locator(".search-results li").count() == 0
    context.close()


def test_a_phrase_pasted_from_any_page_punctuation_included_finds_that_page(browser, served, site):
    """Full-width punctuation (图像，为什么) is folded alike in the query and the index: every page
    is found by a phrase of its own text around a punctuation mark, which the result marks as shown."""
    import json
    import re
    index = json.loads((site / "search.json").read_text(encoding="utf-8"))
    context = browser.new_context(viewport={"width": 390, "height": 800})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/")
    tried = 0
    for entry in index["pages"]:
        text = " ".join(section[2] for section in entry["sections"])
        match = re.search(r"[\u4e00-\u9fff]{3}[，：；（）、][\u4e00-\u9fff]{3}", text)
        if not match:
            continue
        tried += 1
        page.fill("#search-input", match[0])
        page.locator(".search-results li a", has_text=entry["title"]).first.wait_for(timeout=15_000)
        result = page.locator(".search-results li", has_text=entry["title"]).first
        assert match[0] in result.locator("mark").all_inner_texts(), entry["title"]
    assert tried >= 5
    context.close()


TOUCH = """() => {
  const problems = [];
  const name = (e) => `${e.tagName.toLowerCase()}${e.className ? "." + e.className : ""} "${(e.textContent || e.value || e.getAttribute("aria-label") || "").trim().slice(0, 20)}"`;
  for (const e of document.querySelectorAll("input, select, textarea")) {
    const size = parseFloat(getComputedStyle(e).fontSize);
    if (e.type !== "checkbox" && e.type !== "radio" && size < 16) problems.push(`${name(e)}: text ${size}px (iOS zooms below 16)`);
  }
  for (const e of document.querySelectorAll("button, input, select, summary")) {
    if (!e.getClientRects().length) continue;                       // not shown
    const area = (e.type === "checkbox" || e.type === "radio") && e.closest("label") ? e.closest("label") : e;
    const r = area.getBoundingClientRect();
    if (r.width < 24 || r.height < 24) problems.push(`${name(e)}: target ${r.width.toFixed(0)}×${r.height.toFixed(0)} px`);
  }
  for (const b of document.querySelectorAll(".copy-button")) {
    const code = b.parentElement.querySelector("pre").getBoundingClientRect();
    if (b.getBoundingClientRect().bottom > code.top + 1) problems.push(`${name(b)} covers the code`);
  }
  return problems;
}"""


@pytest.mark.parametrize("width", [360, 390])
@pytest.mark.parametrize("path", ["/course/lab11", "/course/reference/frontier-attention-worked-example"])
def test_touch_targets_are_big_enough_and_inputs_never_make_ios_zoom(browser, served, path, width):
    """WCAG 2.2's 24 px targets, text fields of 16 px or more, copy buttons that cover no code."""
    context = browser.new_context(viewport={"width": width, "height": 800}, has_touch=True, is_mobile=True)
    page, _, problems = visit(context, served, path)
    assert page.locator(".copy-button").count() > 0 and page.locator("input").count() > 1
    assert page.evaluate(TOUCH) == [] and problems == []
    context.close()





@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [360, 375, 390, 412, 1280])
def test_no_number_or_formula_is_clipped_and_tensors_of_four_columns_fit(browser, served, width, scheme):
    """A number cut at its box's edge reads as another number: tables of up to 4 columns fit a phone,
    wider ones scroll in a box that shows it scrolls, and every display formula fits."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    for path in ("/course/lab11", "/course/reference/frontier-attention-worked-example",
                 "/course/reference/frontier-patches-to-tokens"):
        page, _, problems = visit(context, served, path)
        if page.locator("[id^=explorer-]").count():
            page.locator("[id^=explorer-] .explorer-views table").first.wait_for()
        assert page.evaluate(CLIPPED) == [] and problems == [], path
        if page.locator("math").count():            # drawn with the site's own math font, not a text font
            page.evaluate("() => document.fonts.ready")
            assert page.evaluate("() => [...document.fonts].filter(f => f.status === 'loaded').map(f => f.family)") \
                == ["Site Math"], path
            assert page.evaluate("() => getComputedStyle(document.querySelector('math')).fontFamily").startswith(
                '"Site Math"')
        page.close()
    context.close()


def test_copy_button_copies_the_code(browser, served):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=f"http://127.0.0.1:{served}")
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/course/lab11")
    block = page.locator(".highlight").first
    block.locator(".copy-button").click()
    block.locator(".copy-button", has_text="已复制").wait_for(timeout=5_000)
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == block.locator("pre").inner_text() and copied.startswith("from pathlib import Path")
    context.close()


def test_print_shows_code_and_tables_whole(browser, served):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/course/lab11")
    page.emulate_media(media="print")
    clipped = page.evaluate("""() => [...document.querySelectorAll("pre, table, .table-scroll")]
        .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.outerHTML.slice(0, 80))""")
    assert clipped == []
    hidden = page.evaluate("""() => ["nav.toc", ".site-search", ".pager", ".copy-button"]
        .map(s => document.querySelector(s)).filter(Boolean).every(e => getComputedStyle(e).display === "none")""")
    assert hidden
    context.close()


def test_dark_mode_follows_the_system(browser, served):
    colours = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme)
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{served}/course/lab11")
        colours[scheme] = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        context.close()
    assert colours == {"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}
