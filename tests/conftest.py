"""Shared fixtures: every build happens in a temporary folder, never in the repo.

Tests that need a tool beyond the Python requirements are marked by the
fixture that provides it, so the marks cannot drift from what a test uses:
`browser` (Debian's Chromium), `emulator` (wrangler, from tools/), `java`
(the Nu Html Checker). The fast tier leaves them out:

    python -m pytest -m "not slow" -n auto

(`slow` marks tests that take seconds, and every browser, emulator and java test.)

A missing tool skips its tests with the command that installs it; under
CI=true it fails them, since CI must prove the whole suite.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.serve import free_port  # noqa: F401 - the tests' way to a free port
from sitegen.sources import SOURCES

REPO = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"
TOOLS = REPO / "tools" / "node_modules"
EPOCH = "1790000000"   # fixed SOURCE_DATE_EPOCH for reproducible test builds
IN_CI = os.environ.get("CI") == "true"
MARKS = {"browser": "browser", "served": "emulator", "emulator": "emulator", "vnu": "java"}   # fixture -> mark
NPM_TOOLS = "npm ci --prefix tools --ignore-scripts"


def pytest_collection_modifyitems(items):
    for item in items:
        for mark in sorted({MARKS[f] for f in item.fixturenames if f in MARKS}):
            item.add_marker(mark)
            item.add_marker("slow")


def require(present: bool, what: str, install: str) -> None:
    """Skip (or, in CI, fail) a test whose tool is missing, saying how to install it."""
    if present:
        return
    message = f"{what} is not installed: {install}"
    if IN_CI:
        pytest.fail(message + " (CI=true: .ci/run must install it)", pytrace=False)
    pytest.skip(message)


def copy_project(target: Path) -> Path:
    """A copy of the site's sources that a test may break."""
    target.mkdir(parents=True, exist_ok=True)
    for part in SOURCES:
        source = REPO / part
        if not source.exists():
            continue
        if source.is_dir():
            shutil.copytree(source, target / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / part)
    return target


def run_build(root: Path, out: Path, cache: Path, *args: str, cwd: Path | None = None,
              timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    return subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out),
                           "--cache", str(cache), *args],
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)


def build_command(root: Path, out: Path, cache: Path, *args: str) -> list[str]:
    return [sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out), "--cache", str(cache),
            *args]


# -- the generator's own fixture site (tests/sites_invalid/_base) ----------------

CASES = Path(__file__).resolve().parent / "sites_invalid"
CASE_META = {"expected.txt", "args.txt", "edits.yaml"}


def lay(source: Path, target: Path) -> None:
    """Copy a case's files over the site, then make its edits."""
    import yaml
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name not in CASE_META:
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
    edits = source / "edits.yaml"
    for edit in yaml.safe_load(edits.read_text(encoding="utf-8")) if edits.exists() else []:
        file = target / edit["file"]
        text = file.read_text(encoding="utf-8")
        assert text.count(edit["replace"]) == 1, f"{edits}: {edit['replace']!r} must occur once in {edit['file']}"
        file.write_text(text.replace(edit["replace"], edit["with"]), encoding="utf-8")


def tiny_site(root: Path) -> Path:
    """The smallest valid site (one lab, two served) with the repository's templates and static/."""
    for part in ("templates", "static"):
        shutil.copytree(REPO / part, root / part)
    lay(CASES / "_base", root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


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
    shutil.copytree(course_cache, tmp_path / "cache", ignore=shutil.ignore_patterns("lock", "last-build.json"))
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


CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")   # a CI runner may name its own
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by Playwright (.ci/run installs both)."""
    require(Path(CHROMIUM).exists(), "Debian's Chromium", "apt-get install chromium fonts-noto-cjk")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


# -- the built site served by Cloudflare's own emulator ------------------------

def get(port: int, path: str):
    """GET without following redirects; the body is on `.body`."""
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.request("GET", path)
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


@pytest.fixture(scope="session")
def emulator() -> Path:
    """The pinned `wrangler` (Cloudflare's Pages emulator) in tools/node_modules."""
    binary = TOOLS / ".bin" / "wrangler"
    require(shutil.which("node") is not None, "Node.js 20", "apt-get install nodejs npm")
    require(binary.exists(), "wrangler (the Pages emulator)", NPM_TOOLS)
    return binary


@pytest.fixture(scope="session")
def vnu() -> list[str]:
    """The Nu Html Checker, as a command: Java running the jar from tools/."""
    jar = TOOLS / "vnu-jar/build/dist/vnu.jar"
    require(shutil.which("java") is not None, "Java", "apt-get install default-jre-headless")
    require(jar.exists(), "the Nu Html Checker (vnu-jar)", NPM_TOOLS)
    return ["java", "-jar", str(jar)]


@pytest.fixture(scope="session")
def served(site, emulator, tmp_path_factory):
    """Port of `wrangler pages dev` serving the built site."""
    from sitegen.serve import serving
    port = free_port()
    with serving(REPO, site, port, tmp_path_factory.mktemp("wrangler-state")):
        yield port
