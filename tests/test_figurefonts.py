"""Figures fall back on the site's fonts for characters Matplotlib's own lacks (sitegen/project/figurefonts.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from sitegen.project.figurefonts import locate, parse
from support import computed, edit, run_build, tiny_site

NOTO = "zhplot:fonts/NotoSansSC-Regular.ttf"


def test_a_font_is_named_as_a_file_inside_an_installed_package():
    assert parse(NOTO) == ("zhplot", "fonts/NotoSansSC-Regular.ttf")
    assert locate(NOTO).name == "NotoSansSC-Regular.ttf"
    for bad in ("fonts/mine.ttf", "zhplot:/etc/passwd", "zhplot:../x.ttf", "no-such:x.ttf", "zhplot:", ":x.ttf"):
        assert locate(bad) is None, bad
    assert locate("zhplot:fonts/NotoSansTC-Regular.ttf") is None      # the package exists, the file does not


def _with_fonts(root, fonts: list[str]) -> None:
    lines = "".join(f"\n    - {font}" for font in fonts)
    edit(root / "site.yaml", "  language: zh-CN", "  language: zh-CN\n  figure_fonts:" + lines)


def test_chinese_in_a_figure_draws_in_the_build_and_in_the_students_notebook(tmp_path):
    root = tiny_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "ax.plot(x[0])", "ax.plot(x[0])\nax.set_title('第一行：x[0]')")
    _with_fonts(root, [NOTO])
    built = run_build(root, tmp_path / "out", tmp_path / "cache")
    assert built.returncode == 0, built.stderr
    notebook = json.loads((tmp_path / "out/materials/tiny.ipynb").read_text(encoding="utf-8"))
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    setup = "".join(code[0]["source"])
    assert code[0]["metadata"]["name"] == "figure-fonts" and "pip install zhplot" in setup and NOTO.split(":")[1] in setup
    provenance = json.loads((tmp_path / "out/materials/results.json").read_text(encoding="utf-8"))["provenance"]
    assert list(provenance["figure_fonts"]) == [NOTO] and len(provenance["figure_fonts"][NOTO]) == 64

    # A student reruns the notebook: its cells in order, a missing glyph an error as in the build.
    def rerun(cells) -> subprocess.CompletedProcess:
        work = tmp_path / f"rerun{len(cells)}"
        work.mkdir()
        script = "\n".join("".join(cell["source"]) for cell in cells)
        return subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", script], cwd=work,
                              capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert rerun(code).returncode == 0, rerun(code).stderr
    without = rerun(code[1:])                      # the check can fail: without the setup cell, boxes
    assert without.returncode == 1 and "missing from font(s) DejaVu Sans" in without.stderr


def test_fallback_fonts_key_the_cache_and_leave_latin_figures_byte_identical(tmp_path):
    root = tiny_site(tmp_path / "site")
    first = run_build(root, tmp_path / "plain", tmp_path / "cache")
    assert first.returncode == 0 and computed(first) == {"tiny"}, first.stderr
    _with_fonts(root, [NOTO])
    second = run_build(root, tmp_path / "fonts", tmp_path / "cache")
    assert second.returncode == 0 and computed(second) == {"tiny"}, second.stderr    # a new key: computed again
    plain, fonts = (tmp_path / "plain/images", tmp_path / "fonts/images")
    assert sorted(p.name for p in plain.iterdir()) == sorted(p.name for p in fonts.iterdir()) != []
    for figure in plain.iterdir():                 # no character needed the fallback: the same pixels, bytes
        assert figure.read_bytes() == (fonts / figure.name).read_bytes()
    again = run_build(root, tmp_path / "fonts", tmp_path / "cache")
    assert again.returncode == 0 and computed(again) == set(), again.stdout
