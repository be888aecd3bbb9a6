"""What a notebook's code cell shows (sitegen/pages/cellshow.py): Jupyter Book's tags and Quarto's `#|`
options as this site's `::: cell` options, without a build."""
from __future__ import annotations

import pytest

from sitegen.pages.cellshow import cell_visibility
from sitegen.project.cells import cell_options, runs


def test_a_cell_s_quarto_options_are_its_leading_comment_lines_only():
    assert cell_options("#| echo: false\n#| label: 'fig-a'\nx = 1\n#| not: an option") == (
        [("echo", "false"), ("label", "fig-a")], "x = 1\n#| not: an option")


@pytest.mark.parametrize("tags, text, shown", [
    (("hide-input", "hide-output"), "x", {"code": "folded", "output": "collapsed"}),
    (("remove-input", "remove-output"), "x", None),                  # nothing to show: no block
    ((), "#| echo: false\n#| output: false\nx", None),
    (("thebe-init", "raises-exception"), "x", {}),                  # tags of other meaning: shown
    ((), "#| echo: true\n#| code-fold: show\nx", {}),
    ((), "#| fig-align: center\nx", {}),                               # (a figure fills the column: no word)
])
def test_what_a_cell_shows_follows_its_tags_and_options(tags, text, shown):
    notes: list = []
    assert cell_visibility(tags, text, 7, notes) == shown and not notes


def test_a_cell_option_this_site_does_not_support_is_named():
    notes: list = []
    assert cell_visibility((), "#| filename: a.py\nx", 7, notes) == {}
    assert notes == [(7, "the cell option #| filename: a.py is not supported here: left out (supported: echo, output, "
                         "include, eval, error, code-fold)")]


@pytest.mark.parametrize("tags, text, ran", [
    ((), "x", True), ((), "#| eval: false\nx", False), (("skip-execution",), "x", False),
    ((), "#| eval: true\nx", True), ((), "x\n#| eval: false", True),      # (an option is a leading line)
])
def test_a_cell_runs_unless_its_tag_or_option_says_it_does_not(tags, text, ran):
    assert runs(text, tags) is ran
