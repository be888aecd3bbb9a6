"""`python build.py serve`: the emulator serves the build, an edit rebuilds, the open page reloads."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from support import REPO, free_port, get, lab_prints_a_project_file, processes_mentioning, tiny_site


def _project(tmp_path):
    root = tiny_site(tmp_path / "project")
    (root / "tools").mkdir()
    (root / "tools/node_modules").symlink_to(REPO / "tools/node_modules")
    return root


def _serve(root, port, log, *options):
    server = subprocess.Popen([sys.executable, str(REPO / "build.py"), "serve", "--root", str(root),
                               "--port", str(port), *options], stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "SOURCE_DATE_EPOCH": "1790000000"})
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if get(port, "/").status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.5)
    server.kill()
    raise AssertionError(open(log.name).read()[-3000:])


@contextlib.contextmanager
def _served(root, tmp_path):
    """`serve` running on the project, for as long as the block runs: its port and its log's path."""
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = _serve(root, port, log)
    try:
        yield port, log.name
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _nothing_serves(port):
    deadline = time.time() + 15
    while (_listening(port) or processes_mentioning(f"127.0.0.1:{port}")) and time.time() < deadline:
        time.sleep(0.1)
    return not _listening(port) and not processes_mentioning(f"127.0.0.1:{port}")


def test_edit_rebuilds_and_the_open_page_reloads(tmp_path, browser, emulator):
    root = _project(tmp_path)
    with _served(root, tmp_path) as (port, log):
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        assert page.locator("h1").inner_text() == "小实验"
        guide = root / "content/index.md"
        guide.write_text(guide.read_text(encoding="utf-8").replace("title: 小实验", "title: 小实验（已更新）"),
                         encoding="utf-8")
        # No navigation from the test: the page's own script must reload it.
        page.locator("h1", has_text="已更新").wait_for(timeout=30_000)
        page.close()
        assert "rebuilt in" in open(log).read()
    # Stopping serve stops the emulator, workerd included: nothing serves the port any more.
    assert _nothing_serves(port)


def test_a_notebook_saved_in_jupyter_reloads_the_open_page_with_its_code_and_prose(tmp_path, browser, emulator):
    """The teacher's loop: edit a notebook page's prose and code, save (as Jupyter writes it), and the
    open page shows both; the time each save took to reach the page is printed (not asserted)."""
    import nbformat
    root = _project(tmp_path)
    notebook = root / "content/loop.ipynb"
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    book.cells = [nbformat.v4.new_markdown_cell("# 循环\n\n第 0 版。"), nbformat.v4.new_code_cell("print('run', 0)")]
    nbformat.write(book, notebook)
    with _served(root, tmp_path) as (port, _):
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/loop")
        page.locator("pre.cell-stdout", has_text="run 0").wait_for(timeout=30_000)
        took = []
        for version in (1, 2, 3):
            book.cells[0].source = f"# 循环\n\n第 {version} 版。"
            book.cells[1].source = f"print('run', {version})"
            saved = time.monotonic()
            nbformat.write(book, notebook)
            page.locator("pre.cell-stdout", has_text=f"run {version}").wait_for(timeout=60_000)
            page.locator("p", has_text=f"第 {version} 版").wait_for(timeout=5_000)
            took.append(time.monotonic() - saved)
        print("notebook saved -> page shows code and prose: " + ", ".join(f"{t:.2f} s" for t in took))
        page.close()


@pytest.mark.parametrize("how", [signal.SIGHUP, signal.SIGKILL], ids=["terminal closed", "killed"])
def test_the_emulator_ends_with_serve_however_serve_ends(tmp_path, emulator, how):
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = _serve(_project(tmp_path), port, log)
    server.send_signal(how)
    server.wait(timeout=30)
    assert _nothing_serves(port), open(log.name).read()[-2000:]


def test_serve_with_its_cache_elsewhere_keeps_the_emulator_s_state_there_too(tmp_path, emulator):
    root, elsewhere = _project(tmp_path), tmp_path / "elsewhere"
    with (tmp_path / "serve.log").open("w") as log:
        server = _serve(root, free_port(), log, "--cache", str(elsewhere))
        server.terminate()
        server.wait(timeout=30)
    assert (elsewhere / "wrangler").is_dir() and (elsewhere / "labs").is_dir()
    assert not (root / ".cache").exists() and not (root / ".wrangler").exists()


