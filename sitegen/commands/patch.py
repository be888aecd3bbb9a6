"""An edit to pages' prose, patched into the last site: what it changes, and nothing else.

When the only sources changed since the last build are prose pages (content/**.md) that were
there, and each keeps its front matter, its face (face.py: all that other pages and the files
made of every page can see of it), its #anchors and its lack of warnings, shows no lab, holds
no map and is no lab's page, then every other file of the site is the one the last build
published: the other pages are not loaded, checked, rendered, read or indexed again. The changed
pages are parsed, checked, rendered and read by the functions a full build uses, under the same
memo entries, with what the last full build rendered with (its site key, assets and scripts:
they follow from what is unchanged), their search.json pieces are spliced into the last index,
and the site is written as always (write.py).

pipeline.py first makes sure that nothing else changed (the fingerprint of the sources with these
pages as they were is the last build's, and nothing a lab or the build read outside them
changed). Anything else is a full build, as is every PATCHES-th: only a full build prunes the
memo of what patched builds left and records its items for the next.
"""
from __future__ import annotations

from pathlib import Path

from ..core.errors import Collector
from ..core.stored import Stored, sha256_of
from ..pages.blocks import KINDS, Checking
from ..pages.check import check_page
from ..pages.content import load_pages
from ..pages.shared import Shared
from ..project.bibliography import site_bibliography
from ..project.nbsource import edits_notebook
from ..publish.htmlcheck import source_line, file_problems, read_html
from ..publish.write import MARK, last_output
from ..render.assets import build_id
from ..render.face import page_face
from ..render.render import Outputs, Renderer
from ..render.search import INDEX, entry_start, page_sections_json

PATCHES = 50        # patched builds in a row, at most: then a full build prunes what they left


def patch_info(files: Outputs, check_context: str, sitemap, labels, labs: list[str], frozen: tuple,
               text_notebooks: frozenset, read_by_labs: set[str]) -> dict:
    """What a full build keeps for the builds that patch pages into its site (`labels`: the site's labels
    that some page looks up, labels.SiteLabels: a patched page that looks up another finds none, a warning,
    and is built whole; `text_notebooks`: which .md files were notebooks, as a patch reads no records,
    nbsource.text_notebooks; `read_by_labs`: the sources a lab's run read, whose edit may change what
    it computes)."""
    return {"check_context": check_context, "sitemap": sitemap, "labels": labels, "labs": labs, "frozen": frozen,
            "patches": 0, "read_by_labs": sorted(read_by_labs),
            "text_notebooks": sorted(text_notebooks), **files.made_with}


