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


def test_the_package_needs_what_requirements_txt_asks_for_in_the_same_ranges():
    """The generator's dependencies (sitegen/dependencies.txt, which pyproject.toml reads) are among
    requirements.txt's (the generator and the course's own, which Pages installs), each with the same range."""
    import tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["setuptools"]["dynamic"]["dependencies"] == {"file": ["sitegen/dependencies.txt"]}
    package = _lines("sitegen/dependencies.txt")
    listed = {canonicalize_name(Requirement(line).name): str(Requirement(line).specifier)
              for line in _lines("requirements.txt")}
    for line in package:
        wanted = Requirement(line)
        assert listed.get(canonicalize_name(wanted.name)) == str(wanted.specifier), line
