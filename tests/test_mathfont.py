"""The math font: the vendored STIX Two Math is the registry's file, and a site ships only the
glyphs its formulas use, with the MATH table that draws radicals and large operators."""
from __future__ import annotations

import hashlib
import io
import re

from support import run_build, tiny_site


def test_the_vendored_font_is_the_registry_s_file_with_its_licence():
    from sitegen.render.mathfont import FONT
    readme = (FONT.parent / "README.md").read_text(encoding="utf-8")
    assert hashlib.sha256(FONT.read_bytes()).hexdigest() in readme
    assert "SIL Open Font License" in (FONT.parent / "OFL.txt").read_text(encoding="utf-8")


def test_a_site_ships_the_glyphs_of_its_formulas_and_nothing_without_them(tmp_path):
    from fontTools.ttLib import TTFont
    root = tiny_site(tmp_path / "site")
    result = run_build(root, tmp_path / "plain", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert not list((tmp_path / "plain/assets").glob("math.*.woff"))       # no formula, no font

    page = root / "content/index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n$$\\sqrt{\\sigma^2 + \\epsilon} = \\sum_{c} x_c$$\n",
                    encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    [font] = (tmp_path / "dist/assets").glob("math.*.woff")
    [css] = (tmp_path / "dist/assets").glob("style.*.css")
    assert re.search(r'@font-face\{font-family:"Site Math";src:url\("' + re.escape(font.name) + r'"\)',
                     css.read_text(encoding="utf-8"))
    subset = TTFont(io.BytesIO(font.read_bytes()))
    covered = set(subset.getBestCmap())
    assert {ord(c) for c in "√σϵ∑=+2"} | {0x1D465, 0x1D450} <= covered        # 𝑥 and 𝑐: italic identifiers
    assert ord("Q") not in covered and len(covered) < 80
    assert "MATH" in subset and subset["MATH"].table.MathVariants is not None
    assert font.stat().st_size < 40_000


def test_a_student_build_s_font_holds_no_glyph_only_a_solution_s_formula_shows(tmp_path):
    from fontTools.ttLib import TTFont
    root = tiny_site(tmp_path / "site")
    page = root / "content/index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n::: exercise\n求 $x + 1$。\n::: solution\n"
                    "答案是 $\\aleph_0 \\oplus x$。\n::: end\n", encoding="utf-8")
    covered = {}
    for mode, args in (("folded", ()), ("omitted", ("--no-solutions",))):
        result = run_build(root, tmp_path / mode, tmp_path / "cache", "--strict", *args)
        assert result.returncode == 0, result.stderr
        [font] = (tmp_path / mode / "assets").glob("math.*.woff")
        covered[mode] = set(TTFont(io.BytesIO(font.read_bytes())).getBestCmap())
    assert {ord("ℵ"), ord("⊕"), ord("+"), 0x1D465} <= covered["folded"]           # (the test can fail)
    assert {ord("+"), 0x1D465} <= covered["omitted"]
    assert not {ord("ℵ"), ord("⊕")} & covered["omitted"]
