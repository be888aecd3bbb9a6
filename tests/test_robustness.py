"""No input crashes the build, no kill loses the site, no value injects markup."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import EPOCH, REPO, processes_mentioning, run_build, tiny_site, tree_bytes


# -- random front matter and references --------------------------------------

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
FRONT = st.one_of(
    st.dictionaries(st.sampled_from(["title", "lab", "toc", "description", "parent", "tittle"]),
                    st.one_of(TEXT, st.booleans(), st.integers(), st.none(), st.lists(st.integers(), max_size=2)),
                    max_size=5).map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
    TEXT,
)
LINES = st.lists(st.one_of(st.sampled_from([
    "::: cell setup", "::: cell nope", "::: cell", "::: cell setup output=weird", "::: cell save output=collapsed",
    '::: table x axes=row,column caption="值"', "::: table x", "::: table total axes=row caption=t",
    '::: table x axes=row,column columns=x caption="c"', "::: downloads", "::: downloads extra", ":::",
    "{{ total }}", "{{ x[1][2] }}", "{{ x[9] }}", "{{ total | .2e }}", "{{ total | zz }}", "{{ x | .1f }}",
    "{{ }}", "{{ provenance.seed }}", "![图](figure:line.png)", "![](figure:line.png)", "![图](figure:nope.png)",
    "[a](index.md#compute)", "[b](missing.md)", "[c](#nowhere)", "[d](/materials/results.json)",
    "[e](../../etc/passwd)", "[f](https://example.org)", "## 标题", "## 标题 {#compute}", "```", "<b>粗</b>",
]), TEXT), max_size=8)


@pytest.fixture(scope="module")
def fuzz_site(tmp_path_factory):
    root = tiny_site(tmp_path_factory.mktemp("fuzz") / "site")
    cache = root.parent / "cache"
    from sitegen.commands.pipeline import build
    build(root, root.parent / "dist", cache=cache)     # compute the lab once
    return root, cache


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(front=FRONT, lines=LINES)
def test_random_pages_build_or_fail_clearly(fuzz_site, front, lines):
    from sitegen.core.errors import BuildError
    from sitegen.commands.pipeline import build
    root, cache = fuzz_site
    (root / "content/index.md").write_text(f"---\n{front}\n---\n" + "\n".join(lines) + "\n", encoding="utf-8")
    try:
        build(root, root.parent / "dist", cache=cache)
    except BuildError as exc:
        assert exc.problems and all(p.message for p in exc.problems)
        assert exc.report().startswith("error: ")


# -- a build killed at any moment ------------------------------------------------

@pytest.mark.slow
def test_a_build_killed_at_any_moment_leaves_a_whole_site(tmp_path):
    root = tiny_site(tmp_path / "site")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    page = root / "content/index.md"
    versions = [page.read_text(encoding="utf-8"), page.read_text(encoding="utf-8") + "\n又一段文字。\n"]
    sites = []
    for i, text in enumerate(versions):                  # the two complete sites a kill may leave
        page.write_text(text, encoding="utf-8")
        assert run_build(root, tmp_path / f"reference-{i}", cache).returncode == 0
        sites.append(tree_bytes(tmp_path / f"reference-{i}"))
    page.write_text(versions[0], encoding="utf-8")
    assert run_build(root, out, cache).returncode == 0
    rng = random.Random(20260918)
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    for attempt in range(12):
        page.write_text(versions[(attempt + 1) % 2], encoding="utf-8")
        process = subprocess.Popen([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out),
                                    "--cache", str(cache)], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 0.45))
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert tree_bytes(out) in sites, f"attempt {attempt}: dist/ is neither the old nor the new site"
    result = run_build(root, out, cache)
    assert result.returncode == 0
    assert tree_bytes(out) == sites[12 % 2]          # the last version written, whole
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("dist")) == ["dist"]


@pytest.mark.slow
def test_a_build_killed_while_a_lab_runs_leaves_no_process_behind(tmp_path):
    """The lab host and the labs it forked end with the build, however the build ends."""
    root = tiny_site(tmp_path / "site")
    script = root / "compute/tiny.py"
    script.write_text(script.read_text(encoding="utf-8").replace(
        "# %% save\n", "# %% save\nimport time\nPath('running').touch()\ntime.sleep(60)\n"), encoding="utf-8")
    cache = tmp_path / "cache"
    process = subprocess.Popen([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out",
                                str(tmp_path / "dist"), "--cache", str(cache)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list(cache.glob("labs/tiny/.tmp-*/work/running")):
        assert time.monotonic() < deadline and process.poll() is None, "the lab never started"
        time.sleep(0.05)
    assert len(processes_mentioning(str(root))) == 3      # the build, the lab host, the lab
    process.send_signal(signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 10
    while (left := processes_mentioning(str(root))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == []


# -- where the build may write ---------------------------------------------------

def test_refuses_output_folders_that_hold_anything_else(tmp_path):
    from sitegen.core.errors import BuildError
    from sitegen.publish.write import check_output_folder
    root = tiny_site(tmp_path / "site").resolve()
    for bad in (Path("/"), Path.home(), root, root / "content", root / "content/sub", root.parent):
        with pytest.raises(BuildError, match="refusing"):
            check_output_folder(bad, root)
    result = run_build(root, root / "content", tmp_path / "cache")    # through the command line too
    assert result.returncode == 1 and "refusing to use this folder as the output" in result.stderr
    assert sorted(p.name for p in (root / "content").iterdir()) == ["404.md", "index.md"]


def test_values_and_captions_cannot_inject_markup(tmp_path):
    root = tiny_site(tmp_path / "site")
    script = root / "compute/tiny.py"
    script.write_text(script.read_text(encoding="utf-8").replace(
        "'total': float(x.sum())", "'total': float(x.sum()), 'label': '<img src=x onerror=alert(1)>'"),
        encoding="utf-8")
    page = root / "content/index.md"
    page.write_text(page.read_text(encoding="utf-8").replace('caption="x 的值"', 'caption="<b>x</b> 的值"')
                    + "\n标签：{{ label }}\n", encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html
    assert "&lt;b&gt;x&lt;/b&gt; 的值" in html


def test_a_damaged_cache_is_recovered_from_and_nothing_it_links_to_is_written(tmp_path):
    """Every memo entry emptied, then the labs' folder of the cache made a link to a folder elsewhere:
    each next build gives the clean build's bytes and says nothing of a bug; the link goes, and what
    it pointed to is left as it was."""
    root = tiny_site(tmp_path / "site")
    cache = tmp_path / "cache"
    clean = tmp_path / "clean"
    assert run_build(root, clean, tmp_path / "clean-cache").returncode == 0
    assert run_build(root, tmp_path / "dist", cache).returncode == 0
    for path in (cache / "memo").rglob("*"):
        if path.is_file():
            path.write_bytes(b"")
    (root / "content/index.md").write_text((root / "content/index.md").read_text(encoding="utf-8") + "\n",
                                           encoding="utf-8")
    again = run_build(root, tmp_path / "dist", cache)
    assert again.returncode == 0 and "warning" not in again.stderr, again.stderr
    elsewhere = tmp_path / "elsewhere"
    (cache / "labs").rename(elsewhere)
    (cache / "labs").symlink_to(elsewhere)
    before = tree_bytes(elsewhere)
    edited = (root / "compute/tiny.py").read_text(encoding="utf-8") + "\n# edited\n"
    (root / "compute/tiny.py").write_text(edited, encoding="utf-8")
    third = run_build(root, tmp_path / "dist", cache)
    assert third.returncode == 0 and "warning" not in third.stderr, third.stderr
    assert not (cache / "labs").is_symlink() and tree_bytes(elsewhere) == before
    assert run_build(root, clean, tmp_path / "clean-cache").returncode == 0
    assert tree_bytes(tmp_path / "dist") == tree_bytes(clean)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a folder takes root")
def test_an_output_folder_that_is_a_mount_point_is_named(tmp_path):
    root = tiny_site(tmp_path / "site")
    (tmp_path / "dist").mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(tmp_path / "dist")]).returncode:
        pytest.skip("this machine does not mount a tmpfs here")
    try:
        result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    finally:
        subprocess.run(["umount", str(tmp_path / "dist")])
    assert result.returncode == 1 and "internal error" not in result.stderr
    assert "the output folder is a mount point" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system takes root")
def test_a_lab_that_fills_the_cache_s_disk_is_named_as_that_and_leaves_the_space(tmp_path):
    from support import write_notebook
    root = tiny_site(tmp_path / "site")
    # (It keeps the disk full for a while, as a lab writing a large file does: another lab, and the
    # build's own writes meanwhile, meet a full disk too; it is still this lab that is named.)
    write_notebook(root / "content/fills.ipynb", "填满", "import time\nf = open('big.bin', 'wb')\ntry:\n"
                   "    f.write(b'0' * 100_000_000)\nexcept OSError:\n    time.sleep(3)\n    raise")
    write_notebook(root / "content/later.ipynb", "稍后", "import time\ntime.sleep(1)\nprint('稍后')")
    (tmp_path / "small").mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", str(tmp_path / "small")]).returncode:
        pytest.skip("this machine does not mount a tmpfs here")
    try:
        result = run_build(root, tmp_path / "dist", tmp_path / "small/cache")
        free = os.statvfs(tmp_path / "small")
    finally:
        subprocess.run(["umount", str(tmp_path / "small")])
    assert result.returncode == 1 and "internal error" not in result.stderr
    said = [line for line in result.stderr.splitlines() if "lab fills failed" in line]
    assert len(said) == 1 and "content/fills.ipynb" in said[0] and "No space left on device" in said[0]
    assert "the disk that holds the build's cache" in said[0]
    assert "(output)" not in result.stderr and "Traceback" not in result.stderr
    assert "without a result" not in result.stderr          # the other lab, too, says the disk was full
    assert free.f_bfree * free.f_frsize > 30 * 2**20              # what it wrote is gone


def test_files_of_someone_else_s_where_the_build_stages_the_site_are_named_and_left(tmp_path):
    root = tiny_site(tmp_path / "site")
    staging = tmp_path / ".dist.sitegen-tmp-next"
    staging.mkdir()
    (staging / "notes.txt").write_text("mine", encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "internal error" not in result.stderr
    assert f"{staging}: the build stages the site here, but this holds files it did not make" in result.stderr
    assert (staging / "notes.txt").read_text(encoding="utf-8") == "mine"
