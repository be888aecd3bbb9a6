"""The lab's numbers: equal to the seed script's, and shown on the page as the seed showed them."""
from __future__ import annotations

import hashlib
import html
import re

from helpers import Elements, assert_close_tree, same_printout

SEED_KEYS = ["kind", "seed", "environment", "structure", "image", "patches", "position",
             "patch_projection", "weights", "trace", "changes", "checks"]


def test_results_keep_every_seed_key_and_add_provenance(site_results, seed_run):
    assert list(seed_run["results"]) == SEED_KEYS
    assert list(site_results)[: len(SEED_KEYS)] == SEED_KEYS
    assert site_results["checks"] == {**seed_run["results"]["checks"], "finite": True}
    provenance = site_results["provenance"]
    assert provenance["seed"] == 20260918
    assert {"python", "numpy", "matplotlib", "computed_at", "cache_key", "artifacts"} <= set(provenance)


def test_full_precision_matches_seed_script(site_results, seed_run):
    compared = assert_close_tree(site_results, seed_run["results"], tol=1e-12)
    assert compared > 400   # trace, weights, changes, inputs: every number, not a sample


def test_provenance_hashes_match_published_files(site, site_results):
    artifacts = site_results["provenance"]["artifacts"]
    assert set(artifacts) == {"01-patches.png", "02-readback.png", "02-readback.narrow.png",
                              "03-change-one-patch.png", "tensors.npz", "token-changes.csv"}
    published = {"tensors.npz": "course/materials/lab09/tensors.npz",
                 "token-changes.csv": "course/materials/lab09/token-changes.csv",
                 "01-patches.png": "course/images/LAB11-B/figure-01.png",
                 "02-readback.png": "course/images/LAB11-B/figure-02.png",
                 "02-readback.narrow.png": "course/images/LAB11-B/figure-02.narrow.png",
                 "03-change-one-patch.png": "course/images/LAB11-B/figure-03.png"}
    for name, path in published.items():
        assert hashlib.sha256((site / path).read_bytes()).hexdigest() == artifacts[name], name


def test_tensors_npz_and_csv_hold_full_precision(site, site_results):
    import csv
    import io

    import numpy as np
    with np.load(site / "course/materials/lab09/tensors.npz") as tensors:
        for name, value in site_results["trace"].items():
            assert np.array_equal(tensors[name], np.array(value)), name
        for name, value in site_results["weights"].items():
            assert np.array_equal(tensors[name], np.array(value)), name
    rows = list(csv.reader(io.StringIO((site / "course/materials/lab09/token-changes.csv").read_text())))
    assert rows[0] == ["token", "input_l2_change", "attention_branch_l2_change", "output_l2_change"]
    one_pixel = site_results["changes"]["one_pixel"]
    for i, row in enumerate(rows[1:]):
        assert [float(x) for x in row[1:]] == [one_pixel[k][i] for k in ("input", "projected_attention", "output")]


def page_outputs(site) -> list[str]:
    page = (site / "course/lab11.html").read_text(encoding="utf-8")
    blocks = re.findall(r'class="cell-output">.*?<pre[^>]*><code>(.*?)</code></pre>', page, flags=re.S)
    return [html.unescape(b) for b in blocks]


def test_every_saved_output_of_the_seed_appears_on_the_page_to_1e_12(site, seed_saved_outputs):
    outputs = page_outputs(site)
    assert len(outputs) == 6   # setup, encoder, tables, readback, controls, save
    for saved in seed_saved_outputs:
        assert any(same_printout(out, saved) for out in outputs), saved[:80]


def test_the_printout_comparison_tolerates_a_last_blas_digit_and_nothing_more():
    assert same_printout("x = 0.5561112107719018\n", "x = 0.5561112107719021")
    assert not same_printout("x = 0.5561112107819018", "x = 0.5561112107719021")
    assert not same_printout("x = 0.5562", "x = 0.5561")
    assert not same_printout("y = 0.5561", "x = 0.5561")


