"""Under serve, a lab runs again from the checkpoint after the last cell that still stands (resume.py,
checkpoint.py): the same bytes as a run from its first cell, whatever invalidated the rest."""
from __future__ import annotations

import os
import time

import pytest

from support import EPOCH, edit, tiny_site, tree_bytes

from sitegen.commands.pipeline import build
from sitegen.labs.resume import MIB, KeptLabs

LAB = """# A lab whose state runs through its cells: a random generator drawn from in each.

# %% setup
import json
from pathlib import Path
import numpy as np
import matplotlib.pyplot as plt
out = Path('out')
out.mkdir(exist_ok=True)
rng = np.random.default_rng(7)
x = np.arange(6, dtype=float).reshape(2, 3) / 4
state = rng.standard_normal(1000)
print('x =', x)
fig, ax = plt.subplots(figsize=(4, 2))
ax.plot(x[0])
fig.savefig(out / 'line.png')

# %% data
import helper
scale = float((Path(__file__).parent / 'scale.txt').read_text())
(out / 'scaled.txt').write_text(repr(helper.twice(scale) * state.sum()))
draws = rng.standard_normal(3)

# %% save
(out / 'results.json').write_text(json.dumps({'x': x.tolist(), 'total': float(x.sum()), 'draw': draws.tolist(),
                                              'next': float(rng.standard_normal())}))
np.savez(out / 'tensors.npz', x=x)
print('saved', scale)
"""


