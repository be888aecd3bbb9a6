"""Firefox and WebKit, as a student on another phone or computer reads the site: no number clipped at
360, 390 and 1280 px in light and dark, the explorer's encoder gives Python's numbers, search finds,
and (in Firefox, whose console is readable over BiDi) no script error."""
from __future__ import annotations

import numpy as np
import pytest
from engines import in_firefox, in_webkit
from probes import CLIPPED, ENCODER, SEARCH

PAGES = ["/course/lab11.html", "/course/reference/frontier-attention-worked-example.html",
         "/course/reference/frontier-patches-to-tokens.html"]
WIDTHS = [360, 390, 1280]
# What the frame is: its width, the tables and formulas the page holds, its colour scheme, its math font.
WHERE = """() => [innerWidth, document.querySelectorAll("table.tensor").length, document.querySelectorAll("math").length,
  matchMedia("(prefers-color-scheme: dark)").matches, [...document.fonts].filter((f) => f.status === "loaded").map((f) => f.family)]"""
RUNS = [[path, width, 900, CLIPPED] for path in PAGES for width in WIDTHS] + [
    ["/course/reference/frontier-attention-worked-example.html", 360, 900, WHERE],
    ["/course/lab11.html", 390, 844, SEARCH], ["/course/lab11.html", 1280, 900, ENCODER]]


@pytest.fixture(scope="module", params=[("firefox", "light"), ("firefox", "dark"), ("webkit", "light"),
                                        ("webkit", "dark")], ids=lambda p: "-".join(p))
def engine(request, framed):
    name, scheme = request.param
    run = {"firefox": in_firefox, "webkit": in_webkit}[name](framed, scheme, RUNS)
    return name, scheme, run["results"], run["errors"]


def test_no_number_or_formula_is_clipped(engine):
    name, scheme, results, errors = engine
    clipped = {f"{path} at {width}px": result for (path, width, _, script), result in zip(RUNS, results)
               if script == CLIPPED and result != []}
    assert clipped == {} and errors == [], (name, scheme)


def test_the_probe_sees_the_page_as_a_reader_would(engine):
    name, scheme, results, _ = engine
    width, tables, formulas, dark, fonts = results[len(RUNS) - 3]
    assert (width, dark) == (360, scheme == "dark") and tables >= 4 and formulas >= 10
    assert [f.strip("\"") for f in fonts] == ["Site Math"], (name, fonts)   # formulas drawn with the site's math font


def test_search_finds_the_lab_and_the_worked_example(engine):
    titles = engine[2][len(RUNS) - 2]
    assert "LAB 09 · 视觉 Attention 完整层" in titles and "参考图解：读回与完整层" in titles, titles


def test_the_explorer_s_encoder_gives_python_s_numbers(engine, site_results):
    traces = engine[2][len(RUNS) - 1]
    assert "error" not in traces, traces
    python = {"lab": site_results["trace"], **site_results["controls"]}
    for case, trace in traces.items():
        for name, values in trace.items():
            assert np.abs(np.array(values) - np.array(python[case][name])).max() <= 1e-12, (engine[:2], case, name)