def test_saved_outputs_are_stamped_with_when_and_what(site, site_results):
    page = (site / "course/lab11.html").read_text(encoding="utf-8")
    provenance = site_results["provenance"]
    stamps = re.findall(r'>运行结果 · (\S+ \S+) UTC[<（]', page)        # one short line a cell (or its fold's summary)
    assert len(stamps) == 6
    when = provenance["computed_at"].replace("T", " ").rstrip("Z")
    assert set(stamps) == {when}
    footer = page.split("<footer", 1)[1]                                              # with what: once a page
    assert all(f"{name} {provenance[key]}" in footer for name, key in
               (("Python", "python"), ("NumPy", "numpy"), ("Matplotlib", "matplotlib")))


def test_a_cell_says_where_it_is_in_the_notebook_download_not_in_the_repository(site):
    page = (site / "course/lab11.html").read_text(encoding="utf-8")
    sources = re.findall(r'<p class="cell-source">(.*?)</p>', page)
    assert len(sources) == 6 and "compute/" not in page.split("<footer")[0]
    assert sources[0] == ('<a href="materials/Lecture02-LAB09.ipynb" download>Lecture02-LAB09.ipynb</a> '
                          "的第 1 个代码单元 · <code>setup</code>")


def test_code_shown_is_the_code_that_ran(site):
    from sitegen.project.cells import parse_cells
    from support import REPO
    script = REPO / "compute/lab09_vision_attention.py"
    cells = parse_cells(script.read_text(encoding="utf-8"), "lab")
    page = Elements((site / "course/lab11.html").read_text(encoding="utf-8"))
    shown = [text for tag, attrs, text in page.elements if tag == "div" and attrs.get("class") == "highlight"]
    for cell in cells:
        assert any(text.strip() == cell.source.strip() for text in shown), cell.name


def test_intermediate_tables_are_real_tables_at_four_decimals(site, site_results):
    page = Elements((site / "course/lab11.html").read_text(encoding="utf-8"))
    tables = page.find("table", **{"class": "tensor"})
    paths = [attrs["data-path"] for _, attrs, _ in tables]
    for name in ["ln1", "Q", "K", "V", "concat", "projected_attention", "residual1", "ln2",
                 "mlp_hidden_pre", "mlp_hidden", "mlp_output", "output"]:
        assert paths.count(f"trace.{name}") == 1, name
    assert paths.count("trace.scores") == 2 and paths.count("trace.attention") == 2
    rows = [text for tag, attrs, text in page.elements if tag == "tr"]
    # Every value of every 2-D table appears as a row "label v1 v2 ..." at 4 decimals.
    html_text = (site / "course/lab11.html").read_text(encoding="utf-8")
    for name in ["ln1", "output", "mlp_hidden"]:
        for i, row in enumerate(site_results["trace"][name]):
            cells = "".join(f"<td>{x:.4f}</td>" for x in row)
            assert f'<th scope="row">token {i}</th>{cells}' in html_text, (name, i)
    head0 = site_results["trace"]["attention"][0]
    for i, row in enumerate(head0):
        assert f'<th scope="row">query {i}</th>' + "".join(f"<td>{x:.4f}</td>" for x in row) in html_text
    assert any("key 0" in r and "key 3" in r for r in rows)
    captions = [text for tag, _, text in page.elements if tag == "caption"]
    assert all(c.strip() for c in captions) and len(captions) == len(tables)


def test_inline_values_come_from_results(site, site_results):
    page = (site / "course/lab11.html").read_text(encoding="utf-8")
    a = site_results["trace"]["attention"][0][0]
    v = site_results["trace"]["V_heads"][0]
    hand = " + ".join(f"{a[k]:.4f}×{v[k][0]:.4f}" for k in range(4))
    assert f"{hand} ≈ {site_results['trace']['read_values'][0][0][0]:.4f}" in page
    assert f"{site_results['changes']['one_pixel']['input'][3]:.4f}" in page
