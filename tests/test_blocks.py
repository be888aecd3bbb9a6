"""The block kinds are one registry: a new `::: kind` is one entry in blocks.KINDS and one partial."""
from __future__ import annotations

import pytest

from support import edit, tiny_site

from sitegen import blocks
from sitegen.errors import BuildError
from sitegen.prose import format_value, lookup


def _check_value(checking, page, block, art):
    try:
        lookup(art.results, block.args[0])
    except LookupError as exc:
        checking.add(page, block, f"value {block.args[0]}: {exc}")


def _render_value(r, page, block, art):
    value = format_value(lookup(art.results, block.args[0]))
    return r.render_template("partials/value.html", label=block.options.get("label", ""), value=value)


@pytest.fixture()
def with_value_kind(monkeypatch):
    monkeypatch.setitem(blocks.KINDS, "value", blocks.Kind(1, {"label": None}, _check_value, _render_value))


def test_a_new_kind_is_one_entry_and_one_partial(tmp_path, with_value_kind):
    from sitegen.pipeline import build
    root = tiny_site(tmp_path / "site")
    (root / "templates/partials/value.html").write_text(
        '<p class="value">{{ label }} <strong>{{ value }}</strong></p>\n', encoding="utf-8")
    edit(root / "content/index.md", "::: downloads", '::: value total label="总和"\n::: downloads')
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True)
    assert '<p class="value">总和 <strong>3.7500</strong></p>' in (tmp_path / "dist/index.html").read_text(encoding="utf-8")


def test_a_kind_checks_its_names_options_and_values(tmp_path, with_value_kind):
    from sitegen.pipeline import build
    root = tiny_site(tmp_path / "site")
    edit(root / "content/index.md", "::: downloads",
         "::: value nothing\n::: value total colour=red\n::: cell setup output=folded\n::: downloads")
    lines = (root / "content/index.md").read_text(encoding="utf-8").splitlines()
    colour, folded = lines.index("::: value total colour=red") + 1, lines.index("::: cell setup output=folded") + 1
    with pytest.raises(BuildError) as caught:       # found while the page is read: before any lab runs
        build(root, tmp_path / "dist", cache=tmp_path / "cache")
    assert [str(p) for p in caught.value.problems] == [
        f"content/index.md:{colour}: '::: value' has no option 'colour' (expected: label)",
        f"content/index.md:{folded}: cell option output= must be 'shown' or 'collapsed'"]


def widget_site(tmp_path, needs="[x, total]"):
    root = tiny_site(tmp_path / "site")
    (root / "static/sum.js").write_text('for (const s of document.querySelectorAll(".widget.sum")) s.hidden = false;\n',
                                        encoding="utf-8")
    edit(root / "site.yaml", "    page: index.md\n", f"    page: index.md\n    widget:\n      script: sum.js\n"
                                                       f"      needs: {needs}\n")
    edit(root / "content/index.md", "::: downloads", "::: widget tiny view=small\n::: downloads")
    return root


def test_a_lab_brings_its_own_widget(tmp_path):
    from sitegen.pipeline import build
    root = widget_site(tmp_path)
    build(root, tmp_path / "dist", cache=tmp_path / "cache", strict=True)
    page = (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    assert ('<section class="widget sum" id="sum-tiny-small" data-results="materials/results.json" '
            'data-view="small" hidden data-search-ignore></section>') in page
    assert '<script type="module" src="assets/sum.' in page


def test_a_widget_s_mistakes_are_named(tmp_path):
    from sitegen.pipeline import build
    root = widget_site(tmp_path, needs="[x, weights]")
    with pytest.raises(BuildError) as caught:
        build(root, tmp_path / "dist", cache=tmp_path / "cache")
    assert "widget: lab tiny's results.json lacks weights, which sum.js needs" in str(caught.value)
    edit(root / "site.yaml", "      script: sum.js", "      script: missing.js")
    with pytest.raises(BuildError, match=r"site.yaml:\d+: labs\[0\].widget.script: no such file static/missing.js"):
        build(root, tmp_path / "dist", cache=tmp_path / "cache")
    edit(root / "site.yaml", "    widget:\n      script: missing.js\n      needs: [x, weights]\n", "")
    with pytest.raises(BuildError, match="widget: lab tiny declares none: add `widget:"):
        build(root, tmp_path / "dist", cache=tmp_path / "cache")
