"""The course's own fixtures: its site built once, the seed lab run as handed to us, the site
served by Cloudflare's emulator. The generator's tests (tests/*.py) never use them, so adding or
removing a page or lab of the course breaks none of those."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import GOLDEN, REPO, copy_project, free_port, run_build


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The repository's site, built once into a temporary dist/."""
    base = tmp_path_factory.mktemp("site")
    result = run_build(REPO, base / "dist", base / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    return base / "dist"


@pytest.fixture(scope="session")
def course_cache(site) -> Path:
    """The lab cache of that build: a test that copies the project copies it too, so that its
    builds only render (each lab's key follows its sources, so what a test changes recomputes)."""
    return site.parent / "cache"


@pytest.fixture()
def project(tmp_path, course_cache) -> tuple[Path, Path, Path]:
    """(root, out, cache): a copy of the course's sources, with a warm copy of its lab cache."""
    root = copy_project(tmp_path / "project")
    shutil.copytree(course_cache, tmp_path / "cache", ignore=shutil.ignore_patterns("lock", "last-build.pickle"))
    return root, tmp_path / "dist", tmp_path / "cache"


@pytest.fixture(scope="session")
def site_results(site) -> dict:
    return json.loads((site / "course/materials/lab09/results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def seed_run(tmp_path_factory) -> dict:
    """Run the seed script as handed to us; its results.json and stdout are the reference."""
    work = tmp_path_factory.mktemp("seed")
    result = subprocess.run([sys.executable, str(GOLDEN / "seed_lab09.py")], cwd=work, capture_output=True,
                            text=True, env={**os.environ, "MPLBACKEND": "Agg"}, timeout=300)
    assert result.returncode == 0, result.stderr
    results = json.loads((work / "outputs/LAB-B/results.json").read_text(encoding="utf-8"))
    return {"results": results, "stdout": result.stdout}


@pytest.fixture(scope="session")
def seed_saved_outputs() -> list[str]:
    """The text of every "保存输出" block in the seed notebook, in order."""
    notebook = json.loads((GOLDEN / "seed-lab09.ipynb").read_text(encoding="utf-8"))
    blocks = []
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and text.startswith("**保存输出"):
            blocks.append(text.split("```text\n", 1)[1].split("\n```", 1)[0])
    assert len(blocks) == 6
    return blocks


@pytest.fixture(scope="session")
def served(site, emulator, tmp_path_factory):
    """Port of `wrangler pages dev` serving the built site."""
    from sitegen.commands.serve import serving
    port = free_port()
    with serving(REPO, site, port, tmp_path_factory.mktemp("wrangler-state")):
        yield port


@pytest.fixture(scope="session")
def framed(site):
    """Port of a plain static server of the built site, for engines that are probed through a frame
    (the Pages headers, tested through the emulator, forbid framing the site)."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