@pytest.fixture(autouse=True)
def _fixed_epoch(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


@pytest.fixture()
def site(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "compute/tiny.py").write_text(LAB, encoding="utf-8")
    (root / "compute/helper.py").write_text("def twice(v):\n    return 2 * v\n", encoding="utf-8")
    (root / "compute/scale.txt").write_text("1.5\n", encoding="utf-8")
    kept = KeptLabs(tmp_path / "cache")
    yield root, kept
    kept.close()


def serve_build(root, kept):
    """A build as serve makes it (its lab host and checkpoints kept); the output and the report."""
    report = build(root, root.parent / "dist", cache=root.parent / "cache", kept=kept)
    return tree_bytes(root.parent / "dist"), report


def clean_build(root, tmp_path, name):
    """A one-off build of the same sources, from an empty cache."""
    build(root, tmp_path / name / "dist", cache=tmp_path / name / "cache")
    return tree_bytes(tmp_path / name / "dist")


def test_an_edit_to_the_last_cell_resumes_after_the_cell_before_and_makes_a_full_runs_bytes(site, tmp_path):
    root, kept = site
    _, first = serve_build(root, kept)
    assert first.computed == ("tiny",) and first.resumed == ()
    assert [p["after"] for p in kept.runs["tiny"].checkpoints] == [1, 2]      # none after the last cell
    edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved again', scale)")
    output, report = serve_build(root, kept)
    assert report.computed == ("tiny",) and report.resumed == (("tiny", 2),)
    assert output == clean_build(root, tmp_path, "clean")
    assert "saved again 1.5" in output["index.html"].decode()
    # And again: the checkpoints kept stand for the next edit too.
    edit(root / "compute/tiny.py", "print('saved again', scale)", "print('saved a third time', scale)")
    output, report = serve_build(root, kept)
    assert report.resumed == (("tiny", 2),)
    assert output == clean_build(root, tmp_path, "clean3")


@pytest.mark.slow
@pytest.mark.parametrize("changed", ["compute/scale.txt", "compute/helper.py"])
def test_an_unchanged_cell_whose_input_changed_invalidates_from_there(site, tmp_path, changed):
    """A data file the second cell reads, a module it imports: the run resumes after the first."""
    root, kept = site
    serve_build(root, kept)
    edit(root / changed, "1.5" if changed.endswith(".txt") else "2 * v", "2.5" if changed.endswith(".txt") else "3 * v")
    output, report = serve_build(root, kept)
    assert report.computed == ("tiny",) and report.resumed == (("tiny", 1),)
    assert output == clean_build(root, tmp_path, "clean")


@pytest.mark.slow
def test_a_reader_resumes_before_the_cell_that_read_the_results_that_changed(site, tmp_path):
    root, kept = site
    (root / "compute/reader.py").write_text(
        "# %% warm\nimport json\nfrom pathlib import Path\nwarm = sum(range(1000))\n\n"
        "# %% read\nx = json.loads(Path('inputs/tiny/results.json').read_text())['x']\n"
        "Path('out').mkdir(exist_ok=True)\n"
        "(Path('out') / 'results.json').write_text(json.dumps({'doubled': [[2 * v for v in r] for r in x]}))\n"
        "print('read', x[0][1], warm)\n", encoding="utf-8")
    (root / "content/reader.md").write_text("---\ntitle: 读取\nlab: reader\n---\n::: cell read\n", encoding="utf-8")
    with open(root / "site.yaml", "a", encoding="utf-8") as config:
        config.write("  - id: reader\n    title: 读取\n    script: compute/reader.py\n    inputs: [tiny]\n"
                     "    images: reader/images\n    downloads: reader/materials\n    page: reader.md\n")
    serve_build(root, kept)
    edit(root / "compute/tiny.py", "reshape(2, 3) / 4", "reshape(2, 3) / 8")
    output, report = serve_build(root, kept)
    assert set(report.computed) == {"tiny", "reader"}
    assert dict(report.resumed) == {"reader": 1}       # tiny's first cell changed: it ran from the start
    assert output == clean_build(root, tmp_path, "clean")


@pytest.mark.slow
def test_a_notebook_page_resumes_with_jupyters_counts_and_its_data_file_invalidates_the_cell_reading_it(tmp_path):
    import nbformat
    from support import empty_course
    root = empty_course(tmp_path / "site")
    cells = ["import numpy as np\nrng = np.random.default_rng(3)\nrng.standard_normal(2)",
             "a = rng.standard_normal(4) * float(open('points.csv').read())\na.sum()",
             "print('mean', a.mean())\nrng.standard_normal()"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_raw_cell("---\ndata: [points.csv]\n---"),
                                               nbformat.v4.new_markdown_cell("# 笔记本")]
                                        + [nbformat.v4.new_code_cell(c) for c in cells])
    nbformat.write(notebook, root / "content/nb.ipynb")
    (root / "content/points.csv").write_text("2\n", encoding="utf-8")
    kept = KeptLabs(tmp_path / "cache")
    try:
        serve_build(root, kept)
        notebook.cells[-1].source = "print('mean again', a.mean())\nrng.standard_normal()"
        nbformat.write(notebook, root / "content/nb.ipynb")
        output, report = serve_build(root, kept)
        assert [after for _, after in report.resumed] == [2]
        assert output == clean_build(root, tmp_path, "clean")
        assert any("mean again" in data.decode(errors="replace") for name, data in output.items()
                   if name.endswith(".html"))
        (root / "content/points.csv").write_text("3\n", encoding="utf-8")     # the second cell read it
        output, report = serve_build(root, kept)
        assert [after for _, after in report.resumed] == [1]
        assert output == clean_build(root, tmp_path, "clean-data")
    finally:
        kept.close()


@pytest.mark.slow
def test_a_failed_cell_keeps_the_checkpoints_before_it(site, tmp_path):
    root, kept = site
    edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved', scale)\nraise ValueError('not yet')")
    with pytest.raises(Exception, match="not yet"):
        serve_build(root, kept)
    edit(root / "compute/tiny.py", "\nraise ValueError('not yet')", "")
    output, report = serve_build(root, kept)
    assert report.resumed == (("tiny", 2),)
    assert output == clean_build(root, tmp_path, "clean")


@pytest.mark.slow
def test_a_resumed_run_past_its_timeout_is_stopped_and_its_checkpoint_stands(site, tmp_path):
    """The resumed run is the checkpoint's child, not the host's: stopping it is reported as a
    timeout, and the checkpoint it came from still resumes the next run."""
    root, kept = site
    serve_build(root, kept)
    edit(root / "compute/tiny.py", "print('saved', scale)", "import time\ntime.sleep(60)")
    started = time.monotonic()
    with pytest.raises(Exception, match="stopped after 2 s, its timeout"):
        build(root, root.parent / "dist", cache=root.parent / "cache", kept=kept, timeout=2)
    assert time.monotonic() - started < 30
    edit(root / "compute/tiny.py", "import time\ntime.sleep(60)", "print('saved again', scale)")
    output, report = serve_build(root, kept)
    assert report.resumed == (("tiny", 2),)
    assert output == clean_build(root, tmp_path, "clean")


