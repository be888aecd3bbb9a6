"""What a lab reads of the project (sitegen/labs/labreads.py): recorded as it runs, and its results
reused only while every file and folder it read is as it was: a data file beside its script, a
module imported relatively inside a package, a package's __init__, a folder it lists; a frozen lab
too. And the pages follow the lab's results, not only its provenance."""
from __future__ import annotations

import json

import pytest

from support import computed, edit, run_build, tiny_site

slow = pytest.mark.slow       # builds, each running a lab


def _site(tmp_path, setup: str):
    """The fixture site whose lab's first cell also runs `setup`, which sets `extra`; its page shows it."""
    root = tiny_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "print('x =', x)\n", f"print('x =', x)\n{setup}\nprint('extra =', extra)\n")
    edit(root / "compute/tiny.py", "'total': float(x.sum())", "'total': float(x.sum()), 'extra': extra")
    edit(root / "content/index.md", "总和是 {{ total }}。", "总和是 {{ total }}，另加 {{ extra }}。")
    return root


def _build(root, tmp_path, *args):
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", *args)
    assert result.returncode == 0, result.stderr
    return result


def _shown(tmp_path) -> str:
    return json.loads((tmp_path / "dist/materials/results.json").read_text(encoding="utf-8"))["extra"]


READERS = {
    "a data file beside the script":
        ("from pathlib import Path\nextra = Path(__file__).with_name('tiny_data.txt').read_text().strip()",
         {"compute/tiny_data.txt": "7\n"}, "compute/tiny_data.txt", "8\n"),
    "a module imported relatively inside a package":
        ("from pk.sub import VALUE as extra",
         {"compute/pk/__init__.py": "", "compute/pk/sub.py": "from .core import VALUE\n",
          "compute/pk/core.py": "VALUE = '7'\n"}, "compute/pk/core.py", "VALUE = '8'\n"),
    "a package's __init__ when the lab imports a submodule":
        ("import pk.sub\nextra = pk.FACTOR",
         {"compute/pk/__init__.py": "FACTOR = '7'\n", "compute/pk/sub.py": "X = 1\n"},
         "compute/pk/__init__.py", "FACTOR = '8'\n"),
    "a folder it lists":
        ("from pathlib import Path\nextra = str(len(list(Path(__file__).with_name('data').iterdir())))",
         {"compute/data/a.txt": "a"}, "compute/data/b.txt", "b"),
    "a file it only tests for": (
        "import os\nextra = str(os.path.exists(os.path.join(os.path.dirname(__file__), 'flag')))",
        {}, "compute/flag", ""),
    "a file whose size it asks": (
        "import os\nextra = str(os.stat(os.path.join(os.path.dirname(__file__), 'n.txt')).st_size)",
        {"compute/n.txt": "7"}, "compute/n.txt", "77"),
    "a file a process it starts reads": (
        "import os, subprocess\n"
        "extra = subprocess.check_output(['cat', os.path.join(os.path.dirname(__file__), 'n.txt')]).decode().strip()",
        {"compute/n.txt": "7"}, "compute/n.txt", "8"),
    "a data file outside the sources' folders":
        ("from pathlib import Path\nextra = (Path(__file__).parents[1] / 'data' / 'n.txt').read_text().strip()",
         {"data/n.txt": "7"}, "data/n.txt", "8"),
}


