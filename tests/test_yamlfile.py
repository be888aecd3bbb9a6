"""YAML with lines: every mapping knows its keys' lines, from the parser or from the memo alike."""
import subprocess
import sys

import pytest

from sitegen.core.errors import BuildError
from sitegen.core.memo import Memo
from sitegen.core.yamlfile import load_yaml
from support import REPO

TEXT = "site:\n  title: 课程\n  labs:\n    - id: a\n      title: 甲\n"


def lines(data):
    return (data.line, data.key_lines, data["site"].line, data["site"].key_lines,
            data["site"]["labs"][0].key_lines)


def test_lines_are_the_same_parsed_or_remembered(tmp_path):
    parsed = load_yaml(TEXT, "site.yaml")
    assert lines(parsed) == (1, {"site": 1}, 2, {"title": 2, "labs": 3}, {"id": 4, "title": 5})
    memo = Memo(tmp_path / "memo")
    first, again = load_yaml(TEXT, "site.yaml", memo=memo), load_yaml(TEXT, "site.yaml", memo=memo)
    assert first == again == parsed and lines(again) == lines(parsed)


def test_a_remembered_text_is_not_parsed_so_pyyaml_is_not_imported(tmp_path):
    load_yaml(TEXT, "site.yaml", memo=Memo(tmp_path / "memo"))
    code = ("import sys; from pathlib import Path; from sitegen.core.memo import Memo; from sitegen.core.yamlfile import load_yaml\n"
            f"data = load_yaml({TEXT!r}, 'site.yaml', memo=Memo(Path({str(tmp_path / 'memo')!r})))\n"
            "print(data['site']['title'], 'yaml' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.stdout.split() == ["课程", "False"], result.stderr


@pytest.mark.parametrize("text, line, message", [
    ("a: 1\na: 2\n", 2, "duplicate key 'a'"),
    ("a: [" * 101 + "]" * 101 + "\n", 1, "nested more than 100 levels deep"),
    ("a: &x [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("xbcde", "bcdef")), 2, "stand for more than"),
])
def test_what_no_site_file_needs_is_refused_at_its_line(text, line, message):
    with pytest.raises(BuildError) as error:
        load_yaml(text, "site.yaml")
    problem = error.value.problems[0]
    assert (problem.path, problem.line) == ("site.yaml", line) and message in problem.message, problem
