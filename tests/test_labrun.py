"""What runs inside a lab's process: figures written fast by the lab backend, re-encoded in 256
colours with the background exact."""
from __future__ import annotations


def test_the_lab_backend_saves_the_same_pixels_as_agg(tmp_path):
    """Labs run with sitegen.labs.labbackend: only the PNG's compression differs from Agg, whatever savefig is given."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    from sitegen.labs.labbackend import FigureCanvas
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

    from sitegen.labs.labrun import _quantized

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


# -- cells as Jupyter shows them ---------------------------------------------------

def _run(tmp_path, script: str, display: str) -> dict:
    """run_cells on `script`, in a process of its own (it changes folder and imports Matplotlib)."""
    import json
    import subprocess
    import sys

    from support import REPO
    (tmp_path / "lab.py").write_text(script, encoding="utf-8")
    (tmp_path / "work").mkdir()
    code = ("import json, sys; from sitegen.project.cells import parse_cells; from sitegen.labs.labrun import run_cells; "
            "script = sys.argv[1]; cells = parse_cells(open(script).read(), 'lab.py'); "
            "print(json.dumps(run_cells(script, cells, sys.argv[2], display=sys.argv[3])))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "lab.py"), str(tmp_path / "work"), display],
                          capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(done.stdout.splitlines()[-1])


JUPYTER_LAB = '''\
# %% values
import numpy as np
print("printed")
np.arange(3) * 0.5

# %% silenced
41 + 1;  # a trailing semicolon hides the value

# %% nothing
x = {"key": list(range(30)), "other": "text"}
None

# %% pretty
x

# %% drawn
import matplotlib.pyplot as plt
plt.figure(); plt.plot([1, 2])
fig, ax = plt.subplots(); ax.bar([0, 1], [2, 3]); plt.show()

# %% saved
fig, ax = plt.subplots(); ax.plot([3, 1]); fig.savefig("mine.png"); plt.show()

# %% later
object()

# %% meant tags=["raises-exception"]
print("before")
1 / 0
'''


def test_jupyter_display_shows_the_last_expression_and_the_figures_left_open(tmp_path):
    run = _run(tmp_path, JUPYTER_LAB, "jupyter")
    assert run["error"] is None
    cells = {c["name"]: c for c in run["cells"]}
    assert cells["values"]["stdout"] == "printed\n" and cells["values"]["value"] == "array([0. , 0.5, 1. ])"
    assert cells["silenced"]["value"] is None and cells["nothing"]["value"] is None
    # a long dict wrapped at 79 columns, in its own order, as IPython's own pretty printer shows it
    from IPython.lib.pretty import pretty
    assert cells["pretty"]["value"] == pretty({"key": list(range(30)), "other": "text"})
    assert "\n" in cells["pretty"]["value"]
    assert cells["later"]["value"] == "<object>"          # never an address: it differs every run
    assert cells["drawn"]["figures"] == ["drawn-1.png", "drawn-2.png"]   # both, plt.show() or not
    assert cells["saved"]["figures"] == ["mine.png"]                      # once, under the name it chose
    assert all(not c["figures"] for name, c in cells.items() if name not in ("drawn", "saved"))
    assert cells["meant"]["stdout"] == "before\n"
    assert cells["meant"]["error"] == "ZeroDivisionError: division by zero"


def test_script_display_shows_only_what_was_printed_and_saved(tmp_path):
    run = _run(tmp_path, JUPYTER_LAB, "script")
    cells = {c["name"]: c for c in run["cells"]}
    assert all(c["value"] is None for c in cells.values())
    assert [c["figures"] for c in cells.values() if c["figures"]] == [["mine.png"]]
    assert cells["meant"]["error"] == "ZeroDivisionError: division by zero"     # a tag holds in any display


def test_an_unmeant_error_and_a_meant_one_that_never_comes_fail_the_lab_at_their_line(tmp_path):
    run = _run(tmp_path, "# %% first\nx = 1\n\n# %% second\nx = 1 / 0\n", "jupyter")
    assert run["error"]["line"] == 5 and "ZeroDivisionError" in run["error"]["message"]
    (tmp_path / "again").mkdir()
    run = _run(tmp_path / "again", '# %% fine tags=["raises-exception"]\nx = 1\n', "jupyter")
    assert run["error"]["line"] == 1
    assert "tagged raises-exception but raised nothing" in run["error"]["message"]


def test_a_marker_with_anything_but_tags_after_the_name_is_named():
    import pytest

    from sitegen.project.cells import parse_cells
    from sitegen.core.errors import BuildError
    assert parse_cells('# %% a tags=["x", "raises-exception"]\n1\n', "l.py")[0].raises
    with pytest.raises(BuildError) as caught:
        parse_cells("# %% a title with words\n1\n", "l.py")
    assert caught.value.problems[0].line == 1 and "only its tags" in caught.value.problems[0].message


def test_a_lab_that_writes_no_results_json_has_its_top_level_values_as_results(tmp_path):
    """As a notebook: its numbers, strings, arrays and lists of them, NumPy scalars included; not
    its modules, functions, figures, private names, NaN, or arrays too large to quote."""
    import json
    script = ("# %% fit\nimport numpy as np\nimport matplotlib.pyplot as plt\n"
              "loss = np.float64(0.125)\nsteps = 40\nname = '线性回归'\nweights = np.array([[1.0, 2.5], [3.0, 4.0]])\n"
              "history = [1.0, 0.5, 0.25]\nbest = {'lr': 0.1, 'ok': True}\n_private = 1\nbad = float('nan')\n"
              "big = np.zeros(200_000)\nfig = plt.figure()\ndef f(x):\n    return x\n")
    run = _run(tmp_path, script, "jupyter")
    assert run["error"] is None
    results = json.loads((tmp_path / "work/results.json").read_text(encoding="utf-8"))
    assert results == {"loss": 0.125, "steps": 40, "name": "线性回归", "weights": [[1.0, 2.5], [3.0, 4.0]],
                       "history": [1.0, 0.5, 0.25], "best": {"lr": 0.1, "ok": True}}


def test_a_lab_that_writes_its_own_results_json_keeps_it_as_written(tmp_path):
    import json
    script = ("# %% save\nimport json\nfrom pathlib import Path\nloss = 0.5\nPath('out').mkdir()\n"
              "Path('out/results.json').write_text(json.dumps({'mine': 1}))\n")
    _run(tmp_path, script, "script")
    assert not (tmp_path / "work/results.json").exists()
    assert json.loads((tmp_path / "work/out/results.json").read_text(encoding="utf-8")) == {"mine": 1}


def test_a_lab_reads_bytecode_beside_the_sources_even_where_the_build_keeps_it_under_a_prefix(tmp_path):
    """(Under PYTHONPYCACHEPREFIX, a folder a lab may not write, each import of pandas or SymPy was compiled
    from its source in every run.)"""
    from support import empty_course, run_build, write_notebook
    root = empty_course(tmp_path / "site")
    write_notebook(root / "content/prefix.ipynb", "字节码", "import sys\nprint('prefix:', sys.pycache_prefix)")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", env={"PYTHONPYCACHEPREFIX": str(tmp_path / "pyc")})
    assert result.returncode == 0, result.stderr
    assert "prefix: None" in (tmp_path / "dist/prefix.html").read_text(encoding="utf-8")
