"""sitegen/commands/cli.py, the command line: a long lab is never silent, on a terminal or in a log."""
from __future__ import annotations

import io

from sitegen.commands.cli import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_running_lab_shows_its_name_and_seconds_on_one_line():
    screen = Terminal()
    progress = Progress(screen)
    progress({"lab09": 0.5})                                  # short labs print nothing
    assert screen.getvalue() == ""
    progress({"lab09": 2.2, "patches": 0.4})
    progress({"lab09": 3.1, "patches": 1.3})
    assert screen.getvalue().split("\r\033[K")[1:] == ["computing lab09 (2 s), patches (0 s)",
                                                       "computing lab09 (3 s), patches (1 s)"]
    progress.clear()
    assert screen.getvalue().endswith("\r\033[K")


def test_in_a_log_a_running_lab_gets_a_line_a_minute():
    log = io.StringIO()
    progress = Progress(log)
    for seconds in (1, 30, 59, 60.2, 61, 119, 120.5, 150):
        progress({"slow": seconds})
    assert log.getvalue().splitlines() == ["computing slow (60 s)", "computing slow (120 s)"]


import pytest  # noqa: E402


@pytest.mark.slow
def test_pip_install_gives_the_sitegen_command_that_builds_a_course_in_its_folder(tmp_path):
    """Installed from this repository (not run from it): the command builds a course elsewhere, and the
    package holds its data (the vocabulary, the math font, the starters, the theme)."""
    import os
    import subprocess
    import sys

    from support import REPO, tiny_site
    import shutil
    prefix, source = tmp_path / "prefix", tmp_path / "source"      # (pip builds in the folder: not in ours)
    shutil.copytree(REPO / "sitegen", source / "sitegen", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source)
    # (pip builds it with the setuptools pyproject.toml asks for, from the package registry)
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--prefix", str(prefix),
                                str(source)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    site_packages = next(prefix.glob("lib/python*/site-packages"))
    def files(folder):
        return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert files(site_packages / "sitegen") == files(REPO / "sitegen")      # the code, its data and the theme
    course = tiny_site(tmp_path / "course")
    env = {**os.environ, "PYTHONPATH": str(site_packages), "SOURCE_DATE_EPOCH": "1790000000"}
    built = subprocess.run([str(prefix / "bin/sitegen"), "--strict"], capture_output=True, text=True, timeout=300,
                           cwd=course, env=env)
    assert built.returncode == 0, built.stderr
    assert (course / "dist/index.html").is_file() and "tiny computed" in built.stdout
    from_where = subprocess.run([str(prefix / "bin/sitegen"), "info"], capture_output=True, text=True, timeout=60,
                                cwd=course, env={**env, "PYTHONPATH": str(site_packages)})
    assert "base_url=https://example.pages.dev" in from_where.stdout
    check = subprocess.run([sys.executable, "-c", "import sitegen, sys; print(sitegen.__file__)"], capture_output=True,
                           text=True, env=env, cwd=tmp_path)
    assert check.stdout.startswith(str(site_packages)), check.stdout       # the installed one ran, not the checkout's
