"""The deploy workflow `new site` writes, its steps run in their order as GitHub's runner runs them
(sitegen/commands/workflow.py, which each course's .ci/pages-build runs after Pages' own builder)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support import REPO

from sitegen.commands.workflow import Failed, Runner, _outputs


def test_expressions_are_evaluated_as_the_runner_does_and_an_unknown_one_is_named(tmp_path):
    runner = Runner(tmp_path, branch="week-2")
    runner.outputs = {"site": {"project": "intro-ml"}}
    assert runner.text("--project-name=${{ steps.site.outputs.project }} --branch=${{ github.ref_name }}") == \
        "--project-name=intro-ml --branch=week-2"
    assert runner.evaluate("github.event_name == 'push'") is True
    assert runner.evaluate("github.ref_name == 'main' && 'production' || 'preview'") == "preview"
    assert runner.evaluate("!(github.event_name != 'push')") is True
    with pytest.raises(Failed, match=r"vars.TOKEN"):
        runner.text("${{ vars.TOKEN }}x${{ github.nothing }}")
    with pytest.raises(Failed, match="cannot evaluate"):
        runner.evaluate("hashFiles('x')")


def test_a_step_s_outputs_are_read_as_github_writes_them():
    assert _outputs("project=intro-ml\nbase_url=https://intro-ml.pages.dev\nnotes<<END\na\nb\nEND\n") == {
        "project": "intro-ml", "base_url": "https://intro-ml.pages.dev", "notes": "a\nb"}


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en"])
def test_the_new_site_s_workflow_runs_step_by_step_on_a_course_that_cites_and_deploys_no_solution(tmp_path, language):
    """Its job's steps in order (the build installs the course's requirements into a new .venv, as the
    workflow says): `info` answers on a course that names a bibliography, and what the deploy would
    upload holds no line of the starter exercise's solution."""
    from support import holding
    made = subprocess.run([sys.executable, str(REPO / "build.py"), "new", "site", str(tmp_path / "course"),
                           "--language", language], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "course"
    config = root / "site.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("  # bibliography: references.bib",
                                                                  "  bibliography: references.bib"), encoding="utf-8")
    (root / "content/references.bib").write_text("@book{Knuth:1984, author = {Knuth, Donald}, title = {The TeXbook}, "
                                                 "publisher = {Addison-Wesley}, year = {1984}}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "sitegen.commands.workflow"], cwd=root, capture_output=True,
                          text=True, timeout=900, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    said = done.stdout
    assert said.index("step 4 (Build") < said.index("step 5 (The Pages project") < said.index("would run `wrangler "
                                                                                               "pages deploy dist "
                                                                                               "--project-name=course "
                                                                                               "--branch=main`")
    solution = (root / "content/lab01.md").read_text(encoding="utf-8").split("::: solution\n", 1)[1].split("\n")[0]
    assert holding(root / "dist", solution[:20]) == []
