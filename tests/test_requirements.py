"""The requirements files: requirements.txt's ranges (README's commands and Pages' Git builder take
the newest they allow) and requirements.lock's exact versions (what the workflow tests and deploys)."""
from __future__ import annotations

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from support import REPO


def _lines(name: str) -> list[str]:
    text = (REPO / name).read_text(encoding="utf-8")
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def test_the_lock_pins_every_requirement_at_a_version_its_range_allows():
    pinned = {}
    for line in _lines("requirements.lock"):
        name, _, version = line.partition("==")
        assert version, f"requirements.lock: {line!r} is not name==version"
        pinned[canonicalize_name(name)] = version
    for line in _lines("requirements.txt"):
        wanted = Requirement(line)
        version = pinned.get(canonicalize_name(wanted.name))
        assert version is not None, f"requirements.lock lacks {wanted.name}"
        assert wanted.specifier.contains(version), f"requirements.lock: {wanted.name}=={version} is not {wanted.specifier}"
