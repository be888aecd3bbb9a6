"""The test tiers: a missing tool skips its tests with the command that installs it, except in CI,
where the whole suite must run; marks follow the fixtures a test uses."""
from __future__ import annotations

import pytest

import support


def test_a_missing_tool_skips_with_its_install_command_outside_ci_and_fails_in_ci(monkeypatch):
    monkeypatch.setattr(support, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match=r"Debian's Chromium is not installed: apt-get install chromium"):
        support.require(False, "Debian's Chromium", "apt-get install chromium fonts-noto-cjk")
    monkeypatch.setattr(support, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match=r"apt-get install chromium .*CI=true: \.ci/run must install it"):
        support.require(False, "Debian's Chromium", "apt-get install chromium fonts-noto-cjk")
    support.require(True, "anything", "nothing to install")          # present: nothing happens


def test_tests_are_marked_by_the_tools_their_fixtures_need():
    class Item:
        def __init__(self, fixtures):
            self.fixturenames, self.marks = fixtures, []

        def add_marker(self, mark):
            self.marks.append(mark)
    items = [Item(["tmp_path"]), Item(["browser", "served"]), Item(["vnu", "site"])]
    support.mark_by_fixtures(items)
    assert [sorted(set(item.marks)) for item in items] == [[], ["browser", "emulator", "slow"], ["java", "slow"]]
