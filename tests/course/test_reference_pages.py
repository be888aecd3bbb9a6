"""The illustrated references: their own computations, reading LAB 09's published results."""
from __future__ import annotations

import pytest

import json
import math
import re

from helpers import Elements

from support import computed, copy_project, run_build


def results(site, lab):
    return json.loads((site / f"course/materials/{lab}/results.json").read_text(encoding="utf-8"))


def test_patches_page_uses_the_labs_image_and_matches_its_input(site, site_results):
    ref = results(site, "patches-to-tokens")
    assert ref["image"] == site_results["image"]
    assert ref["patches"] == site_results["patches"]
    assert all(math.isclose(a, b, abs_tol=1e-15) for row_a, row_b in zip(ref["X"], site_results["trace"]["input"])
               for a, b in zip(row_a, row_b))
    # token 3, slot 3 is image[3,3]: the pixel LAB 09 changes
    assert ref["pixel_of"][3][3] == [3, 3]


def test_worked_example_is_its_own_computation(site):
    ref = results(site, "attention-worked-example")
    for i, row in enumerate(ref["attention"]):
        exps = [math.exp(ref["q"][i] * k - max(ref["q"][i] * kk for kk in ref["k"])) for k in ref["k"]]
        expected = [e / sum(exps) for e in exps]
        assert all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(row, expected))
        assert math.isclose(ref["read"][i], sum(a * v for a, v in zip(row, ref["v"])), rel_tol=1e-12)


def test_reference_pages_show_figures_tables_and_computed_values(site):
    for path, figures, lab in (("course/reference/frontier-patches-to-tokens.html", 2, "patches-to-tokens"),
                               ("course/reference/frontier-attention-worked-example.html", 2,
                                "attention-worked-example")):
        html = (site / path).read_text(encoding="utf-8")
        page = Elements(html)
        images = [attrs for tag, attrs, _ in page.elements if tag == "img"]
        assert len(images) == figures and all(len(i["alt"]) > 20 for i in images), path
        assert page.find("table", **{"class": "tensor"}), path
        assert "{{" not in html and ":::" not in html
        assert f"materials/{lab}/results.json" in html
    ref = results(site, "attention-worked-example")
    html = (site / "course/reference/frontier-attention-worked-example.html").read_text(encoding="utf-8")
    a, v = ref["attention"][0], ref["v"]
    assert f"{a[0]:.4f}×{v[0]:.1f} + {a[1]:.4f}×{v[1]:.1f} + {a[2]:.4f}×{v[2]:.1f} = {ref['read'][0]:.4f}" in html
    stages = re.search(r'data-path="full_layer.norms">.*?</thead>', html, flags=re.S).group(0)
    assert [s for s in ref["full_layer"]["stages"] if f">{s}</th>" in stages] == ref["full_layer"]["stages"]


@pytest.mark.slow
def test_only_what_changed_is_recomputed(tmp_path):
    root = copy_project(tmp_path / "project")
    out, cache = tmp_path / "dist", tmp_path / "cache"
    assert computed(run_build(root, out, cache)) == {"lab09", "patches-to-tokens", "attention-worked-example"}
    assert computed(run_build(root, out, cache)) == set()
    guide = root / "content/course/guide.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\n多一句话。\n", encoding="utf-8")
    assert computed(run_build(root, out, cache)) == set()
    script = root / "compute/ref_patches_to_tokens.py"
    script.write_text(script.read_text(encoding="utf-8") + "\n# a comment changes the key\n", encoding="utf-8")
    assert computed(run_build(root, out, cache)) == {"patches-to-tokens"}
    lab = root / "compute/lab09_vision_attention.py"
    lab.write_text(lab.read_text(encoding="utf-8") + "\n# and here\n", encoding="utf-8")
    # the references read LAB 09's results, which are the same bytes: they are reused (early cut-off)
    assert computed(run_build(root, out, cache)) == {"lab09"}
    lab.write_text(lab.read_text(encoding="utf-8").replace("SEED = 20260918", "SEED = 20260919"), encoding="utf-8")
    # other results: they follow them
    assert computed(run_build(root, out, cache)) == {"lab09", "patches-to-tokens", "attention-worked-example"}


def test_inputs_must_name_another_lab(tmp_path):
    root = copy_project(tmp_path / "project")      # fails before any lab runs
    config = root / "site.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("inputs: [lab09]", "inputs: [lab9]", 1), encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1
    assert "lab patches-to-tokens: inputs names 'lab9', which is not another lab" in result.stderr
    assert re.search(r"error: site\.yaml:\d+: ", result.stderr)


@pytest.mark.slow
def test_under_serve_a_seed_edit_resumes_lab09_and_its_readers_and_matches_a_clean_build(tmp_path, monkeypatch):
    """Lab 09's seed, set in its first cell, changes what both references read: Lab 09 runs from its
    first cell, and each reference from the checkpoint before the cell that reads it; an edit to
    Lab 09's last cell resumes it there. Each time, the site is a clean build's, byte for byte."""
    from support import EPOCH, tree_bytes
    from sitegen.commands.pipeline import build
    from sitegen.labs.resume import KeptLabs
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root = copy_project(tmp_path / "project")
    kept = KeptLabs(tmp_path / "cache")

    def serve_build():
        report = build(root, tmp_path / "dist", cache=tmp_path / "cache", kept=kept)
        return tree_bytes(tmp_path / "dist"), report

    def clean(name):
        build(root, tmp_path / name, cache=tmp_path / f"{name}-cache")
        return tree_bytes(tmp_path / name)
    try:
        serve_build()
        lab = root / "compute/lab09_vision_attention.py"
        lab.write_text(lab.read_text(encoding="utf-8") + "\nprint('one more line')\n", encoding="utf-8")
        output, report = serve_build()
        last = len(kept.runs["lab09"].cells) - 1
        assert report.computed == ("lab09",) and report.resumed == (("lab09", last),)
        assert output == clean("clean")
        lab.write_text(lab.read_text(encoding="utf-8").replace("SEED = 20260918", "SEED = 20260919"), encoding="utf-8")
        output, report = serve_build()
        assert set(report.computed) == {"lab09", "patches-to-tokens", "attention-worked-example"}
        # patches-to-tokens reads them in its first cell; the worked example in its fourth (full-layer)
        assert dict(report.resumed) == {"attention-worked-example": 3}
        assert output == clean("clean-seed")
    finally:
        kept.close()
