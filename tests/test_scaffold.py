"""python build.py new lab / new page: starting files that build at once, nothing overwritten."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support import REPO, run_build, tiny_site


def new(root, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "build.py"), "new", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=60)


def test_a_new_lab_and_a_new_page_build_at_once(tmp_path):
    root = tiny_site(tmp_path / "site")
    made = new(root, "lab", "week-3", "--page", "labs/week3")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("wrote compute/week_3.py, content/labs/week3.md, site.yaml; list the page under nav:")
    assert new(root, "page", "notes/intro").returncode == 0
    assert new(root, "page", "notes/404").returncode == 0          # its title is the text "404", not a number
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    assert "week-3 computed" in result.stdout
    page = (tmp_path / "dist/labs/week3.html").read_text(encoding="utf-8")
    results = json.loads((tmp_path / "dist/week-3/materials/results.json").read_text(encoding="utf-8"))
    assert f"五个 y 的总和是 {results['total']:.4f}。" in page                        # a value of results.json
    assert 'src="../week-3/images/figure-01.png"' in page and "<table class=\"tensor\"" in page
    assert (tmp_path / "dist/week-3/materials/week-3.ipynb").is_file()
    assert (tmp_path / "dist/notes/intro.html").is_file() and (tmp_path / "dist/notes/404.html").is_file()


def test_the_lab_entry_goes_into_the_labs_list_wherever_it_is(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "site.yaml").write_text((root / "site.yaml").read_text(encoding="utf-8") + "\nsequence:\n  - index.md\n",
                                    encoding="utf-8")          # labs: is no longer the last key
    assert new(root, "lab", "second").returncode == 0
    from sitegen.project.config import load_config
    cfg = load_config(root)
    assert [lab.id for lab in cfg.labs] == ["tiny", "second"] and cfg.sequence == ("index.md",)


def test_a_site_without_labs_gets_its_first(tmp_path):
    root = tiny_site(tmp_path / "site")
    text = (root / "site.yaml").read_text(encoding="utf-8")
    (root / "site.yaml").write_text(text[: text.index("labs:")], encoding="utf-8")
    (root / "content/index.md").write_text("---\ntitle: 首页\n---\n首页。\n", encoding="utf-8")
    assert new(root, "lab", "first").returncode == 0
    assert run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict").returncode == 0


def test_nothing_is_overwritten_and_mistakes_are_named(tmp_path):
    root = tiny_site(tmp_path / "site")
    config = (root / "site.yaml").read_bytes()
    (root / "content/taken.md").write_text("mine", encoding="utf-8")
    taken = new(root, "lab", "taken")
    assert taken.returncode == 1 and "error: content/taken.md: exists already" in taken.stderr
    assert (root / "content/taken.md").read_text(encoding="utf-8") == "mine" and not (root / "compute/taken.py").exists()
    assert (root / "site.yaml").read_bytes() == config
    assert "error: site.yaml:7: lab 'tiny' exists already" in new(root, "lab", "tiny").stderr
    assert "a lab id is lowercase ASCII letters" in new(root, "lab", "Week_3").stderr
    assert "error: content/index.md: exists already" in new(root, "page", "index").stderr
    assert (root / "site.yaml").read_bytes() == config


def test_a_lab_is_added_to_an_empty_flow_list_of_labs_and_a_one_line_list_is_named():
    from sitegen.core.errors import BuildError
    from sitegen.commands.scaffold import _with_lab_entry
    import yaml
    entry = "  - id: new\n    title: 新\n"
    added = _with_lab_entry("site:\n  title: 课\nlabs: []   # none yet\nnav: []\n", entry)
    assert yaml.safe_load(added)["labs"] == [{"id": "new", "title": "新"}] and added.count("labs:") == 1
    import pytest
    with pytest.raises(BuildError) as failed:
        _with_lab_entry("site:\n  title: 课\nlabs: [{id: old}]\n", entry)
    assert str(failed.value.problems[0]).startswith("site.yaml:3: labs: is written on one line")


# -- new site --------------------------------------------------------------------------

def _new_site(tmp_path, *args):
    made = subprocess.run([sys.executable, str(REPO / "build.py"), "new", "site", str(tmp_path / "mine"), *args],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    return tmp_path / "mine", made


def test_a_new_site_builds_strictly_at_once_with_its_map_guide_lab_and_deploy_files(tmp_path):
    from helpers import Elements
    root, made = _new_site(tmp_path, "--title", "第三讲 · 从线性回归到梯度下降")
    assert made.stdout.startswith("wrote 15 files into ")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert files == [".ci/pages-build", ".github/workflows/site.yml", ".gitignore", ".python-version", "README.md",
                     "build.py", "compute/lab01.py", "content/404.md", "content/guide.md", "content/index.md",
                     "content/lab01.md", "requirements.txt", "site.yaml", "tools/package-lock.json",
                     "tools/package.json"]
    assert (root / ".ci/pages-build").stat().st_mode & 0o111                   # runnable
    assert "computed-course @ " in (root / "requirements.txt").read_text(encoding="utf-8")
    assert not (root / "sitegen").exists() and len((root / "build.py").read_text(encoding="utf-8").splitlines()) < 15
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# 第三讲 · 从线性回归到梯度下降\n\n```sh\npython3 -m venv .venv && .venv/bin/pip install -r "
                             "requirements.txt && .venv/bin/python build.py\nnpm ci --prefix tools --ignore-scripts && "
                             ".venv/bin/python build.py serve\n```\n")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    assert "lab01 computed" in result.stdout
    home = Elements((tmp_path / "dist/index.html").read_text(encoding="utf-8"))
    assert [a[1]["href"] for a in home.find("a", **{"class": "material-link"})] == ["guide", "lab01"]
    assert home.find("title")[0][2].startswith("第三讲 · 从线性回归到梯度下降")
    lab = (tmp_path / "dist/lab01.html").read_text(encoding="utf-8")
    results = json.loads((tmp_path / "dist/lab01/materials/results.json").read_text(encoding="utf-8"))
    assert f"五个 y 的总和是 {results['total']:.4f}。" in lab
    assert (tmp_path / "dist/404.html").is_file() and (tmp_path / "dist/guide.html").is_file()


def test_the_new_site_yaml_names_every_key_the_build_reads(tmp_path):
    """Every key of every mapping site.yaml has, found from the build's own answer to a key it does
    not know (so a key added to the build and not to the starter fails here)."""
    import re

    import yaml

    from sitegen.core.errors import BuildError
    from sitegen.project.config import load_config
    root, _ = _new_site(tmp_path)
    text = (root / "site.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    for mapping in (data, data["site"], data["nav"][0], data["labs"][0]):
        mapping["zzz"] = 1
    data["labs"][0]["widget"], data["vocabulary"] = {"zzz": 1}, {"zzz": 1}
    (root / "site.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(BuildError) as failed:
        load_config(root)
    expected = [m.group(1) for p in failed.value.problems if (m := re.search(r"expected one of: (.*)\)$", p.message))]
    keys = {key for found in expected for key in found.split(", ")}
    assert len(expected) == 6 and {"base_url", "figure_fonts", "inputs", "display", "needs", "axes", "sequence"} <= keys
    # (a key, then a colon or a column's spaces: `needs no entry` in a sentence is not `needs` documented)
    missing = [key for key in sorted(keys) if not re.search(rf"^[ #]*(- )?{key}(:|  )", text, re.M)]
    assert missing == []


def test_a_new_site_takes_any_title(tmp_path):
    root, _ = _new_site(tmp_path, "--title", '第四讲: "梯度" # 与 {{ 步长 }}')
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    assert '<title>第四讲: &#34;梯度&#34; # 与 {{ 步长 }}' in (tmp_path / "dist/index.html").read_text(encoding="utf-8")


def test_a_new_site_is_never_written_over_files_and_leaves_nothing_when_it_fails(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full/notes.txt").write_text("我的笔记", encoding="utf-8")
    refused = subprocess.run([sys.executable, str(REPO / "build.py"), "new", "site", str(tmp_path / "full")],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "is not an empty folder" in refused.stderr and "Traceback" not in refused.stderr
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["notes.txt"]


def test_the_new_site_names_the_generator_as_it_was_installed(tmp_path, monkeypatch):
    from importlib import metadata

    from sitegen.commands.scaffold import generator_requirement

    class Installed:
        version = "0.1.0"

        def __init__(self, direct):
            self.direct = direct

        def read_text(self, name):
            return json.dumps(self.direct) if name == "direct_url.json" and self.direct else None
    cases = [({"url": "https://github.com/o/sitegen", "vcs_info": {"vcs": "git", "commit_id": "ab12"}},
              "computed-course @ git+https://github.com/o/sitegen@ab12", 0),
             ({"url": "file:///home/t/sitegen", "dir_info": {}}, "computed-course @ file:///home/t/sitegen", 1),
             ({"url": "https://example.org/computed_course-0.1.0.tar.gz", "archive_info": {}},
              "computed-course @ https://example.org/computed_course-0.1.0.tar.gz", 0),
             (None, "computed-course==0.1.0", 0)]
    for direct, line, notes in cases:
        monkeypatch.setattr(metadata, "distribution", lambda name, direct=direct: Installed(direct))
        named, said = generator_requirement(tmp_path)        # (tmp_path: no checkout there)
        assert named == line and len(said) == notes, (named, said)
    git = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    requirement, _ = generator_requirement(REPO)             # a checkout: its origin at its commit, else its folder
    assert requirement in (f"computed-course @ {REPO.as_uri()}",) or requirement.endswith(f"@{git.stdout.strip()}")


def test_a_new_site_that_fails_leaves_no_file_nor_folder_behind(tmp_path, monkeypatch):
    from sitegen.commands import scaffold
    from sitegen.core.errors import BuildError, Problem

    def refused(root):
        raise BuildError(Problem("site.yaml", 1, "refused, to see what is left"))
    monkeypatch.setattr(scaffold, "load_config", refused)
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "new/deeper", tmp_path / "empty"):
        with pytest.raises(BuildError):
            scaffold.new_site(folder)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["empty"]


def test_a_course_starts_in_the_folder_that_holds_its_virtualenv_and_nowhere_else_with_files(tmp_path):
    """README's way: the folder, its .venv (and git) first, then `new site .` there."""
    from sitegen.commands.scaffold import new_site
    from sitegen.core.errors import BuildError
    (tmp_path / "course/.venv/bin").mkdir(parents=True)
    (tmp_path / "course/.git").mkdir()
    made, _ = new_site(tmp_path / "course")
    assert "site.yaml" in made and (tmp_path / "course/.venv/bin").is_dir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other/notes.txt").write_text("mine\n", encoding="utf-8")
    with pytest.raises(BuildError, match="is not an empty folder"):
        new_site(tmp_path / "other")
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("line", ["computed-course @ file:///home/t/generator", "-e ../generator", "./generator",
                                  "/home/t/generator", "computed-course @ file:../generator"])
