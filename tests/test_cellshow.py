"""What a notebook's code cell shows (sitegen/pages/cellshow.py): Jupyter Book's tags and Quarto's `#|`
options as this site's `::: cell` options, without a build."""
from __future__ import annotations

import pytest

from sitegen.pages.cellshow import cell_options, cell_visibility


def test_a_cell_s_quarto_options_are_its_leading_comment_lines_only():
    assert cell_options("#| echo: false\n#| label: 'fig-a'\nx = 1\n#| not: an option") == (
        [("echo", "false"), ("label", "fig-a")], "x = 1\n#| not: an option")


@pytest.mark.parametrize("tags, text, shown", [
    (("hide-input", "hide-output"), "x", {"code": "folded", "output": "collapsed"}),
    (("remove-input", "remove-output"), "x", None),                  # nothing to show: no block
    ((), "#| echo: false\n#| output: false\nx", None),
    (("thebe-init", "raises-exception"), "x", {}),                  # tags of other meaning: shown
    ((), "#| echo: true\n#| code-fold: show\nx", {}),
])
def test_what_a_cell_shows_follows_its_tags_and_options(tags, text, shown):
    notes: list = []
    assert cell_visibility(tags, text, 7, notes) == shown and not notes


def test_a_cell_option_this_site_does_not_support_is_named():
    notes: list = []
    assert cell_visibility((), "#| eval: false\nx", 7, notes) == {}
    assert notes == [(7, "the cell option #| eval: false is not supported here: left out (supported: echo, output, "
                         "include, code-fold)")]