@pytest.mark.slow
def test_checkpoints_are_dropped_oldest_first_to_stay_within_the_memory_bound(site):
    """The first checkpoint alone holds 48 MB the lab freed afterwards: a bound 30 MiB below what
    they all take drops that one, and the later ones stay."""
    root, kept = site
    edit(root / "compute/tiny.py", "# %% data\n", "big = np.full(6_000_000, 1.0)\n\n# %% data\ndel big\n")
    edit(root / "compute/tiny.py", "# %% save\n", "# %% more\nsmall = np.full(1000, 2.0)\n\n# %% save\n")
    serve_build(root, kept)
    sizes = kept.memory()
    assert set(sizes) == {("tiny", 1), ("tiny", 2), ("tiny", 3)} and sizes["tiny", 1] > 40 * MIB
    kept.budget = sum(sizes.values()) - 30 * MIB
    said = kept.evict()
    assert said.startswith("checkpoints: dropped the 1 oldest (tiny after cell 1)"), said
    assert 0 < sum(kept.memory().values()) <= kept.budget
    assert [p["after"] for p in kept.runs["tiny"].checkpoints] == [2, 3]
    edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved again', scale)")
    assert serve_build(root, kept)[1].resumed == (("tiny", 3),)


@pytest.mark.slow
def test_a_lab_that_rewrites_a_large_array_in_each_cell_ends_its_oldest_checkpoints_as_it_runs(site, tmp_path):
    """Each checkpoint keeps its own copy of the 48 MB array the lab changes in every cell (five take
    some 300 MiB): the run ends its oldest while it goes on, not only once the build is over; the
    newest stand. Once the lab ends, its newest checkpoint owns the pages it shared with it: serve's
    eviction after the build brings them all within the bound."""
    root, kept = site
    kept.close()
    kept.budget = 150 * MIB
    edit(root / "compute/tiny.py", "# %% data\n", "big = np.full(6_000_000, 1.0)\n\n# %% data\nbig += 1\n")
    edit(root / "compute/tiny.py", "# %% save\n", "".join(f"# %% more{n}\nbig += 1\n\n" for n in range(3))
         + "# %% save\nassert big[0] == 5\n")
    serve_build(root, kept)
    points = [p["after"] for p in kept.runs["tiny"].checkpoints]
    assert points and points[0] > 1 and points == list(range(points[0], 6))      # the oldest went first
    assert any("oldest checkpoints ended while it ran" in note for note in kept.notes)
    kept.evict()
    assert 0 < sum(kept.memory().values()) <= kept.budget, kept.memory()
    assert [p["after"] for p in kept.runs["tiny"].checkpoints][-1] == 5
    edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved again', scale)")
    output, report = serve_build(root, kept)
    assert report.resumed == (("tiny", 5),)
    assert output == clean_build(root, tmp_path, "clean")


@pytest.mark.slow
def test_no_checkpoint_is_taken_while_the_lab_runs_a_thread_of_its_own(site, tmp_path):
    root, kept = site
    edit(root / "compute/tiny.py", "# %% data\n", "# %% data\nimport threading\nstop = threading.Event()\n"
         "worker = threading.Thread(target=stop.wait)\nworker.start()\n")
    edit(root / "compute/tiny.py", "# %% save\n", "# %% save\nstop.set()\nworker.join()\n")
    serve_build(root, kept)
    assert [p["after"] for p in kept.runs["tiny"].checkpoints] == [1]
    assert kept.notes == ["tiny: no checkpoint after cell 2: the lab runs threads of its own "
                          "(an edit after it runs the lab from an earlier cell)"]
    edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved again', scale)")
    output, report = serve_build(root, kept)
    assert report.resumed == (("tiny", 1),)
    assert output == clean_build(root, tmp_path, "clean")


