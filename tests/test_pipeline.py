"""The build as a whole (sitegen/commands/pipeline.py): what it publishes is one state of the sources.
An author who saves a file while a build reads it (a template, a page, a module a lab imports)
gets either the old text or the new one, never a mix, and the next build is right."""
from __future__ import annotations

import pytest

from support import EPOCH, edit, own_copy, tiny_site, tree_bytes

pytestmark = pytest.mark.slow       # builds in this process, running a lab


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    return tiny_site(tmp_path / "site")


def _clean_build_equals(root, out, tmp_path, name):
    from sitegen.commands.pipeline import build
    build(root, tmp_path / name, cache=tmp_path / f"{name}-cache")
    assert tree_bytes(out) == tree_bytes(tmp_path / name)


def _once(action):
    """A callable that runs `action` the first time only."""
    done = []
    return lambda: done or (done.append(1), action())


def test_a_template_saved_while_pages_render_and_then_undone_leaves_no_trace(site, tmp_path, monkeypatch):
    from sitegen.render import render
    from sitegen.commands.pipeline import build
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(root=site, out=out, cache=cache)
    template = own_copy(site, "templates/page.html")
    original = template.read_text(encoding="utf-8")
    edit(site / "content/index.md", "总和是", "合计是")           # so that the pages render anew
    real = render.render_site
    save = _once(lambda: template.write_text(original.replace("</main>", "<p>半途保存</p></main>", 1),
                                             encoding="utf-8"))
    monkeypatch.setattr(render, "render_site", lambda *a, **k: (save(), real(*a, **k))[1])
    build(site, out, cache=cache)
    shown = (out / "index.html").read_text(encoding="utf-8")
    assert "合计是" in shown                              # a whole state: the page's new text with a template
    monkeypatch.setattr(render, "render_site", real)
    template.write_text(original, encoding="utf-8")       # undone
    build(site, out, cache=cache)
    assert "半途保存" not in (out / "index.html").read_text(encoding="utf-8")
    _clean_build_equals(site, out, tmp_path, "clean")


def test_a_module_saved_while_the_lab_runs_and_then_undone_is_never_published(site, tmp_path, monkeypatch):
    """The lab reads FACTOR = 99 though the build's snapshot held 2: what it made is not kept, and the
    build runs again on what is there."""
    from sitegen.labs.labhost import LabHost
    from sitegen.commands.pipeline import build
    helper = site / "compute/helper.py"
    helper.write_text("FACTOR = 2\n", encoding="utf-8")
    edit(site / "compute/tiny.py", "print('x =', x)\n", "from helper import FACTOR\nx = x * FACTOR\nprint('x =', x)\n")
    real_run, real_finished, calls = LabHost.run, LabHost.finished, []

    def run(self, *args, **kwargs):                     # saved as the lab starts
        calls.append(1)
        if len(calls) == 1:
            helper.write_text("FACTOR = 99\n", encoding="utf-8")
        return real_run(self, *args, **kwargs)

    def finished(self, timeout=None):                   # and undone before it is stored
        done = real_finished(self, timeout)
        if done is not None and len(calls) == 1:
            helper.write_text("FACTOR = 2\n", encoding="utf-8")
        return done
    monkeypatch.setattr(LabHost, "run", run)
    monkeypatch.setattr(LabHost, "finished", finished)
    out, cache = tmp_path / "dist", tmp_path / "cache"
    report = build(site, out, cache=cache)
    assert len(calls) >= 2 and report.computed == ("tiny",)          # run again, on FACTOR = 2
    import json
    assert json.loads((out / "materials/results.json").read_text(encoding="utf-8"))["total"] == 3.75 * 2
    monkeypatch.setattr(LabHost, "run", real_run)
    monkeypatch.setattr(LabHost, "finished", real_finished)
    again = build(site, out, cache=cache)
    assert again.computed == () and again.rendered == ()
    _clean_build_equals(site, out, tmp_path, "clean")


def test_sources_that_keep_changing_fail_the_build_naming_them_and_leave_the_output(site, tmp_path, monkeypatch):
    from sitegen.render import render
    from sitegen.core.errors import SourcesChanged
    from sitegen.commands.pipeline import build
    out, cache = tmp_path / "dist", tmp_path / "cache"
    build(site, out, cache=cache)
    before = tree_bytes(out)
    template, real, n = own_copy(site, "templates/page.html"), render.render_site, []

    def restless(*args, **kwargs):
        n.append(1)
        template.write_text(template.read_text(encoding="utf-8") + f"{{# 又改了 {len(n)} #}}\n", encoding="utf-8")
        return real(*args, **kwargs)
    edit(site / "content/index.md", "总和是", "合计是")
    monkeypatch.setattr(render, "render_site", restless)
    from sitegen.render import converters
    converters._environment.cache_clear()                # as a fresh process: no template compiled yet
    with pytest.raises(SourcesChanged) as failed:
        build(site, out, cache=cache)
    assert "templates/page.html: changed while the build was reading it" in failed.value.report()
    assert len(n) == 3                                    # tried three times
    assert tree_bytes(out) == before


def test_info_outputs_lists_what_a_build_of_this_course_must_write(tmp_path):
    import subprocess
    import sys
    from support import REPO, run_build, tiny_site
    root = tiny_site(tmp_path / "site")
    (root / "content/notes.md").write_text("---\ntitle: 笔记\nurl: notes/here\n---\n正文。\n", encoding="utf-8")
    with open(root / "site.yaml", "a", encoding="utf-8") as config:
        config.write("nav:\n  - title: 笔记\n    page: notes.md\n")
    said = subprocess.run([sys.executable, str(REPO / "build.py"), "info", "outputs", "--root", str(root)],
                          capture_output=True, text=True, timeout=60)
    assert said.returncode == 0, said.stderr
    promised = said.stdout.split()
    assert promised == ["index.html", "404.html", "_headers", "search.json", "notes/here.html",
                        "materials/tiny.ipynb"]
    assert run_build(root, tmp_path / "dist", tmp_path / "cache").returncode == 0
    assert all((tmp_path / "dist" / rel).stat().st_size > 0 for rel in promised)


def test_what_the_last_build_remembered_that_leads_to_an_error_is_dropped_said_and_made_again(site, tmp_path,
                                                                                              monkeypatch):
    """An inconsistent remembered entry (here: a lab plan that lacks a lab, as one did when a notebook
    gained its first code cell) must not fail every build after it: it is dropped, and said."""
    from sitegen.commands.pipeline import build
    from sitegen.core import stored
    from sitegen.labs import labplan
    out, cache = tmp_path / "dist", tmp_path / "cache"
    template = own_copy(site, "templates/page.html")

    def full_build(word):                       # a template edit: a full build, its labs from the plan
        edit(template, "</main>", f"<p>{word}</p></main>")
        return build(root=site, out=out, cache=cache)
    build(root=site, out=out, cache=cache)
    monkeypatch.setattr(stored, "SETTLED_NS", -10**9)      # (the lab's entry, written just now, has settled)
    assert full_build("一").warnings == ()                  # which remembers the labs' plan
    real = labplan.recall
    monkeypatch.setattr(labplan, "recall", lambda *a: None if real(*a) is None else {})   # a plan that lacks a lab
    report = full_build("二")
    assert [w.message.split(";")[0] for w in report.warnings] == [
        "what the last build remembered led to an error (KeyError: 'tiny')"]
    assert "bug in the generator" in str(report.warnings[0])
    _clean_build_equals(site, out, tmp_path, "clean")
