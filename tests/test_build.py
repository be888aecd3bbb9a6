"""build.py, the command line: a long lab is never silent, on a terminal or in a log."""
from __future__ import annotations

import io

from build import Progress


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
