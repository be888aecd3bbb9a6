"""Lab 09's exercises and self-checks in a student's browser: right, wrong, at the tolerance's edge,
by keyboard alone; hints and solutions folded until opened."""
from __future__ import annotations

import pytest

LAB = "/course/lab11"


@pytest.fixture()
def lab_page(browser, served):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"http://127.0.0.1:{served}{LAB}")
    yield page
    assert errors == []
    context.close()


def answer(page, check: str, text: str) -> str:
    form = page.locator(f"#{check} form")
    form.locator("input").fill(text)
    form.locator("button").click()
    return form.locator(".check-result").inner_text()


def test_lab_09_has_its_self_checks_and_exercises(lab_page):
    prompts = lab_page.locator(".check label").all_inner_texts()
    assert len(prompts) == 5 and all(p.startswith("自测：") for p in prompts)
    assert lab_page.locator(".exercise").count() == 2
    assert lab_page.locator(".exercise details.hint").count() == 3
    assert lab_page.locator(".exercise details.solution").count() == 2
    assert lab_page.locator(".exercise details[open]").count() == 0       # folded until the student opens one


def test_a_right_a_wrong_and_an_unreadable_answer(lab_page, site_results):
    token3 = site_results["changes"]["one_pixel"]["output"][3]
    check = lab_page.locator(".check", has=lab_page.locator("label", has_text="token 3")).get_attribute("id")
    assert answer(lab_page, check, f"{token3:.4f}").startswith("对了")
    assert answer(lab_page, check, f"{token3 + 0.01:.4f}").startswith("还不对")
    assert lab_page.locator(f"#{check} input").get_attribute("aria-invalid") == "true"
    assert answer(lab_page, check, "０．５").startswith(("对了", "还不对"))     # full-width digits are read
    assert answer(lab_page, check, "about half").startswith("请输入一个数")


def test_the_tolerance_s_edge(lab_page, site_results):
    value = site_results["trace"]["read_values"][0][0][1]
    check = lab_page.locator(".check", has=lab_page.locator("label", has_text="通道 1")).get_attribute("id")
    tolerance = float(lab_page.locator(f"#{check} form").get_attribute("data-tolerance"))
    assert answer(lab_page, check, repr(value + 0.999 * tolerance)).startswith("对了")
    assert answer(lab_page, check, repr(value - 0.999 * tolerance)).startswith("对了")
    assert answer(lab_page, check, repr(value + 1.01 * tolerance)).startswith("还不对")
    assert answer(lab_page, check, repr(value - 1.01 * tolerance).replace("-", "\u2212")).startswith("还不对")


def test_keyboard_alone_answers_a_check_and_opens_a_hint_and_the_answer(lab_page, site_results):
    mean = site_results["worked"]["ln1_token0"]["mean"]
    first = lab_page.locator(".check").first
    first.locator("input").focus()
    lab_page.keyboard.type(f"{mean:.4f}")
    lab_page.keyboard.press("Enter")                                  # submits: no mouse
    assert first.locator(".check-result").inner_text().startswith("对了")
    lab_page.keyboard.press("Tab")                                    # the button
    lab_page.keyboard.press("Tab")                                    # the reveal
    lab_page.keyboard.press("Enter")
    assert first.locator("details.check-answer").get_attribute("open") == ""
    assert f"{mean:.4f}" in first.locator("details.check-answer").inner_text()
    hint = lab_page.locator(".exercise details.hint").first
    hint.locator("summary").focus()
    lab_page.keyboard.press("Enter")
    assert hint.get_attribute("open") == "" and hint.locator("p").first.is_visible()
