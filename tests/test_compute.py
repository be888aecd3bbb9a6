"""Labs are bounded: a timeout stops a lab with everything it started; Ctrl-C and SIGTERM stop
the build cleanly; a new Pillow recomputes a lab (its keys: tests/test_labkeys.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from support import EPOCH, build_command, edit, processes_mentioning, run_build, tiny_site


def looping_site(tmp_path, timeout_line: str = ""):
    root = tiny_site(tmp_path / "site")
    # The lab starts a child of its own too: stopping the lab must stop it as well.
    edit(root / "compute/tiny.py", "# %% save\n", "# %% save\nimport subprocess, time\n"
         "subprocess.Popen(['sleep', '300'])\nPath('running').touch()\nwhile True:\n    time.sleep(0.1)\n")
    if timeout_line:
        edit(root / "site.yaml", "    page: index.md\n", f"    page: index.md\n{timeout_line}\n")
    return root


@pytest.mark.slow
def test_a_lab_that_never_ends_is_stopped_at_its_timeout_with_everything_it_started(tmp_path):
    root = looping_site(tmp_path, "    timeout: 2")
    started = time.monotonic()
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", timeout=60)
    assert result.returncode == 1 and time.monotonic() - started < 30
    assert ("error: compute/tiny.py: lab tiny failed: stopped after 2 s, its timeout, with everything it had "
            "started: make it faster, or raise its `timeout:` (seconds) in site.yaml") in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "dist").exists()
    time.sleep(0.5)
    assert processes_mentioning(str(root)) == [] and not _sleepers(tmp_path)
    assert not list((tmp_path / "cache").glob("labs/*/.tmp-*"))


def _sleepers(tmp_path) -> list[int]:
    """`sleep 300` processes whose working folder is below tmp_path (the lab's child)."""
    found = []
    for pid in processes_mentioning("sleep"):
        try:
            if str(tmp_path) in os.readlink(f"/proc/{pid}/cwd"):
                found.append(pid)
        except OSError:
            pass
    return found


@pytest.mark.slow
def test_the_timeout_flag_overrides_site_yaml(tmp_path):
    root = looping_site(tmp_path, "    timeout: 3600")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--timeout", "1", timeout=60)
    assert result.returncode == 1 and "stopped after 1 s, its timeout" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_everything_with_one_line(tmp_path, how):
    root = looping_site(tmp_path)
    cache = tmp_path / "cache"
    process = subprocess.Popen(build_command(root, tmp_path / "dist", cache), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH})
    deadline = time.monotonic() + 60
    while not list(cache.glob("labs/tiny/.tmp-*/work/running")):
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    process.send_signal(how)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert stderr.strip().splitlines() == ["interrupted: the build stopped, and the previous output was left as it was"]
    time.sleep(0.5)
    assert processes_mentioning(str(root)) == [] and not _sleepers(tmp_path)
    assert not list(cache.glob("labs/*/.tmp-*")) and not (tmp_path / "dist").exists()


def test_temporaries_a_killed_build_left_in_the_cache_are_cleared(tmp_path):
    root, cache = tiny_site(tmp_path / "site"), tmp_path / "cache"
    stale = cache / "labs/tiny/.tmp-killed"
    (stale / "work").mkdir(parents=True)
    (cache / "memo").mkdir(parents=True)
    (cache / "memo/.tmp-half").write_bytes(b"half")
    assert run_build(root, tmp_path / "dist", cache).returncode == 0
    assert not stale.exists() and not (cache / "memo/.tmp-half").exists()


def test_a_new_pillow_recomputes_the_lab_and_says_so_in_its_provenance(tmp_path, monkeypatch):
    from sitegen.core import memo
    from sitegen.labs.compute import compute_labs
    from sitegen.project.config import load_config
    root = tiny_site(tmp_path / "site")
    cfg = load_config(root)
    assert compute_labs(cfg, tmp_path / "cache")["tiny"].recomputed
    real = memo._environment()
    monkeypatch.setattr(memo, "_environment", lambda: tuple((k, "99.0" if k == "pillow" else v) for k, v in real))
    again = compute_labs(cfg, tmp_path / "cache")["tiny"]
    assert again.recomputed and again.provenance["pillow"] == "99.0"


