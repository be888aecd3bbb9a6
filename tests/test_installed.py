"""The installed distributions (sitegen/core/installed.py): versions and the modules each provides,
read from `.dist-info` folders as pip lays them, and seen anew once a folder's listing changes."""
from __future__ import annotations

import os
import sys

import pytest

from sitegen.core import installed


@pytest.fixture()
def site_packages(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    return tmp_path


def dist(folder, name: str, version: str, top_level: str | None = None, record: str | None = None) -> None:
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    if top_level is not None:
        (info / "top_level.txt").write_text(top_level, encoding="utf-8")
    if record is not None:
        (info / "RECORD").write_text(record, encoding="utf-8")


def test_versions_and_owners_from_top_level_or_record(site_packages):
    dist(site_packages, "Py_Yaml_Like", "6.0", top_level="yamlish\n_yamlish\n")
    dist(site_packages, "recorded", "1.2", record="recmod/__init__.py,sha256=x,1\nsolo.py,,\n"
         "recorded-1.2.dist-info/METADATA,,\n../../bin/tool,,\nrecorded.pth,,\n__pycache__/solo.cpython-311.pyc,,\n")
    assert installed.versions()["py_yaml_like"] == "6.0" and installed.versions()["recorded"] == "1.2"
    owners = installed.owners()
    assert owners["yamlish"] == owners["_yamlish"] == "py_yaml_like"
    assert owners["recmod"] == owners["solo"] == "recorded"
    assert not {"..", "__pycache__", "recorded-1.2.dist-info", "recorded.pth"} & owners.keys()


def test_a_module_no_list_names_is_provided_by_the_distribution_of_its_name(site_packages):
    dist(site_packages, "editable_thing", "0.1", record="__editable__.editable_thing-0.1.pth,,\n")
    assert installed.providers(["editable_thing", "not_installed_at_all"]) == {"editable_thing": "editable_thing"}


def test_an_upgrade_is_seen_by_the_next_call(site_packages):
    dist(site_packages, "moving", "1.0", top_level="moving\n")
    assert installed.providers(["moving"]) == {"moving": "moving"}
    os.rename(site_packages / "moving-1.0.dist-info", site_packages / "moving-2.0.dist-info")
    (site_packages / "moving-2.0.dist-info/top_level.txt").write_text("moving\nmoved\n", encoding="utf-8")
    os.utime(site_packages, ns=(0, os.stat(site_packages).st_mtime_ns + 1))     # (as a new listing)
    assert installed.versions()["moving"] == "2.0"
    assert installed.owners()["moved"] == "moving"


def test_a_distribution_s_own_name_is_its_metadata_s_as_importlib_reads_it(site_packages):
    dist(site_packages, "Py_Yaml_Like", "6.0", top_level="yamlish\n")
    assert installed.project_name("py_yaml_like") == "Py_Yaml_Like"
    assert installed.project_name("not_installed_at_all") is None
    from importlib import metadata
    names = installed.versions()
    assert len(names) > 20             # (this machine's: the build's requirements and the tests')
    for dist_name in names:
        assert installed.project_name(dist_name) == metadata.distribution(dist_name).metadata["Name"], dist_name
