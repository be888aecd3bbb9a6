"""The Matplotlib backend labs run with in the build: Agg, writing PNGs fast.

The build re-encodes every figure a lab saves (256 colours, see
labrun._quantized), so the PNG the lab itself writes is only an
intermediate: zlib level 1 instead of Matplotlib's 6 saves about a third of
each `savefig` call's encoding and of the build's decoding. Selected with
MPLBACKEND=module://sitegen.labs.labbackend; a lab run by hand or as a notebook
is unaffected.
"""
from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg


class FigureCanvas(FigureCanvasAgg):
    # savefig passes backends outside Matplotlib every option it has (orientation,
    # dpi, ...); Agg's own print_png takes only these two.
    def print_png(self, filename_or_obj, *, metadata=None, pil_kwargs=None, **_):
        super().print_png(filename_or_obj, metadata=metadata, pil_kwargs={"compress_level": 1, **(pil_kwargs or {})})
