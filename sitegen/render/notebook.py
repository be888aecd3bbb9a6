"""The notebook download: the lab page's prose and the lab's cells, with real outputs.

Markdown cells come from the page's prose (split at headings, values filled
in, links made absolute to the published site); code cells are the lab's
cells with the output this build captured. Figures appear as the outputs of
the cells that drew them, so their Markdown lines are dropped.
"""
from __future__ import annotations

import base64
import json
import re

from ..labs.artifacts import NARROW, Artifacts
from ..pages.blocks import hidden_blocks, practice_markdown
from ..project.config import SiteConfig
from ..pages.page import Page
from ..pages.citations import Citations, listed_keys
from ..pages.labels import References, page_labels
from ..project.cells import runs
from ..pages.prose import SiteMap, Unresolved, is_external, pretty_url, resolve_target, transform_prose
from ..project.figurefonts import setup_code
from .withheld import without_solutions

ATTR_LIST = re.compile(r"\s*\{[#.][^}]*\}\s*$")


def _markdown_cells(text: str) -> list[str]:
    """Split prose at headings, as the seed notebook keeps each heading in its own cell."""
    cells, current, fence = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not fence and line.startswith("#"):
            cells += ["\n".join(current).strip(), ATTR_LIST.sub("", line)]
            current = []
        else:
            current.append(line)
    cells.append("\n".join(current).strip())
    return [c for c in cells if c]


def notebook_json(notebook: dict) -> bytes:
    """A notebook as Jupyter writes it (nbformat's v4 writer: keys sorted, one-space indent, text
    split into lines), without importing nbformat, whose import and validator cost more than the
    rest of a page's rebuild; tests/test_notebook.py holds the two to the same bytes and validates."""
    def lines(value):
        return value.splitlines(True) if isinstance(value, str) else value
    cells = []
    for cell in notebook["cells"]:
        cell = {**cell, "source": lines(cell["source"])}
        if cell["cell_type"] == "code":
            cell["outputs"] = [{**out, "text": lines(out["text"])} if out["output_type"] == "stream" else
                               {**out, "data": {k: lines(v) if k.startswith("text/") else v
                                                for k, v in out["data"].items()}} if "data" in out else out
                               for out in cell["outputs"]]
        cells.append(cell)
    text = json.dumps({**notebook, "cells": cells}, sort_keys=True, indent=1, separators=(",", ": "),
                      ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def build_notebook(cfg: SiteConfig, page: Page, art: Artifacts, sitemap: SiteMap, solutions: str = "folded",
                   references: References | None = None, citations: Citations | None = None) -> bytes:
    results = art.results

    def href(target: str) -> str:
        return published_href(cfg, page, sitemap, target)

    # Cells are plain nbformat 4 dicts (tests/test_notebook.py validates what they make).
    def markdown_cell(text: str) -> dict:
        return {"cell_type": "markdown", "metadata": {}, "source": text}

    cells, count = [markdown_cell(f"# {page.title}")], 0
    if setup := setup_code(cfg.figure_fonts, cfg.vocabulary.words["figure_fonts"]):      # the fonts the build drew the figures with
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {"name": "figure-fonts"},
                      "outputs": [], "source": setup})
    hidden = hidden_blocks(page, solutions)
    references = references or References(page.output, page_labels(page, cfg.vocabulary.words)[0])
    for index, block in enumerate(page.blocks):
        if index in hidden:
            continue
        if block.kind == "prose":
            text = transform_prose(block.text, results, href, figure_block=lambda *a: "", references=references,
                                   join=cfg.vocabulary.words["caption_join"], citations=citations)
            cells += [markdown_cell(md) for md in _markdown_cells(text)]
        elif label := practice_markdown(page, block, cfg.vocabulary.words, solutions):
            cells.append(markdown_cell(label))
        elif block.kind == "downloads":       # the files beside the notebook, on the published site
            cells.append(markdown_cell("\n".join(
                f"- [{name}]({cfg.base_url}/{art.lab.downloads}/{name}){cfg.vocabulary.words['download_colon']}"
                f"{cfg.vocabulary.download_note(art.lab, name)}"
                for name in art.files if not name.endswith(".png"))))
        elif block.kind == "cell":
            cell = next(c for c in art.cells if c.name == block.args[0])
            output = art.outputs[cell.name]
            count += 1
            produced = [{"output_type": "stream", "name": "stdout", "text": output.stdout}] if output.stdout else []
            if output.value is not None:
                produced.append({"output_type": "execute_result", "execution_count": count, "metadata": {},
                                 "data": {"text/plain": output.value}})
            for name in (f for f in output.figures if not f.endswith(NARROW)):    # a narrow variant is the page's
                data = base64.b64encode(art.files[name].read_bytes()).decode("ascii")
                produced.append({"output_type": "display_data", "metadata": {},
                                 "data": {"image/png": data, "text/plain": "<Figure>"}})
            if output.error is not None:
                ename, _, evalue = output.error.splitlines()[-1].partition(": ")
                produced.append({"output_type": "error", "ename": ename, "evalue": evalue,
                                 "traceback": output.error.splitlines()})
            metadata = {"name": cell.name, **({"tags": list(cell.tags)} if cell.tags else {})}
            cells.append({"cell_type": "code", "execution_count": count, "metadata": metadata,
                          "outputs": produced, "source": cell.source})
    if citations is not None and (cited := citations.list_html(listed_keys(page))):     # what it cited, as the page
        cells.append(markdown_cell(cited))
    for number, cell in enumerate(cells):
        cell["id"] = f"{cell['cell_type']}-{number:02d}"
    return notebook_json({"nbformat": 4, "nbformat_minor": 5, "cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "title": page.title,
        "provenance": {k: art.provenance[k] for k in ("lab", "seed", "python", "numpy", "matplotlib",
                                                      "computed_at")},
    }})