@pytest.mark.slow
def test_a_lab_reading_another_starts_once_its_results_are_final_not_its_figures(tmp_path):
    """The read lab's cells end by saving a large figure, whose encoding (256 colours) runs after
    them: the reading lab starts before that ends, and reads the results as the lab wrote them."""
    import json

    from support import reading_site
    root = reading_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "print('saved')\n",
         "print('saved')\nplt.imsave(out / 'noise.png', np.random.default_rng(0).random((2500, 2500, 3)))\n")
    edit(root / "compute/reader.py", "x = json.loads(", "import time\nstarted = time.time()\nx = json.loads(")
    edit(root / "compute/reader.py", "'doubled': [[2 * v for v in row] for row in x]",
         "'doubled': [[2 * v for v in row] for row in x], 'started': started, "
         "'input': json.loads(Path('inputs/tiny/results.json').read_text())")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    reader = json.loads((tmp_path / "dist/reader/materials/results.json").read_text(encoding="utf-8"))
    tiny = json.loads((tmp_path / "dist/materials/results.json").read_text(encoding="utf-8"))
    finished = next((tmp_path / "cache/labs/tiny").glob("*/manifest.json")).stat().st_mtime
    assert reader["started"] < finished, (reader["started"], finished)
    assert reader["input"] == {k: v for k, v in tiny.items() if k != "provenance"}


def slowly_drawn_reading_site(root, results: str = ""):
    """The reading site, whose read lab draws a large figure before it writes its results (adding
    `results` to them) and notes when that figure was drawn; the reader notes when it started."""
    from support import reading_site
    reading_site(root)
    edit(root / "compute/tiny.py", "fig.savefig(out / 'line.png')\n",
         "fig.savefig(out / 'line.png')\nbig = plt.figure(figsize=(30, 30))\n"
         "big.add_subplot().imshow(np.random.default_rng(0).random((600, 600)))\n"
         "big.savefig(out / 'big.png', dpi=100)\n(out / 'drawn.txt').write_text('')\n")
    edit(root / "compute/tiny.py", "'total': float(x.sum())", f"'total': float(x.sum()){results}")
    edit(root / "compute/reader.py", "x = json.loads(", "import time\nstarted = time.time()\nx = json.loads(")
    edit(root / "compute/reader.py", "'doubled': [[2 * v for v in row] for row in x]",
         "'doubled': [[2 * v for v in row] for row in x], 'started': started, "
         "'input': json.loads(Path('inputs/tiny/results.json').read_text())")
    return root


def compute_watching_launches(root, cache, monkeypatch, jobs: int, launched: list | None = None):
    """compute_labs on the site, and the names of the lab runs it launched, in order (also in
    `launched`, if given)."""
    from sitegen.labs import labhost
    from sitegen.labs.compute import compute_labs
    from sitegen.project.config import load_config
    launched, real = [] if launched is None else launched, labhost.LabHost.run
    monkeypatch.setattr(labhost.LabHost, "run", lambda self, name, *a: launched.append(name) or real(self, name, *a))
    return compute_labs(load_config(root), cache, jobs=jobs), launched


def results_of(artifacts, lab: str) -> dict:
    import json
    return json.loads(artifacts[lab].files["results.json"].read_bytes())


