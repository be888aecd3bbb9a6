"""`python build.py serve`: the emulator serves the build, an edit rebuilds, the open page reloads."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from support import REPO, free_port, get, tiny_site
from test_robustness import _processes_mentioning


def test_edit_rebuilds_and_the_open_page_reloads(tmp_path, browser, emulator):
    root = tiny_site(tmp_path / "project")
    (root / "tools").mkdir()
    (root / "tools/node_modules").symlink_to(REPO / "tools/node_modules")
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, str(REPO / "build.py"), "serve", "--root", str(root),
                               "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "SOURCE_DATE_EPOCH": "1790000000"})
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if get(port, "/").status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            raise AssertionError(open(log.name).read()[-3000:])
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        assert page.locator("h1").inner_text() == "小实验"
        guide = root / "content/index.md"
        guide.write_text(guide.read_text(encoding="utf-8").replace("title: 小实验", "title: 小实验（已更新）"),
                         encoding="utf-8")
        # No navigation from the test: the page's own script must reload it.
        page.locator("h1", has_text="已更新").wait_for(timeout=30_000)
        page.close()
        assert "rebuilt in" in open(log.name).read()
    finally:
        server.terminate()
        server.wait(timeout=30)
    # Stopping serve stops the emulator, workerd included: nothing serves the port any more.
    deadline = time.time() + 10
    while _listening(port) and time.time() < deadline:
        time.sleep(0.1)
    assert not _listening(port) and not _processes_mentioning(f"127.0.0.1:{port}")


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
