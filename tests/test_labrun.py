"""What runs inside a lab's process: figures written fast by the lab backend, re-encoded in 256
colours with the background exact."""
from __future__ import annotations


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
