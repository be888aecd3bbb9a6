"""Real teaching notebooks, none written here (tests/corpus/corpus.py), each built as a notebook page and
compared with what a real Jupyter kernel shows for it. Its own tier, of minutes: lay the corpus out of
the fetched repositories (python tests/corpus/corpus.py lay), then run pytest -m corpus."""
from __future__ import annotations

import sys

import pytest

from support import REPO

sys.path.insert(0, str(REPO / "tests" / "corpus"))
import corpus  # noqa: E402


@pytest.mark.slow
@pytest.mark.corpus
def test_real_notebooks_build_as_pages_that_show_what_a_kernel_shows(tmp_path):
    if not all(notebook.is_file() for _, notebook in corpus.laid()):
        if not corpus.available():
            pytest.skip(f"the corpus's repositories are not in {corpus.MIRROR}: fetch each repository "
                        "tests/corpus/corpus.py names, then: python tests/corpus/corpus.py lay")
        corpus.lay()
    rows = []
    for number, (tree, notebook) in enumerate(corpus.laid()):
        rows.append(corpus.measure(tree, notebook, tmp_path / str(number)))
    print(corpus.report(rows))
    share = {key: sum(r[key][0] for r in rows) / max(1, sum(r[key][1] for r in rows)) for key in ("text", "images", "rich")}
    # A notebook that runs without an error in Jupyter builds as it came; one whose cells fail under today's
    # libraries in Jupyter too builds once the teacher allows it to show its errors (allow_errors: true).
    assert [r["name"] for r in rows if not r["kernel_errors"] and not r["as_received"]] == []
    assert sum(r["allowed"] for r in rows) >= 0.9 * len(rows)
    assert share["rich"] >= 0.9 and share["images"] >= 0.9 and share["text"] >= 0.85, share


# What of CommonMark's and GitHub's spec examples the site reads otherwise, and why (tests/corpus/spec.py):
# GitHub's autolinks as markdown-it-py's plugin reads them (no ftp:, an address's user with an
# underscore); and, in a notebook's cell, Jupyter's own reading (\( \) is MathJax's math, a link to a
# page the site lacks is its text).
SPEC_ELSEWHERE = {"page": {675, 678}, "cell": {675, 678, 486, 497, 500}}


@pytest.mark.corpus
def test_commonmark_s_and_github_s_spec_examples_read_as_their_specs_say():
    sys.path.insert(0, str(REPO / "tests" / "corpus"))
    import spec
    if not (spec.LAID / "spec/examples.json").is_file():
        if not all((spec.MIRROR / repo.replace("/", "+")).is_dir() for repo, _, _ in spec.SPECS):
            pytest.skip(f"fetch the specs tests/corpus/spec.py names into {spec.MIRROR}, then: python tests/corpus/spec.py lay")
        spec.lay()
    import json
    found = json.loads((spec.LAID / "spec/examples.json").read_text(encoding="utf-8"))
    wrong = {"page": set(), "cell": set()}
    for number, example in enumerate(found, 1):
        if spec.SITE_SYNTAX.search(example["markdown"]) or (example["spec"].startswith("commonmark")
                                                             and "<a" not in example["html"]
                                                             and spec.BARE.search(example["markdown"])):
            continue
        for where, read in (("page", spec.as_page), ("cell", spec.as_cell)):
            if spec.normal(read(example["markdown"])) != spec.normal(example["html"]):
                wrong[where].add(number)
    assert wrong == SPEC_ELSEWHERE
