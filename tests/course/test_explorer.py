"""The in-browser encoder: the same numbers as the Python build, and an explorer a student can drive."""
from __future__ import annotations

import numpy as np
import pytest
from probes import ENCODER

TRACE = ["input", "ln1", "Q", "Q_heads", "K", "K_heads", "V", "V_heads", "scores", "attention", "read_values",
         "concat", "projected_attention", "residual1", "ln2", "mlp_hidden_pre", "mlp_hidden", "mlp_output", "output"]


@pytest.fixture(scope="module")
def lab_page(browser, served):
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/course/lab11")
    page.locator("#explorer-lab09").wait_for(state="visible")
    yield page
    context.close()


def test_js_encoder_matches_python_to_1e_12_on_the_lab_and_all_four_controls(lab_page, site, site_results):
    traces = lab_page.evaluate(ENCODER)
    python = {"lab": site_results["trace"], **site_results["controls"]}
    assert set(traces) == set(python) == {"lab", "one_pixel", "remove_position", "identical_tokens", "permutation"}
    for case, trace in traces.items():
        assert sorted(trace) == sorted(TRACE) == sorted(python[case]), case
        for name in TRACE:
            js, py = np.array(trace[name]), np.array(python[case][name])
            assert js.shape == py.shape, (case, name)
            assert np.abs(js - py).max() <= 1e-12, (case, name, np.abs(js - py).max())


def wait_hash(page, expected: str) -> None:
    """The explorer writes the URL a moment after the last edit (not on every keystroke)."""
    import time
    deadline = time.time() + 3
    while page.evaluate("() => location.hash") != expected:
        assert time.time() < deadline, page.evaluate("() => location.hash")
        time.sleep(0.05)


def change_table(page) -> dict[str, list[str]]:
    rows = page.locator("#explorer-lab09 .explorer-views table").nth(2).locator("tbody tr")
    return {row.locator("th").inner_text(): row.locator("td").all_inner_texts() for row in rows.all()}


def seed_one_pixel(seed_run) -> dict[str, list[str]]:
    one = seed_run["results"]["changes"]["one_pixel"]
    return {label: [f"{v:.4f}" for v in one[key]]
            for label, key in [("input", "input"), ("attention 分支", "projected_attention"), ("output", "output")]}


def test_a_student_changes_pixel_3_3_by_0_4_and_reads_the_seeds_numbers(lab_page, seed_run):
    lab_page.goto(lab_page.url.split("#")[0])
    lab_page.locator("#explorer-lab09").wait_for(state="visible")
    pixel = lab_page.locator("#explorer-lab09-p33")
    pixel.focus()
    for _ in range(4):                       # by keyboard: four steps of 0.1
        lab_page.keyboard.press("ArrowUp")
    assert pixel.input_value() == "0.4"
    assert change_table(lab_page) == seed_one_pixel(seed_run)
    wait_hash(lab_page, "#pixel=3,3,+0.4")
    assert lab_page.locator("#explorer-lab09 .explorer-status").inner_text() == "已改动：与原图比较"


def test_the_state_is_in_the_url_and_reset_restores_the_image(browser, served, seed_run):
    context = browser.new_context(viewport={"width": 375, "height": 900})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/course/lab11#pixel=3,3,+0.4")
    page.locator("#explorer-lab09").wait_for(state="visible")
    assert page.locator("#explorer-lab09-p33").input_value() == "0.4"
    assert change_table(page) == seed_one_pixel(seed_run)     # exactly what was sent
    page.get_by_label("加位置向量").uncheck()
    wait_hash(page, "#pixel=3,3,+0.4&position=0")
    page.get_by_role("button", name="复原").click()
    assert page.evaluate("() => location.hash") == ""
    assert page.locator("#explorer-lab09-p33").input_value() == "0"
    assert set(sum(change_table(page).values(), [])) == {"0.0000"}
    assert page.locator("#explorer-lab09 .explorer-status").inner_text() == "原图"
    context.close()


def test_identical_tokens_give_uniform_attention_in_the_explorer(lab_page):
    lab_page.goto(lab_page.url.split("#")[0] + "#position=0&identical=1")
    lab_page.locator("#explorer-lab09").wait_for(state="visible")
    heads = lab_page.locator("#explorer-lab09 .explorer-views table")
    for h in (0, 1):
        assert set(heads.nth(h).locator("td").all_inner_texts()) == {"0.2500"}


def test_without_javascript_the_page_is_the_full_static_lab(browser, served):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/course/lab11")
    assert page.locator("#explorer-lab09").is_hidden()
    assert page.locator("table.tensor").count() >= 15 and page.locator("figure img").count() == 3
    context.close()


def test_the_compact_explorer_on_the_worked_example(browser, served):
    context = browser.new_context(viewport={"width": 375, "height": 900})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{served}/course/reference/frontier-attention-worked-example")
    section = page.locator("#explorer-lab09-compact")
    section.wait_for(state="visible")
    assert section.locator("table").count() == 2           # the two heads only
    assert section.locator("td").first.inner_text() == "0.1624"   # head 0, query 0, key 0 of the lab
    context.close()
