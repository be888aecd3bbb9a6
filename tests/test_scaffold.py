"""python build.py new lab / new page: starting files that build at once, nothing overwritten."""
from __future__ import annotations

import json
import subprocess
import sys

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