def patch(out: Path, cfg, memo, last: dict, info: dict, snapshot: dict[str, str], edited: list[str], solutions: str,
          preview: bool) -> tuple[dict, tuple[str, ...], dict] | None:
    """The site with the pages `edited` patched in: (its files, the pages rendered, the patch info
    for the next build); None when a full build must make it (see the module's docstring). Raises
    the problems a full build would raise of these pages. `info`: the last full build's patch_info."""
    before = last["sources"]
    if info["patches"] >= PATCHES:
        return None
    if not all(rel.startswith("content/") and rel.endswith(".md") and rel in before and rel in snapshot
               for rel in edited):
        return None
    if "read_by_labs" not in info or set(edited) & set(info["read_by_labs"]):
        return None                 # (a lab read the page: it runs again)
    if any(warning[0] in edited for warning in last.get("warnings", ())) or edits_notebook(cfg.root, edited):
        return None                 # (a MyST Markdown notebook's edit may run its lab; a page that was one is
                                    # not among the last build's parsed pages, below)
    lab_pages = {f"content/{lab.page}" for lab in cfg.labs}
    pages = load_pages(cfg.content_dir, {rel: snapshot[rel] for rel in edited}, memo)
    for page in pages:
        was = memo.value("parsed", (page.source, before[page.source]))
        if (was is None or page.source in lab_pages or page.lab or page.notes or was.meta != page.meta
                or "materials" in page.kinds or any(kind != "prose" and KINDS[kind].needs_lab for kind in page.kinds)
                or page_face(was, solutions) != page_face(page, solutions)):
            return None
    sitemap, problems, said = info["sitemap"], Collector(), Collector()
    shared = Shared(info["labels"], site_bibliography(cfg, snapshot, memo))     # (the .bib's entries: from the memo)
    for page in pages:
        check_page(page, info["check_context"], {}, sitemap, shared, Checking(cfg, problems), problems, said, memo)
    problems.raise_if_any()
    if said.problems:
        return None         # (said by a full build, in its order among the others)
    last_files = {rel: record for rel, record in last["files"].items() if rel != MARK}
    shown = {rel: Stored(f"{out}/{rel}", record[0], record[1]) for rel, record in last_files.items()}
    renderer = Renderer(cfg, pages, {}, memo, sitemap, snapshot, solutions, shared)
    renderer.by_output = _Pages(memo, sitemap, snapshot, pages)
    for page in pages:
        try:
            renderer.page(page, info["assets"], info["scripts"], info["site_key"])
        except _Unknown:
            return None
    files = {**shown, **renderer.out}
    index, offsets = _spliced(info["offsets"], last_output(out, last["files"], INDEX), pages, files, memo)
    if index is None:
        return None
    files[INDEX] = index
    if preview:
        files.update([build_id()])
    warnings, served_at = Collector(), {}
    for page in pages:
        path = page.output
        found = read_html(path, files[path], cfg.base_url, memo)
        was = shown[path]
        if found["ids"] != read_html(path, was, cfg.base_url, memo, was.sha256)["ids"]:
            return None     # the pages that link to its anchors would be checked again

        def ids(target: str) -> set:
            return read_html(target, files[target], cfg.base_url, memo,
                             last_files[target][0] if target in last_files and target not in renderer.out else None)["ids"]

        def where(needle: str, source=page.source) -> tuple[str, int]:
            return source_line(cfg.root, source, needle)
        file_problems(path, found, files, ids, where, served_at, problems, warnings)
    problems.raise_if_any()
    if warnings.problems:
        return None         # (said by a full build, in its order among the others)
    return files, tuple(renderer.rendered), {**info, "offsets": offsets, "patches": info["patches"] + 1}


class _Unknown(Exception):
    """A page the changed one shows (a parent, a neighbour) is not remembered: a full build."""


class _Pages(dict):
    """Output -> Page for the renderer: each page a changed one shows (its parents in the breadcrumbs,
    its neighbours in the sequence) read from the memo when it is first asked for."""

    def __init__(self, memo, sitemap, snapshot: dict[str, str], pages: list):
        super().__init__((page.output, page) for page in pages)
        self.memo, self.snapshot = memo, snapshot
        self.sources = {output: f"content/{rel}" for rel, output in sitemap.pages.items()}

    def __missing__(self, output: str):
        source = self.sources.get(output)
        found = self.memo.value("parsed", (source, self.snapshot.get(source))) if source else None
        if found is None:
            raise _Unknown(output)
        self[output] = found
        return found


def _spliced(offsets: dict, index: bytes | None, pages: list, files: dict, memo) -> tuple[bytes | None, dict]:
    """search.json with the changed pages' pieces in place of their last ones (`index`: the last,
    None if it is not as the last build left it), and the pieces' new places; (None, {}) when a
    page comes into it or leaves it (a page with no text to search has no piece)."""
    if index is None:
        return None, {}
    parts, at, moved = [], 0, []
    for page in sorted(pages, key=lambda page: offsets.get(page.output, (-1,))[0]):
        sections = page_sections_json(files[page.output], memo, sha256_of(files[page.output]))
        if (page.output in offsets) != (sections != b"[]"):
            return None, {}
        if page.output not in offsets:
            continue
        start, end = offsets[page.output]
        piece = entry_start(page.output, page.title) + sections + b"}"
        parts += (index[at:start], piece)
        moved.append((start, len(piece) - (end - start)))
        at = end
    parts.append(index[at:])
    shifted = {}
    for output, (start, end) in offsets.items():
        shift = sum(change for where, change in moved if where < start)
        grown = sum(change for where, change in moved if where == start)
        shifted[output] = (start + shift, end + shift + grown)
    return b"".join(parts), shifted
