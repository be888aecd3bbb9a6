"""Jinja as the build sets it up (sitegen/render/converters.py)."""
from __future__ import annotations

import jinja2
import pytest

from sitegen.render.converters import template_environment, template_line


def _snapshot(folder):
    """The build's snapshot of a templates/ folder: each template's SHA-256 by its source path."""
    import hashlib
    return {f"templates/{p.relative_to(folder).as_posix()}": hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.rglob("*") if p.is_file()}


def test_a_template_error_is_placed_at_its_template_and_line(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates/page.html").write_text("<p>\n{{ missing.name }}\n</p>\n", encoding="utf-8")
    env = template_environment(tmp_path, None, _snapshot(tmp_path / "templates"))
    with pytest.raises(jinja2.UndefinedError) as failed:
        env.get_template("page.html").render()
    assert template_line(failed.value, "page.html") == ("page.html", 2)


def test_a_template_that_is_not_utf8_is_named_with_its_line(tmp_path):
    from sitegen.core.errors import BuildError
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates/bad.html").write_bytes("<p>好</p>\n".encode() + b"\xff\n")
    with pytest.raises(BuildError) as failed:
        template_environment(tmp_path, None, _snapshot(tmp_path / "templates")).get_template("bad.html")
    assert str(failed.value.problems[0]).startswith("templates/bad.html:2: not UTF-8")


def test_a_template_edit_that_keeps_its_time_is_seen_by_the_next_build_of_the_same_process(tmp_path):
    """serve builds in one process: Jinja's own loader trusts the file's time (cp -p, rsync -a)."""
    import os
    folder = tmp_path / "templates"
    folder.mkdir()
    page = folder / "page.html"
    page.write_text("<p>旧</p>\n", encoding="utf-8")
    first = template_environment(tmp_path, None, _snapshot(folder)).get_template("page.html").render()
    stamp = page.stat()
    page.write_text("<p>新</p>\n", encoding="utf-8")
    os.utime(page, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    again = template_environment(tmp_path, None, _snapshot(folder)).get_template("page.html").render()
    assert (first, again) == ("<p>旧</p>\n", "<p>新</p>\n")


def test_a_template_edited_after_the_build_s_snapshot_is_never_rendered(tmp_path):
    from sitegen.core.errors import SourcesChanged
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "page.html").write_text("<p>快照里的</p>\n", encoding="utf-8")
    snapshot = _snapshot(folder)
    (folder / "page.html").write_text("<p>之后改的</p>\n", encoding="utf-8")
    with pytest.raises(SourcesChanged) as changed:
        template_environment(tmp_path, None, snapshot).get_template("page.html")
    assert str(changed.value.problems[0]).startswith("templates/page.html: changed while the build")