@pytest.mark.slow
def test_a_lab_reading_another_starts_on_its_preview_before_its_figures_are_drawn(tmp_path, monkeypatch):
    """With a worker free, the read lab runs twice at once: for real, and as a preview drawing no
    figure, whose results.json the reader starts on; the real one's, the same, confirms it."""
    root = slowly_drawn_reading_site(tmp_path / "site")
    artifacts, launched = compute_watching_launches(root, tmp_path / "cache", monkeypatch, jobs=2)
    assert sorted(launched) == ["preview:tiny", "reader", "tiny"]
    drawn = artifacts["tiny"].files["drawn.txt"].stat().st_mtime
    reader, tiny = results_of(artifacts, "reader"), results_of(artifacts, "tiny")
    assert reader["started"] < drawn, (reader["started"], drawn)
    assert reader["input"] == {k: v for k, v in tiny.items() if k != "provenance"}


@pytest.mark.slow
def test_a_reader_started_on_a_preview_that_the_real_run_contradicts_runs_again(tmp_path, monkeypatch):
    """The read lab's results say whether its figure exists, which its preview (drawing none)
    gets wrong: the reader's first run is dropped, and it runs again on the real results. One
    worker makes no preview."""
    results = ", 'drawn': (out / 'big.png').exists()"
    root = slowly_drawn_reading_site(tmp_path / "site", results)
    artifacts, launched = compute_watching_launches(root, tmp_path / "cache", monkeypatch, jobs=2)
    assert sorted(launched) == ["preview:tiny", "reader", "reader", "tiny"]
    reader, tiny = results_of(artifacts, "reader"), results_of(artifacts, "tiny")
    assert tiny["drawn"] is True
    assert reader["input"] == {k: v for k, v in tiny.items() if k != "provenance"}
    assert reader["started"] > artifacts["tiny"].files["drawn.txt"].stat().st_mtime
    serial, launched = compute_watching_launches(root, tmp_path / "serial", monkeypatch, jobs=1)
    assert launched == ["tiny", "reader"]
    assert results_of(serial, "reader")["input"] == reader["input"]


@pytest.mark.slow
def test_when_the_real_run_fails_after_its_preview_did_not_what_readers_made_is_not_kept(tmp_path, monkeypatch):
    from sitegen.core.errors import LabFailure
    root = slowly_drawn_reading_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "(out / 'drawn.txt').write_text('')\n",
         "(out / 'drawn.txt').write_text('')\nassert not (out / 'big.png').exists(), 'drawn'\n")
    launched = []
    with pytest.raises(LabFailure) as failure:
        compute_watching_launches(root, tmp_path / "cache", monkeypatch, jobs=2, launched=launched)
    assert "lab tiny failed: AssertionError: drawn" in failure.value.report()
    assert sorted(launched) == ["preview:tiny", "reader", "tiny"]
    assert [p.name for p in (tmp_path / "cache/labs").rglob("*") if p.parent.parent.name == "labs"] == []