@pytest.mark.parametrize("opened", ["open(Path(__file__).parent / 'scale.txt')", "open('log.txt', 'a')"])
def test_no_checkpoint_is_taken_while_the_lab_holds_a_file_open(site, tmp_path, opened):
    """A checkpoint is a fork: it shares each open file's offset with the run. A lab that reads a data
    file line by line across cells, or appends to a log, would read on (or write over) where the first
    run left it when resumed: no checkpoint while it holds one, and the resumed run is a run's bytes."""
    root, kept = site
    edit(root / "compute/tiny.py", "# %% data\n", f"# %% data\nheld = {opened}\n")
    edit(root / "compute/tiny.py", "# %% save\n", "# %% save\nheld.close()\n")
    serve_build(root, kept)
    assert [p["after"] for p in kept.runs["tiny"].checkpoints] == [1]
    assert kept.notes[0].startswith("tiny: no checkpoint after cell 2: the lab holds ")
    edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved again', scale)")
    output, report = serve_build(root, kept)
    assert report.resumed == (("tiny", 1),)
    assert output == clean_build(root, tmp_path, "clean")


def test_serve_whose_output_goes_to_a_file_of_the_course_still_resumes(site, tmp_path):
    """`build.py serve > serve.log` in the course's folder: its labs inherit that file open, which is
    not theirs (they share no offset of their own with it), so checkpoints are still taken."""
    root, kept = site
    saved = os.dup(1)
    log = os.open(root / "serve.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    try:
        serve_build(root, kept)
        assert [p["after"] for p in kept.runs["tiny"].checkpoints] == [1, 2]
        edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved again', scale)")
        output, report = serve_build(root, kept)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(log)
    assert report.resumed == (("tiny", 2),)
    assert output == clean_build(root, tmp_path, "clean")


def test_a_one_off_build_never_reuses_a_run_serve_resumed(site, tmp_path):
    """What serve made by resuming is its preview's: `python build.py` runs the lab from its first cell
    (and then keeps that run), even after the output is deleted."""
    import shutil
    root, kept = site
    serve_build(root, kept)
    edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved again', scale)")
    _, report = serve_build(root, kept)
    assert report.resumed == (("tiny", 2),)
    shutil.rmtree(root.parent / "dist")
    again = build(root, root.parent / "dist", cache=root.parent / "cache")
    assert again.computed == ("tiny",)
    assert build(root, root.parent / "dist", cache=root.parent / "cache").computed == ()


def test_no_checkpoint_outlives_serve(site):
    root, kept = site
    serve_build(root, kept)
    pids = [p["pid"] for p in kept.runs["tiny"].checkpoints]
    assert pids and all(os.path.exists(f"/proc/{pid}") for pid in pids)
    kept.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_running(pid) for pid in pids):
        time.sleep(0.05)
    assert not any(_running(pid) for pid in pids)


def _running(pid: int) -> bool:
    """Whether a process runs (a zombie, ended but not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_one_off_build_takes_no_checkpoint(site, tmp_path):
    """`python build.py` runs each lab from its first cell in a folder of its own, as before."""
    root, _ = site
    report = build(root, tmp_path / "once", cache=tmp_path / "once-cache")
    assert report.computed == ("tiny",) and report.resumed == ()
    assert not (tmp_path / "once-cache/live").exists()


def test_a_notebook_of_many_quick_cells_holds_a_few_checkpoints_not_one_a_cell(site, tmp_path):
    """300 cells of a few microseconds: a checkpoint after each of the first few, then only where the
    cells since the last took long enough to be worth a fork; an edit to the last cell still resumes
    and gives the bytes of a run from the start."""
    root, kept = site
    cells = "".join(f"# %% c{i}\nv{i} = {i}\n\n" for i in range(300))
    edit(root / "compute/tiny.py", "# %% save\n", cells + "# %% save\n")
    serve_build(root, kept)
    held = [p["after"] for p in kept.runs["tiny"].checkpoints]
    assert 8 <= len(held) <= 40, held
    edit(root / "compute/tiny.py", "print('saved', scale)", "print('saved again', scale)")
    output, report = serve_build(root, kept)
    assert report.resumed == (("tiny", held[-1]),)
    assert output == clean_build(root, tmp_path, "clean")
