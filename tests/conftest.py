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

import shutil
from pathlib import Path

import pytest

from support import CHROMIUM, CHROMIUM_ARGS, NPM_TOOLS, TOOLS, mark_by_fixtures, require, run_build, tiny_site


def pytest_collection_modifyitems(items):
    mark_by_fixtures(items)


NAVIGATION_MS = 60_000       # one try of a navigation (retrying_navigation makes two)


def retrying_navigation(page):
    """`page`, whose goto is tried a second time (warned) when the first times out."""
    import warnings
    from playwright.sync_api import TimeoutError as Timeout
    goto = page.goto

    def patient_goto(url, **kwargs):
        try:
            return goto(url, **kwargs)
        except Timeout:
            warnings.warn(f"the navigation to {url} timed out after {NAVIGATION_MS // 1000} s; tried once more")
            goto("about:blank")           # (ends the hanging one: a second goto of it is aborted)
            return goto(url, **kwargs)
    page.goto = patient_goto
    return page


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by Playwright (.ci/run installs both)."""
    require(Path(CHROMIUM).exists(), "Debian's Chromium", "apt-get install chromium fonts-noto-cjk")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # Navigation may take longer than Playwright's 30 s: under a whole `.ci/run` on this 2-core
        # machine, the emulator was seen to take that long to finish loading the lab page (2 of 4
        # runs; 27 of 27 passed when the browser tests ran alone). And once in a fresh-clone run it
        # never finished one load (the 120-s timeout of stop 45's CI; every other navigation of
        # that run passed): a response the emulator left hanging, as wrangler's own issues report
        # under a browser's parallel requests. So a navigation that times out is tried once more,
        # with a warning that says so; one that times out twice fails. What is tested is the page,
        # not the emulator's speed under load; the page's weight is bench/audit.py's to measure.
        opened = chromium.new_context

        def new_context(*args, **kwargs):
            context = opened(*args, **kwargs)
            context.set_default_navigation_timeout(NAVIGATION_MS)
            new_page = context.new_page
            context.new_page = lambda: retrying_navigation(new_page())
            return context
        chromium.new_context = new_context
        chromium.new_page = lambda *args, **kwargs: new_context(*args, **kwargs).new_page()
        yield chromium
        chromium.close()


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
def tiny_built(tmp_path_factory) -> Path:
    """The generator's fixture site (tests/sites_invalid/_base), built once: its dist/."""
    base = tmp_path_factory.mktemp("tiny")
    result = run_build(tiny_site(base / "site"), base / "dist", base / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    return base / "dist"
