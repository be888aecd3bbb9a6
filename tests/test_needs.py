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


def test_every_package_the_labs_import_that_is_not_installed_is_said_at_once_with_the_command(tmp_path, monkeypatch):
    """Not one per failed build: each import at its line, then one pip command and the lines to add.
    An import inside a try, an if or a function may be optional (Colab's): it is not said."""
    from sitegen.project import needs
    from sitegen.project.cells import Cell
    from sitegen.project.config import Lab
    monkeypatch.setitem(needs.DISTRIBUTIONS, "absent_alias", "absent-distribution")
    source = ("%matplotlib inline\nimport numpy, absent_one\nfrom absent_alias.sub import thing\n"
              "try:\n    import absent_optional\nexcept ImportError:\n    pass\nif False:\n    import absent_two\n"
              "import mine\n")
    (tmp_path / "mine.py").write_text("", encoding="utf-8")
    assert needs.not_installed(tmp_path, source) == [(2, "absent_one", "absent_one"),
                                                     (3, "absent_alias", "absent-distribution")]
    lab = Lab(id="w", title="w", script=tmp_path / "w.ipynb", images="", downloads="", notebook="", page="",
              inputs=(), line=0)
    (tmp_path / "requirements.txt").write_text("absent-one\n", encoding="utf-8")
    problems = needs.missing_packages(tmp_path, [(lab, (Cell("a", "x = 1", 3, number=1),
                                                        Cell("b", source, 10, number=2)))])
    assert [str(p) for p in problems] == [
        "w.ipynb:11: code cell 2, line 2: imports absent_one, which is not installed here",
        "w.ipynb:12: code cell 2, line 3: imports absent_alias, which is not installed here",
        "requirements.txt: install what the labs import: pip install absent_one absent-distribution; and add to "
        "requirements.txt, for Cloudflare Pages to install them too, the lines: absent-distribution"]