@slow
@pytest.mark.parametrize("case", list(READERS))
def test_a_lab_is_computed_again_when_what_it_read_changed(tmp_path, case):
    setup, files, changed, new = READERS[case]
    root = _site(tmp_path, setup)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    _build(root, tmp_path)
    first = _shown(tmp_path)
    assert "tiny" not in computed(_build(root, tmp_path))         # nothing changed: reused
    (root / changed).parent.mkdir(parents=True, exist_ok=True)
    (root / changed).write_text(new, encoding="utf-8")
    assert "tiny" in computed(_build(root, tmp_path))
    assert _shown(tmp_path) != first
    page = (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    assert f"另加 {_shown(tmp_path)}" in page


@slow
def test_what_a_lab_read_is_in_its_cache_entry_with_what_it_held(tmp_path):
    root = _site(tmp_path, READERS["a data file beside the script"][0])
    (root / "compute/tiny_data.txt").write_text("7\n", encoding="utf-8")
    _build(root, tmp_path)
    manifest = next((tmp_path / "cache/labs/tiny").glob("*/manifest.json"))
    reads = json.loads(manifest.read_text(encoding="utf-8"))["reads"]
    import hashlib
    assert reads["compute/tiny_data.txt"] == hashlib.sha256(b"7\n").hexdigest()
    assert not any(rel.startswith(("content/", "site.yaml", "templates/")) for rel in reads)


@slow
def test_a_frozen_lab_whose_data_file_changed_fails_the_build_naming_the_file(tmp_path):
    root = _site(tmp_path, READERS["a data file beside the script"][0])
    (root / "compute/tiny_data.txt").write_text("7\n", encoding="utf-8")
    _build(root, tmp_path, "freeze")
    assert (root / "frozen/tiny/manifest.json").is_file()
    (root / "compute/tiny_data.txt").write_text("8\n", encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1
    assert "frozen/tiny: lab tiny is frozen, but compute/tiny_data.txt changed since" in result.stderr
    assert "Traceback" not in result.stderr


@slow
def test_a_recomputed_lab_with_other_numbers_at_the_same_time_renders_its_page_anew(tmp_path):
    """SOURCE_DATE_EPOCH fixes computed_at: the provenance alone cannot tell two runs apart. (The lab reads
    a file outside the project, which no key holds, as it once read an environment variable, which a
    lab no longer sees: sandbox.lab_environment.)"""
    outside = tmp_path / "outside.txt"
    outside.write_text("7", encoding="utf-8")
    root = _site(tmp_path, f"extra = open({str(outside)!r}).read()")
    edit(root / "site.yaml", "labs:", f"lab_access:\n  read: [{tmp_path}]\nlabs:")      # (declared: it is no source)
    _build(root, tmp_path)
    outside.write_text("8", encoding="utf-8")
    _build(root, tmp_path, "--no-cache")
    assert _shown(tmp_path) == "8"
    assert "另加 8" in (tmp_path / "dist/index.html").read_text(encoding="utf-8")


@slow
def test_a_lab_that_reads_another_follows_the_bytes_it_was_given(tmp_path):
    """The reader's entry records the SHA-256 of the results.json it was given: another result
    computes it again, the same result (its producer ran again for nothing) reuses it."""
    from support import READER
    root = _site(tmp_path, "extra = 'same'")
    edit(root / "compute/tiny.py", "x = np.arange(6, dtype=float).reshape(2, 3) / 4\n",
         "x = np.arange(6, dtype=float).reshape(2, 3) / 4 * float(Path(__file__).with_name('tiny_data.txt').read_text())\n")
    (root / "compute/tiny_data.txt").write_text("1\n", encoding="utf-8")
    (root / "compute/reader.py").write_text(READER, encoding="utf-8")
    (root / "content/reader.md").write_text("---\ntitle: 读取\nlab: reader\n---\n加倍：{{ doubled[0][1] }}。\n",
                                            encoding="utf-8")
    with open(root / "site.yaml", "a", encoding="utf-8") as config:
        config.write("  - id: reader\n    title: 读取\n    script: compute/reader.py\n    inputs: [tiny]\n"
                     "    images: reader/images\n    downloads: reader/materials\n    page: reader.md\n")
    _build(root, tmp_path)
    (root / "compute/tiny_data.txt").write_text("2\n", encoding="utf-8")
    assert computed(_build(root, tmp_path)) == {"tiny", "reader"}
    assert "加倍：1.0" in (tmp_path / "dist/reader.html").read_text(encoding="utf-8")
    (root / "compute/tiny_data.txt").write_text("2.0\n", encoding="utf-8")     # read again, the same numbers
    assert computed(_build(root, tmp_path)) == {"tiny"}
    assert "加倍：1.0" in (tmp_path / "dist/reader.html").read_text(encoding="utf-8")


def _installed(folder, version: str, value: str):
    """A distribution `fakestat` at `version`, laid as pip lays one (its module and its .dist-info)."""
    import shutil
    for old in folder.glob("fakestat-*.dist-info"):
        shutil.rmtree(old)
    (folder / "fakestat").mkdir(parents=True, exist_ok=True)
    (folder / "fakestat/__init__.py").write_text(f"VALUE = {value!r}\n", encoding="utf-8")
    info = folder / f"fakestat-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakestat\nVersion: {version}\n", encoding="utf-8")
    (info / "top_level.txt").write_text("fakestat\n", encoding="utf-8")


@slow
def test_a_lab_is_computed_again_when_a_package_it_imports_is_upgraded(tmp_path, monkeypatch):
    """Not only NumPy and Matplotlib: every installed distribution the lab imported is in what it read."""
    packages = tmp_path / "packages"
    _installed(packages, "1.0", "7")
    monkeypatch.setenv("PYTHONPATH", str(packages))
    root = _site(tmp_path, "import fakestat\nextra = fakestat.VALUE")
    assert "tiny" in computed(_build(root, tmp_path))
    manifest = next((tmp_path / "cache/labs/tiny").glob("*/manifest.json"))
    assert json.loads(manifest.read_text(encoding="utf-8"))["reads"]["/installed/fakestat"] == "1.0"
    assert "tiny" not in computed(_build(root, tmp_path))
    _installed(packages, "2.0", "8")
    assert "tiny" in computed(_build(root, tmp_path))
    assert _shown(tmp_path) == "8"
    assert "另加 8" in (tmp_path / "dist/index.html").read_text(encoding="utf-8")


@slow
def test_a_lab_that_does_not_import_an_upgraded_package_is_reused(tmp_path, monkeypatch):
    packages = tmp_path / "packages"
    _installed(packages, "1.0", "7")
    monkeypatch.setenv("PYTHONPATH", str(packages))
    root = _site(tmp_path, "extra = 'same'")
    _build(root, tmp_path)
    _installed(packages, "2.0", "8")
    assert "tiny" not in computed(_build(root, tmp_path))


@slow
def test_a_frozen_lab_holds_whatever_version_of_a_package_it_imports(tmp_path, monkeypatch):
    """As NumPy's: frozen/ is for a builder that cannot compute the lab (or has other versions)."""
    packages = tmp_path / "packages"
    _installed(packages, "1.0", "7")
    monkeypatch.setenv("PYTHONPATH", str(packages))
    root = _site(tmp_path, "import fakestat\nextra = fakestat.VALUE")
    _build(root, tmp_path, "freeze")
    _installed(packages, "2.0", "8")
    result = _build(root, tmp_path)
    assert "tiny" not in computed(result) and _shown(tmp_path) == "7"


@slow
def test_a_database_a_lab_queries_is_what_it_read(tmp_path):
    """SQLite reads its file in C, where no `open` is seen: the connection names it, and an edit to the
    database computes the lab again."""
    import sqlite3
    root = _site(tmp_path, "import os, sqlite3\nwith sqlite3.connect(os.path.join(os.path.dirname(__file__), "
                           "'n.sqlite')) as db:\n    extra = str(db.execute('select n from t').fetchone()[0])")

    def store(n: int) -> None:
        with sqlite3.connect(root / "compute/n.sqlite") as db:
            db.execute("create table if not exists t (n)")
            db.execute("delete from t")
            db.execute("insert into t values (?)", (n,))
        db.close()
    store(7)
    _build(root, tmp_path)
    assert _shown(tmp_path) == "7" and "tiny" not in computed(_build(root, tmp_path))
    store(8)
    assert "tiny" in computed(_build(root, tmp_path)) and _shown(tmp_path) == "8"


@slow
def test_an_environment_variable_a_lab_reads_is_part_of_its_key(tmp_path):
    """A lab that reads OMP_NUM_THREADS (which labs see) computes again when it is set otherwise; one
    that asks for a variable it may not see (a token) is not computed again when that changes."""
    root = _site(tmp_path, "import os\nextra = os.environ.get('OMP_NUM_THREADS', 'unset') + "
                           "os.environ.get('MY_API_TOKEN', '-')")

    def build(threads: str, token: str):
        result = run_build(root, tmp_path / "dist", tmp_path / "cache", env={"OMP_NUM_THREADS": threads,
                                                                             "MY_API_TOKEN": token})
        assert result.returncode == 0, result.stderr
        return computed(result)
    assert "tiny" in build("1", "a") and _shown(tmp_path) == "1-"
    assert "tiny" not in build("1", "b")
    assert "tiny" in build("2", "b") and _shown(tmp_path) == "2-"


@slow
def test_a_lab_that_starts_a_process_runs_again_on_any_edit_and_the_build_says_why(tmp_path):
    """What a process it starts reads is not seen: the lab is keyed on every source of the course."""
    root = _site(tmp_path, "import subprocess\nextra = subprocess.check_output(['echo', '7']).decode().strip()")
    first = _build(root, tmp_path)
    assert ("note: lab tiny ran a process (subprocess.Popen), whose reading is not seen: it runs again whenever "
            "any source of the course changes") in first.stderr
    assert "tiny" not in computed(_build(root, tmp_path))
    edit(root / "content/index.md", "总和是", "总和仍是")
    assert "tiny" in computed(_build(root, tmp_path))


RECORDING = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
from sitegen.labs.labreads import Recorder
root, writable, outside = sys.argv[2:5]
recorder = Recorder(root, (writable,)).install()
os.chdir(writable)
os.stat(os.path.join(outside, "to-project"))        # outside the project, leading into it
os.stat(os.path.join(outside, "elsewhere.txt"))     # outside, twice: the second time not looked at
os.stat(os.path.join(outside, "elsewhere.txt"))
os.stat(os.path.join(writable, "link"))             # the lab's own link, to a file outside
roundabout = os.path.join(outside, "..", os.path.basename(writable), "link")
os.stat(roundabout)                                 # (the same, named through "..")
os.remove("link")
os.symlink(os.path.join(root, "b.txt"), "link")     # then to one of the project's
os.stat(roundabout)
print(json.dumps(sorted(recorder.reads)))
"""


def test_a_path_that_leads_into_the_project_is_read_however_it_is_named_and_whenever(tmp_path):
    """What the recorder skips (a path outside the project it has already followed) never hides a
    read: a link outside leading in is recorded, and a link in the lab's own folder is followed again
    each time (the lab may point it elsewhere)."""
    import os
    import subprocess
    import sys
    from support import REPO
    root, writable, outside = (tmp_path / name for name in ("project", "lab", "outside"))
    for folder in (root, writable, outside):
        folder.mkdir()
    (root / "a.txt").write_text("a")
    (root / "b.txt").write_text("b")
    (outside / "elsewhere.txt").write_text("x")
    os.symlink(root / "a.txt", outside / "to-project")
    os.symlink(outside / "elsewhere.txt", writable / "link")
    done = subprocess.run([sys.executable, "-c", RECORDING, str(REPO), str(root), str(writable), str(outside)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["a.txt", "b.txt"]


def test_a_real_path_is_what_os_path_realpath_says():
    import os
    from sitegen.labs.labreads import _real
    here = os.getcwd()
    for path in ("/", ".", "", "/usr/bin/../lib", "/proc/self/cwd", "/no/such/path/../x", __file__):
        assert _real(path) == os.path.realpath(path), path
    assert os.getcwd() == here


def test_what_a_lab_found_is_recorded_without_reading_what_is_no_file(tmp_path):
    """A file's hash, a folder's listing, nothing for what is absent; a pipe (which a lab may name to
    hang the build on) or a device is recorded as what it is, never opened for reading."""
    import os
    from sitegen.labs.labreads import ABSENT, SPECIAL, file_record, listing_record
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "pipe")
    assert file_record(str(tmp_path / "a.txt")) != file_record(str(tmp_path / "sub"))
    assert file_record(str(tmp_path / "sub")) == listing_record(str(tmp_path / "sub"))
    assert file_record(str(tmp_path / "none")) == ABSENT
    assert file_record(str(tmp_path / "pipe")).startswith(SPECIAL)
    assert file_record("/dev/zero").startswith(SPECIAL)