def test_labs_run_with_the_cycle_collector_the_build_runs_without(tmp_path):
    """The build turns Python's cycle collector off while it runs; a lab, forked from it, has it on
    (Matplotlib's figures are cycles: without it a lab drawing many would grow without bound)."""
    import json
    root = tiny_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "print('saved')\n", "import gc\nprint('saved', 'collector on:', gc.isenabled())\n")
    assert run_build(root, tmp_path / "dist", tmp_path / "cache").returncode == 0
    manifest = json.loads(next((tmp_path / "cache/labs/tiny").glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert [c["stdout"] for c in manifest["cells"] if c["name"] == "save"] == ["saved collector on: True\n"]


def test_after_a_build_no_lab_script_is_parsed_again_for_its_key_or_its_cells(tmp_path, monkeypatch):
    """Working out what must run reads each script but parses none that did not change: what it
    imports and its cells are remembered under its hash."""
    import ast

    from sitegen.labs import labkeys
    from sitegen.project import cells
    from sitegen.labs.compute import LabScheduler
    from sitegen.project.config import load_config
    from sitegen.core.memo import Memo
    root = tiny_site(tmp_path / "site")
    assert run_build(root, tmp_path / "dist", tmp_path / "cache").returncode == 0
    parsed = []
    real_parse, real_cells = ast.parse, cells.parse_cells
    monkeypatch.setattr(labkeys.ast, "parse", lambda *a, **k: parsed.append("imports") or real_parse(*a, **k))
    monkeypatch.setattr(cells, "parse_cells", lambda *a, **k: parsed.append("cells") or real_cells(*a, **k))
    labs = LabScheduler(load_config(root), tmp_path / "cache", memo=Memo(tmp_path / "cache/memo"))
    assert not labs.todo and set(labs.artifacts) == {"tiny"} and parsed == []
    edit(root / "compute/tiny.py", "print('saved')\n", "print('saved', 1)\n")
    labs = LabScheduler(load_config(root), tmp_path / "cache", memo=Memo(tmp_path / "cache/memo"))
    assert [job.lab.id for job in labs.todo] == ["tiny"] and parsed[:2] == ["cells", "imports"]
    assert parsed[2:] == ["imports"] * len(labs.todo[0].cells)    # (a lab to run: what it imports is installed?)


def test_labs_that_must_run_again_start_longest_first_by_their_last_run(tmp_path):
    """(The longest started last runs on alone while the other cores idle: a book of notebooks' rebuild
    took 20.5 s in that order, 15.4 s longest first.)"""
    from sitegen.labs.labjobs import SECONDS, Job, longest_first
    jobs = []
    for name, took in (("a", "1.5"), ("b", None), ("c", "9.25"), ("d", "3")):
        old = tmp_path / name / "old-key"
        old.mkdir(parents=True)
        if took is not None:
            (old / SECONDS).write_text(took, encoding="ascii")
        jobs.append(Job(name, (), "new-key", "", tmp_path / name / "new-key"))
    assert [job.lab for job in longest_first(jobs)] == ["c", "d", "a", "b"]
    assert [job.lab for job in longest_first(jobs[1:2])] == ["b"]          # (never run: as it stands)


def test_labs_never_run_start_longest_first_by_what_their_timeit_cells_surely_take(tmp_path):
    """(A clean build of a book of 8 notebooks started its lecture of %%timeit cells last, in the
    order of the labs' names, and it ran on alone: 26.2 s; 17.1 s started first.)"""
    from sitegen.labs.labjobs import Job, at_least, longest_first, timeit_magic
    from sitegen.project.cells import Cell

    def cells(*sources):
        return tuple(Cell(f"cell {k}", source, 1) for k, source in enumerate(sources))
    assert at_least(cells("x = 1", "%timeit f(x)")) == pytest.approx(1.6)      # choosing the loops, then 7
    assert at_least(cells("%%timeit -r 3\nf(x)", "t = %timeit -o f(x)")) == pytest.approx(0.8 + 1.6)
    assert at_least(cells("%timeit -n 10 f(x)", "%timeit -n10 -r2 f(x)", "# %timeit f(x)")) == 0  # loops set: unknown
    assert timeit_magic("t = %timeit -o -n10 -r 2 f(x, y)") == ("%timeit", {"-o": "", "-n": "10", "-r": "2"}, "f(x, y)")
    assert timeit_magic("%%timeit") == ("%%timeit", {}, "") and timeit_magic("x = 1") is None
    jobs = [Job(name, cells(*sources), "new-key", "", tmp_path / name / "new-key")
            for name, sources in (("a", ("x = 1",)), ("b", ("%timeit -r 1 f()",)), ("c", ("%%timeit\nf()",)))]
    assert [job.lab for job in longest_first(jobs)] == ["c", "b", "a"]


def test_a_lab_s_entry_says_how_long_its_run_took(tmp_path):
    from sitegen.labs.labjobs import SECONDS
    root = tiny_site(tmp_path / "site")
    assert run_build(root, tmp_path / "dist", tmp_path / "cache").returncode == 0
    [took] = (tmp_path / "cache").glob(f"labs/*/*/{SECONDS}")
    assert 0 < float(took.read_text(encoding="ascii")) < 60
