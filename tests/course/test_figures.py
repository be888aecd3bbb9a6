"""The lab's figures: regenerated each build, crisp at 2x, described, without metadata."""
from __future__ import annotations

import struct

from helpers import Elements


def png_chunks(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos = 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind.decode(), data[pos + 8:pos + 8 + length]
        pos += 12 + length


def test_three_figures_with_alt_text_and_2x_density(site):
    page = Elements((site / "course/lab11.html").read_text(encoding="utf-8"))
    images = [attrs for tag, attrs, _ in page.elements if tag == "img"]
    assert [i["src"] for i in images] == [f"images/LAB11-B/figure-0{n}.png" for n in (1, 2, 3)]
    for attrs in images:
        data = (site / "course" / attrs["src"]).read_bytes()
        width, height = struct.unpack(">II", data[16:24])
        assert len(attrs["alt"]) > 20
        assert abs(int(attrs["width"]) * 2 - width) <= 1 and abs(int(attrs["height"]) * 2 - height) <= 1
        assert int(attrs["width"]) >= 600, "shown at most this wide, so 2x pixels on desktop and more on phones"
    captions = [text for tag, _, text in page.elements if tag == "figcaption"]
    assert len(captions) == 3 and all("本次构建实际计算" in c for c in captions)


def test_pngs_carry_no_text_metadata(site):
    for n in (1, 2, 3):
        kinds = [kind for kind, _ in png_chunks((site / f"course/images/LAB11-B/figure-0{n}.png").read_bytes())]
        assert not {"tEXt", "iTXt", "zTXt", "tIME"} & set(kinds), kinds


def test_figure_two_colour_bar_clears_the_third_panel(tmp_path, monkeypatch):
    """The seed's defect: its colour bar overlapped the third panel's y-axis label.

    Run the lab's cells up to `readback` and measure the drawn figure: the
    colour bar (with its tick labels) must end left of the third panel's
    y-axis label, with a gap.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from support import REPO
    from sitegen.project.cells import cell_code, read_cells
    from sitegen.project.config import load_config
    from sitegen.project.figurefonts import setup_code
    script = REPO / "compute/lab09_vision_attention.py"
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    exec(setup_code(load_config(REPO).figure_fonts), namespace)       # as the build draws it
    for cell in read_cells(script, REPO):
        exec(compile(cell_code(cell), str(script), "exec"), namespace)
        if cell.name == "readback":
            break
    fig, axes = namespace["fig"], namespace["axes"]
    renderer = fig.canvas.get_renderer()
    colorbars = [ax for ax in fig.axes if ax not in list(axes)]
    assert len(colorbars) == 1
    bar_right = colorbars[0].get_tightbbox(renderer).x1
    label_left = axes[2].yaxis.label.get_window_extent(renderer).x0
    assert label_left - bar_right > 5, (bar_right, label_left)
    plt.close("all")
