"""CI reuses what it computed: a course's deploy workflow carries .cache/ from run to run with the CI's own
cache, so a push that edits a page runs no lab. Two runs of the workflow simulated: each a fresh checkout
at the same path (new times on every file), the second with the first's .cache/ restored."""
from __future__ import annotations

import shutil

import yaml

from support import REPO, run_build, tree_bytes


def test_a_second_ci_run_with_the_cache_restored_runs_no_lab_after_a_page_edit(tmp_path):
    from sitegen.commands.scaffold import SITE, new_site
    for workflow in (SITE / ".github/workflows/site.yml", REPO / ".github/workflows/site.yml"):
        jobs = yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"]
        steps = [step for job in jobs.values() for step in job["steps"]]
        cached = [step for step in steps if step.get("uses", "").startswith("actions/cache@")]
        builds = [step for step in steps if "build.py --strict" in step.get("run", "")]
        assert cached and len(cached) == len(builds), workflow           # one before each build
        assert all(step["with"]["path"] == ".cache" and step["with"]["restore-keys"] for step in cached)
    repo, checkout, saved = tmp_path / "repo", tmp_path / "checkout", tmp_path / "ci-cache"
    new_site(repo)

    def run() -> str:                       # a fresh checkout, the cache restored, the workflow's build
        shutil.rmtree(checkout, ignore_errors=True)
        shutil.copytree(repo, checkout)
        if saved.exists():
            shutil.copytree(saved, checkout / ".cache")
        done = run_build(checkout, checkout / "dist", checkout / ".cache", "--strict")
        assert done.returncode == 0, done.stderr
        shutil.rmtree(saved, ignore_errors=True)
        shutil.copytree(checkout / ".cache", saved)         # saved by the CI's cache at the job's end
        return done.stdout
    assert "lab01 computed" in run()
    guide = repo / "content/guide.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\n推送之后补的一句。\n", encoding="utf-8")
    second = run()
    assert "lab01 cached" in second and "computed" not in second, second
    clean = run_build(checkout, tmp_path / "clean", tmp_path / "clean-cache", "--strict")
    assert clean.returncode == 0 and tree_bytes(checkout / "dist") == tree_bytes(tmp_path / "clean")