def test_a_port_in_use_is_an_error_naming_it_not_another_site_served(tmp_path, emulator):
    import socket
    root = _project(tmp_path)
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        result = subprocess.run([sys.executable, str(REPO / "build.py"), "serve", "--root", str(root),
                                 "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"error: serve: port {port} is in use" in result.stderr and "serving" not in result.stderr
    assert not (root / "dist").exists()


def _listening(port: int) -> bool:
    import socket
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_serve_without_node_says_what_to_install(tmp_path):
    root = tiny_site(tmp_path / "project")
    result = subprocess.run([sys.executable, str(REPO / "build.py"), "serve", "--root", str(root)],
                            capture_output=True, text=True, timeout=60, env={**os.environ, "PATH": str(tmp_path)})
    assert result.returncode == 1
    assert "Node.js 20 and npm are needed for the Cloudflare emulator" in result.stderr
    assert not (root / "dist").exists()


def _reading_data(tmp_path):
    """The fixture project whose lab prints a data file of the project's top folder data/, outside
    the sources' folders (as a teacher may keep data next to compute/)."""
    root = _project(tmp_path)
    lab_prints_a_project_file(root, "data/n.txt", "7", "n is")
    return root


@pytest.mark.slow
def test_serve_watches_the_folders_a_lab_read_outside_the_sources(tmp_path):
    from sitegen.commands.pipeline import build
    from sitegen.commands.serve import watched
    root = _reading_data(tmp_path)
    build(root, root / "dist", cache=root / ".cache")
    folders = watched(root, root / "dist", root / ".cache")
    assert root / "data" in folders and root / "compute" in folders and root / "content" in folders
    assert not any(folder.name.startswith(".") or folder.name == "dist" for folder in folders), folders


def _said(log) -> str:
    """serve's own lines in its log (what changed, what was rebuilt), without the emulator's requests,
    which the waiting loops fill it with."""
    return "\n".join(line for line in open(log).read().splitlines() if "] GET " not in line)[-3000:]


def test_an_edit_to_a_data_file_a_lab_reads_outside_the_sources_rebuilds_under_serve(tmp_path, emulator):
    root = _reading_data(tmp_path)
    with _served(root, tmp_path) as (port, log):
        assert "n is 7" in get(port, "/").body.decode()
        # (an edit made before serve's watch began is built by its first quiet moment, saying nothing:
        # the second edit comes after that, so the watch itself must see it)
        for n in ("8", "9"):
            (root / "data/n.txt").write_text(n, encoding="utf-8")
            deadline = time.time() + 60
            while f"n is {n}" not in get(port, "/").body.decode():
                assert time.time() < deadline, _said(log)
                time.sleep(0.3)
        assert "changed: data/n.txt" in open(log).read()
        # The lab reads a folder it did not: serve watches that one too, from the build that read it.
        lab_prints_a_project_file(root, "more/m.txt", "1", "m is")
        for expected, edit in (("m is 1", None), ("m is 2", lambda: (root / "more/m.txt").write_text("2", encoding="utf-8"))):
            if edit:
                edit()
            deadline = time.time() + 60
            while expected not in get(port, "/").body.decode():
                assert time.time() < deadline, (expected, _said(log))
                time.sleep(0.3)


def test_a_file_at_the_project_s_top_a_lab_reads_is_watched_and_saved_by_renaming_too(tmp_path, emulator):
    """notes.txt beside site.yaml: the top folder is not watched (it holds dist/ and .cache/), the file
    is, and stays watched when an editor saves by writing a new file and renaming it over the old one."""
    root = _project(tmp_path)
    lab_prints_a_project_file(root, "notes.txt", "7", "notes say")
    with _served(root, tmp_path) as (port, log):
        assert "notes say 7" in get(port, "/").body.decode()
        for text in ("8", "9"):
            (root / "notes.new").write_text(text, encoding="utf-8")
            os.replace(root / "notes.new", root / "notes.txt")
            deadline = time.time() + 60
            while f"notes say {text}" not in get(port, "/").body.decode():
                assert time.time() < deadline, (text, _said(log))
                time.sleep(0.3)


def test_an_edit_made_while_serve_starts_the_emulator_is_built_too(tmp_path, emulator):
    """Serve builds, starts the emulator (seconds), then watches: an edit in between is not lost."""
    root = _reading_data(tmp_path)
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([sys.executable, str(REPO / "build.py"), "serve", "--root", str(root),
                                   "--port", str(port)], stdout=out, stderr=subprocess.STDOUT,
                                  env={**os.environ, "SOURCE_DATE_EPOCH": "1790000000"})
        try:
            deadline = time.time() + 120
            while "built " not in log.read_text(encoding="utf-8"):         # the first build, before the emulator
                assert time.time() < deadline and server.poll() is None, log.read_text(encoding="utf-8")
                time.sleep(0.05)
            (root / "data/n.txt").write_text("8", encoding="utf-8")
            while True:
                assert time.time() < deadline and server.poll() is None, log.read_text(encoding="utf-8")[-3000:]
                with contextlib.suppress(OSError):
                    if "n is 8" in get(port, "/").body.decode():
                        break
                time.sleep(0.3)
            assert "serving" in log.read_text(encoding="utf-8")
        finally:
            server.terminate()
            server.wait(timeout=30)