def test_pages_build_refuses_a_requirement_that_names_a_path_on_this_machine(tmp_path, line):
    """It resolves here and never on Cloudflare Pages: the simulation fails as Pages would, saying why."""
    root, _ = _new_site(tmp_path)
    (root / "requirements.txt").write_text(f"{line}\nnumpy\n", encoding="utf-8")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit",
                                                 "-qm", "course"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    done = subprocess.run(["bash", ".ci/pages-build"], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "requirements.txt names a path on this machine" in done.stderr, done.stderr
    assert f"1:{line}" in done.stderr


def _every_key_on(root) -> str:
    """site.yaml with each key it offers commented out (`# key: value`, at any depth) taken in."""
    import re
    text = (root / "site.yaml").read_text(encoding="utf-8")
    on = re.sub(r"^( *)# ( *(?:- )?[a-z_]+:(?: |$))", r"\1\2", text, flags=re.M)
    (root / "site.yaml").write_text(on, encoding="utf-8")
    return on


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_every_command_works_on_a_new_course_with_every_key_its_site_yaml_offers(tmp_path, language):
    """A teacher takes in every key the scaffold's site.yaml shows commented (a bibliography, a style, a
    base_url, the vocabulary, lab_access...): every command still answers, none with a traceback."""
    import yaml
    root, _ = _new_site(tmp_path, "--language", language)
    on = _every_key_on(root)
    data = yaml.safe_load(on)
    assert {"bibliography", "citation_style", "base_url", "solutions"} <= data["site"].keys()
    assert {"vocabulary", "lab_access"} <= data.keys()
    (root / "content/references.bib").write_text("@book{Knuth:1984, author = {Knuth, Donald}, title = {The TeXbook},"
                                                 " publisher = {Addison-Wesley}, year = {1984}}\n", encoding="utf-8")
    (root / "datasets").mkdir()
    on = on.replace("[~/datasets]", f"[{root / 'datasets'}]")          # (a folder that exists here)
    (root / "site.yaml").write_text(on, encoding="utf-8")
    (root / "week.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": "a", "metadata": {}, "execution_count": None, "outputs": [],
         "source": "import json\njson.dump({'n': 6 * 7}, open('results.json', 'w'))\n"}]}), encoding="utf-8")

    def command(*args):
        done = subprocess.run([sys.executable, str(REPO / "build.py"), *args, "--root", str(root),
                               "--cache", str(tmp_path / "cache")], capture_output=True, text=True, timeout=300,
                              cwd=root)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
        return done.stdout
    assert command("info").startswith("project=")
    assert "index.html" in command("info", "outputs").split()
    command("new", "page", "notes")
    command("new", "lab", "second")
    command("import", str(root / "week.ipynb"), "--id", "week")
    (root / "content/notes.md").write_text("---\ntitle: Notes\n---\nAs in [@Knuth:1984].\n", encoding="utf-8")
    command("--strict", "--out", str(tmp_path / "dist"))
    assert 'id="ref-Knuth:1984"' in (tmp_path / "dist/notes.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_a_new_course_builds_and_deploys_the_students_site_and_previews_the_instructors(tmp_path, language):
    """The starter lab has an exercise with a solution. What the deploy workflow builds (`python build.py
    --strict`, site.yaml's `solutions: omitted`) publishes no byte of it; `--solutions` shows it, as the
    course's README says for a preview."""
    root, _ = _new_site(tmp_path, "--language", language)
    page = (root / "content/lab01.md").read_text(encoding="utf-8")
    solution = page.split("::: solution\n", 1)[1].split("\n", 1)[0]
    assert len(solution) > 20
    result = run_build(root, tmp_path / "student", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    from support import holding
    assert holding(tmp_path / "student", solution[:20]) == []
    assert "build.py serve --solutions" in (root / "README.md").read_text(encoding="utf-8")
    result = run_build(root, tmp_path / "instructor", tmp_path / "cache", "--strict", "--solutions")
    assert result.returncode == 0, result.stderr
    assert "lab01.html" in holding(tmp_path / "instructor", solution[:20])
