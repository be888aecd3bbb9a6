"""What a lab imports that requirements.txt does not list (sitegen/project/needs.py)."""
from __future__ import annotations

from sitegen.project.needs import _installed_with, imported, listed, unlisted


def test_requirements_are_read_with_their_includes_comments_and_markers(tmp_path):
    (tmp_path / "requirements.txt").write_text("-r more.txt\nNumPy>=2  # arrays\npython_dateutil; python_version>'3'\n"
                                               "\n--index-url https://example.org\n", encoding="utf-8")
    (tmp_path / "more.txt").write_text("PyYAML==6.0\n", encoding="utf-8")
    named = {"numpy", "python-dateutil", "pyyaml"}
    assert listed(tmp_path) == named | _installed_with(named)       # (and what pip installs with them)


def test_imports_at_any_depth_are_found_with_their_first_line_and_relative_ones_left_out():
    source = "import os, numpy.linalg\ndef f():\n    from yaml import safe_load\n    from . import sibling\nimport numpy\n"
    assert imported(source) == [("os", 1), ("numpy", 1), ("yaml", 3)]


def test_the_standard_library_and_the_project_s_own_modules_need_no_requirement(tmp_path):
    (tmp_path / "compute").mkdir()
    (tmp_path / "compute/helper.py").write_text("", encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("numpy\n", encoding="utf-8")
    script = tmp_path / "compute/lab.py"
    found = unlisted(tmp_path, script, "import json, helper, numpy\nimport yaml\n")
    assert found == [(2, "yaml", "PyYAML")]


def test_what_pip_installs_with_a_listed_package_counts_as_listed(tmp_path):
    """A course lists the generator (or Matplotlib); pip installs what that requires too, so NumPy and
    Pillow need no line of their own, and no warning says they do. An optional extra is not installed."""
    from sitegen.project.needs import listed
    (tmp_path / "requirements.txt").write_text("matplotlib>=3.9\n", encoding="utf-8")
    found = listed(tmp_path)
    assert {"matplotlib", "numpy", "pillow", "pyparsing"} <= found and "pandas" not in found
    (tmp_path / "requirements.txt").write_text("jinja2\n", encoding="utf-8")
    assert listed(tmp_path) == {"jinja2", "markupsafe"}          # (Babel is jinja2's extra i18n)
