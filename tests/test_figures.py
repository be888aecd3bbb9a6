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

    from conftest import REPO
    from sitegen.cells import cell_code, read_cells
    script = REPO / "compute/lab09_vision_attention.py"
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
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


def test_the_lab_backend_saves_the_same_pixels_as_agg(tmp_path):
    """Labs run with sitegen.labbackend: only the PNG's compression differs from Agg, whatever savefig is given."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    from sitegen.labbackend import FigureCanvas
    figure = Figure(figsize=(3, 2))
    figure.add_subplot().imshow(np.arange(12.0).reshape(3, 4))
    saved = {}
    for name, canvas in (("agg", FigureCanvasAgg), ("lab", FigureCanvas)):
        canvas(figure)
        figure.savefig(tmp_path / f"{name}.png", dpi=150, bbox_inches="tight", metadata={"Software": None})
        saved[name] = np.asarray(Image.open(tmp_path / f"{name}.png"))
    assert saved["lab"].shape == saved["agg"].shape and (saved["lab"] == saved["agg"]).all()
    assert (tmp_path / "lab.png").stat().st_size > (tmp_path / "agg.png").stat().st_size   # level 1, not 6


def test_figures_are_quantized_with_their_background_exact_and_as_close_as_a_full_median_cut():
    import io

    import numpy as np
    from PIL import Image

    from sitegen.labrun import _quantized

    def psnr(image, original):
        error = np.asarray(image.convert("RGB")).astype(float) - original[..., :3]
        return 10 * np.log10(255 ** 2 / max((error ** 2).mean(), 1e-12))

    rng = np.random.default_rng(0)
    rgba = np.full((120, 200, 4), 255, dtype=np.uint8)                           # white face
    rgba[20:100, 30:170, 0] = np.linspace(0, 255, 140, dtype=np.uint8)[None, :]  # a 2-D gradient
    rgba[20:100, 30:170, 2] = np.linspace(255, 0, 80, dtype=np.uint8)[:, None]
    rgba[5, :, :3] = rng.integers(0, 256, (200, 3))                             # and noise
    blank = np.full((10, 10, 4), [200, 210, 220, 255], dtype=np.uint8)
    for original in (rgba, blank):
        buffer = io.BytesIO()
        Image.fromarray(original, "RGBA").save(buffer, "PNG")
        out = Image.open(io.BytesIO(_quantized(buffer.getvalue())))
        assert out.mode == "P" and "transparency" not in out.info
        back = np.asarray(out.convert("RGB"))
        assert (back[0, 0] == original[0, 0, :3]).all() and (back[-1, -1] == original[-1, -1, :3]).all()
        whole = Image.fromarray(original[..., :3], "RGB").quantize(256, method=Image.Quantize.MEDIANCUT,
                                                                   dither=Image.Dither.NONE)
        assert psnr(out, original) >= psnr(whole, original) - 1.0
