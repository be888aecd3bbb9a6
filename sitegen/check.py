"""Phase 4: verify every reference before anything is rendered.

Cells, tables, values, figures and links of every page are resolved against
the labs' artifacts and the set of files the site will contain; all problems
are reported together, each as `content/...md:LINE: ...`.
"""
from __future__ import annotations

from .compute import Artifacts
from .config import SiteConfig
from .content import (LINK, VALUE, Page, Unresolved, format_value, is_external, lookup,
                      resolve_target)
from .errors import Collector

AXES = {"token", "channel", "query", "key", "head", "hidden", "row", "column"}


def lab_outputs(artifacts: dict[str, Artifacts]) -> set[str]:
    """Every path the labs publish: notebooks, downloads, figures."""
    outputs: set[str] = set()
    for art in artifacts.values():
        outputs.add(art.lab.notebook)
        outputs.update(f"{art.lab.downloads}/{name}" for name in art.files if not name.endswith(".png"))
        outputs.update(art.figure_path(name) for name in art.figures)
    return outputs


def check_site(cfg: SiteConfig, pages: list[Page], artifacts: dict[str, Artifacts]) -> None:
    problems = Collector()
    from_labs = lab_outputs(artifacts)
    writers: dict[str, str] = {}
    for page in pages:
        if page.output in writers or page.output in from_labs:
            other = writers.get(page.output, "a lab download")
            problems.add(page.source, 0, f"two sources write {page.output}: this page and {other}")
        writers[page.output] = page.source
    outputs = from_labs | set(writers)
    for art in artifacts.values():
        page = next((p for p in pages if p.source == f"content/{art.lab.page}"), None)
        if page is not None and page.lab != art.lab.id:
            problems.add(page.source, page.meta_line, f"site.yaml makes this the page of lab "
                                                      f"{art.lab.id}: its front matter needs 'lab: {art.lab.id}'")
    for page in pages:
        art = artifacts.get(page.lab) if page.lab else None
        if page.lab and art is None:
            known = ", ".join(sorted(artifacts)) or "none in site.yaml"
            problems.add(page.source, page.meta_line, f"unknown lab '{page.lab}' (labs: {known})")
        results = art.results() if art else None
        for block in page.blocks:
            needs_lab = block.kind != "prose" or VALUE.search(block.text) or "figure:" in block.text
            if needs_lab and art is None:
                if not page.lab:
                    problems.add(page.source, block.line,
                                 "this refers to a lab, but the front matter names none: add 'lab: ID'")
                continue
            if block.kind in CHECKS:
                CHECKS[block.kind](page, block, art, results, outputs, problems)
    problems.raise_if_any()


def _prose(page, block, art, results, outputs, problems):
    for offset, line in enumerate(block.text.splitlines()):
        number = block.line + offset
        for match in VALUE.finditer(line):
            try:
                format_value(lookup(results, match["path"]), match["spec"])
            except Unresolved as exc:
                problems.add(page.source, number, f"value {{{{ {match['path']} }}}}: {exc}")
        for match in LINK.finditer(line):
            target = match["target"]
            if target.startswith("figure:"):
                name = target[len("figure:"):]
                if name not in art.figures:
                    problems.add(page.source, number, f"unknown figure '{name}' "
                                                      f"(lab {art.lab.id} saved: {', '.join(art.figures) or 'none'})")
                elif not match["text"].strip():
                    problems.add(page.source, number, f"figure '{name}' needs alt text: ![what it shows](figure:{name})")
            elif not is_external(target):
                try:
                    resolve_target(page, target, outputs)
                except Unresolved as exc:
                    problems.add(page.source, number, str(exc))


def _cell(page, block, art, results, outputs, problems):
    name = block.args[0]
    if name not in art.outputs:
        problems.add(page.source, block.line, f"unknown cell '{name}' "
                                              f"(lab {art.lab.id} has: {', '.join(art.outputs)})")
    if block.options.get("output", "shown") not in ("shown", "collapsed"):
        problems.add(page.source, block.line, "cell option output= must be 'shown' or 'collapsed'")


def table_axes(block) -> list[str]:
    return [a for a in block.options.get("axes", "row,column").split(",") if a]


def _table(page, block, art, results, outputs, problems):
    path = block.args[0]
    try:
        value = lookup(results, path)
    except Unresolved as exc:
        problems.add(page.source, block.line, f"table {path}: {exc}")
        return
    axes = table_axes(block)
    unknown = [a for a in axes if a not in AXES]
    if unknown:
        problems.add(page.source, block.line, f"table {path}: unknown axis {', '.join(unknown)} "
                                              f"(expected: {', '.join(sorted(AXES))})")
    depth, probe = 0, value
    while isinstance(probe, list) and probe:
        depth, probe = depth + 1, probe[0]
    if depth not in (2, 3) or not isinstance(probe, (int, float)):
        problems.add(page.source, block.line, f"table {path}: needs a 2-D or 3-D array of numbers, "
                                              f"found {depth}-D")
    elif len(axes) != depth:
        problems.add(page.source, block.line, f"table {path} is {depth}-D: give {depth} axes, "
                                              f"e.g. axes={','.join(['head', 'query', 'key'][-depth:])}")
    if not block.options.get("caption"):
        problems.add(page.source, block.line, f"table {path} needs a caption=\"...\" saying what it shows")


CHECKS = {"prose": _prose, "cell": _cell, "table": _table}