def published_href(cfg: SiteConfig, page: Page, sitemap: SiteMap, target: str) -> str:
    """A link of a notebook download: to the published site; one to a page the site lacks as written
    (the page shows its text)."""
    if is_external(target):
        return target
    try:
        output, fragment = resolve_target(page, target, sitemap)
    except Unresolved:
        return target
    return f"{cfg.base_url}/{pretty_url(output)}" + (f"#{fragment}" if fragment else "")


def computed_notebook(cfg: SiteConfig, page: Page, art: Artifacts, sitemap: SiteMap, data: bytes,
                      solutions: str = "folded") -> bytes:
    """A notebook page's download: the teacher's notebook (`data`), its code cells' outputs those this
    build computed, with every representation; its Markdown with values filled in and links made
    absolute to the published site. A student build (`solutions` omitted) leaves out what stands inside
    solutions: their Markdown and their code cells, outputs and all (withheld.py)."""
    notebook = json.loads(data.decode("utf-8-sig"))

    def href(target: str) -> str:
        return published_href(cfg, page, sitemap, target)
    cells, ran, count, inside = [], iter(art.cells), 0, 0
    translated = _in_site_syntax(notebook) if solutions == "omitted" else {}
    for number, cell in enumerate(notebook.get("cells", [])):
        source = "".join(cell.get("source") or "") if isinstance(cell.get("source"), list) else cell.get("source") or ""
        cell = {**cell, "source": source, "id": cell.get("id") or f"cell-{number:02d}"}
        if cell.get("cell_type") == "markdown":
            if solutions == "omitted":
                source, inside = without_solutions(translated[number], inside)
                if not source.strip():
                    continue
            cell["source"] = transform_prose(source, art.results, href, figure_block=lambda *a: "")
        elif cell.get("cell_type") == "code":
            name = next(ran).name if source.strip() and runs(source, (cell.get("metadata") or {}).get("tags") or ()) else None
            if inside:
                continue
            outputs = []
            if name is not None:
                count += 1
                outputs = [_nbformat_output(out, art, count) for out in art.outputs[name].outputs]
            cell.update(execution_count=count if name is not None else None, outputs=outputs)
        elif inside:
            continue
        cells.append(cell)
    setup = setup_code(cfg.figure_fonts, cfg.vocabulary.words["figure_fonts"]) if art.figures else ""
    if setup:           # the fonts the build drew its figures with, before its first code cell, as a lab's has
        first = next((k for k, cell in enumerate(cells) if cell.get("cell_type") == "code"), len(cells))
        cells.insert(first, {"cell_type": "code", "execution_count": None, "id": "figure-fonts",
                             "metadata": {"name": "figure-fonts"}, "outputs": [], "source": setup})
    return notebook_json({**notebook, "nbformat": 4, "nbformat_minor": max(5, notebook.get("nbformat_minor", 5)),
                          "cells": cells})


CELL_BREAK = "\ue002 cell \ue002"        # (no Markdown holds it)


def _in_site_syntax(notebook: dict) -> dict[int, str]:
    """Each Markdown cell's text (by its place) in this site's syntax, read as the page reads the
    notebook, all cells as one text (dialects.py): a student's download leaves out what stands in
    solutions, which another tool's syntax ({solution}, {solution-start} ... {solution-end} in a later
    cell) says too."""
    from ..pages.dialects import translate
    places, lines = [], []
    for number, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") == "markdown":
            source = cell.get("source") or ""
            places.append(number)
            lines += ("".join(source) if isinstance(source, list) else source).split("\n") + [CELL_BREAK]
    texts, current = [], []
    for line in translate(lines, 0, [])[0]:
        if line == CELL_BREAK:
            texts.append("\n".join(current))
            current = []
        else:
            current.append(line)
    return dict(zip(places, texts))


def _nbformat_output(out: dict, art: Artifacts, count: int) -> dict:
    """An output as nbformat keeps it: a figure or image the build saved as a file, inline again."""
    if "data" not in out:
        return out
    data = {}
    for mime, value in out["data"].items():
        if mime == "figure":
            data["image/png"] = base64.b64encode(art.files[value].read_bytes()).decode("ascii")
            data.setdefault("text/plain", "<Figure>")
        elif isinstance(value, dict) and "file" in value:
            raw = art.files[value["file"]].read_bytes()
            data[mime] = raw.decode("utf-8") if mime == "image/svg+xml" else base64.b64encode(raw).decode("ascii")
        else:
            data[mime] = value
    shaped = {**out, "data": data, "metadata": out.get("metadata", {})}
    if out["output_type"] == "execute_result":
        shaped["execution_count"] = count
    return shaped
