"""Phase 4: verify every reference before anything is rendered.

Cells, tables, values, figures and links of every page are resolved against
the labs' artifacts and the set of files the site will contain; all problems
are reported together, each as `content/...md:LINE: ...`.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from ..labs.artifacts import NARROW, Artifacts
from .blocks import KINDS, Checking, labs_digest, labs_shown
from ..project.config import SiteConfig
from ..core.memo import Memo, digest
from .content import content_images, media_problem
from .page import Page
from .bookparts import TERM_LABEL, without_spans
from .prose import (LINK, NOTEBOOK_NAMES, SiteMap, Unresolved, block_formulas, format_value, is_external, lookup,
                    names_page, references_of, resolve_target, to_mathml, values)
from ..core.errors import Collector
from ..core.incremental import Phase
from .citations import line_citations, listed_keys
from .labels import LABELLED_FIGURE, References, Target, page_labels, page_references, prose_lines
from .shared import Shared
from ..project.nbsource import runs_as_notebook


def lab_outputs(art: Artifacts) -> set[str]:
    """Every path a lab publishes: its notebook, downloads and figures."""
    paths = {f"{art.lab.downloads}/{name}" for name in art.hashes if not name.endswith(".png")}
    paths.update(art.figure_path(name) for name in art.figures)
    if art.lab.notebook:
        paths.add(art.lab.notebook)
    return paths


def site_map(cfg: SiteConfig, pages: list[Page], published: dict[str, set[str]], snapshot: dict[str, str]) -> SiteMap:
    """Every path a link may point to: the pages, the images beside them, and what the labs publish
    (`published`: lab id -> its lab_outputs; `snapshot`: the build's of the sources)."""
    images = content_images(cfg.content_dir, snapshot)
    return SiteMap(set().union(*published.values()) | {page.output for page in pages} | set(images),
                   {page.content_path: page.output for page in pages}, images)


def check_site(cfg: SiteConfig, pages: list[Page], artifacts: dict[str, Artifacts], snapshot: dict[str, str],
               shared: Shared, warnings: Collector, memo: Memo | None = None) -> tuple[SiteMap, frozenset]:
    """Raises every problem at once; else the site map, for rendering, and the label names the pages look up
    in `shared` (what pages may show of the site beside their own; `snapshot`: the build's). What --strict
    makes an error is added to `warnings`."""
    problems = Collector()
    checking = Checking(cfg, problems)
    for art in artifacts.values():
        for name in art.figures:
            if name.endswith(NARROW) and name[: -len(NARROW)] + ".png" not in art.figures:
                problems.add("site.yaml", art.lab.line, f"lab {art.lab.id} saved {name}, a narrow variant of "
                             f"{name[: -len(NARROW)]}.png, which it did not save: save both, or name it otherwise")
    problems.raise_if_any()
    published = {lab_id: lab_outputs(art) for lab_id, art in artifacts.items()}
    sitemap = site_map(cfg, pages, published, snapshot)
    writers: dict[str, str] = {}
    for page in pages:
        if page.output in writers:
            problems.add(page.source, 0, f"two pages write {page.output}: this one and {writers[page.output]} (a "
                                         "book's page and the course's, or a notebook and a page of the same name): "
                                         "delete one, or publish one elsewhere (front matter `url:`)")
        writers[page.output] = page.source
        if not page.output.isascii() or any(c in page.output for c in " ?#%\\"):
            problems.add(page.source, page.meta_line, f"published as {page.output}, a name Cloudflare Pages does not "
                                                      "serve as asked (it is not ASCII, or holds a space, ?, #, % or "
                                                      "\\): give the page an address in its front matter, such as "
                                                      "`url: chapter-1/notes`")
    if pages and "index.html" not in writers:
        problems.add("content/index.md", 0, "the site has no home page, which every page links to (its title, "
                                            "at the top): add content/index.md, a title and a line `::: materials` "
                                            "(the course's map), or a notebook content/index.ipynb")
    for output, path in sitemap.images.items():
        writers.setdefault(output, f"content/{output}")
        with open(path, "rb") as handle:
            if found := media_problem(f"content/{output}", handle.read(1024)):
                said, fatal = found
                (problems if fatal else warnings).add(f"content/{output}", 0, said)
    for lab_id, art in artifacts.items():
        for output in sorted(published[lab_id] & writers.keys()):
            problems.add("site.yaml", art.lab.line, f"lab {art.lab.id} publishes {output}, which "
                         f"{writers[output]} also writes: give the lab's images, downloads or notebook another path")
    for page in pages:              # an alias fires even where a file exists: it must not hide one
        for alias in page.aliases:
            if served_file(alias, sitemap):
                problems.add(page.source, page.meta_line, f"aliases: {alias} is the address of "
                                                          f"{served_file(alias, sitemap)}, which the site publishes: "
                                                          "a redirect there would hide it")
    by_source = {page.source: page for page in pages}
    for art in artifacts.values():
        page = by_source.get(f"content/{art.lab.page}")
        if page is not None and page.lab != art.lab.id:
            problems.add(page.source, page.meta_line, f"site.yaml makes this the page of lab "
                                                      f"{art.lab.id}: its front matter needs 'lab: {art.lab.id}'")
    context = check_context(cfg, sitemap)
    with Phase(memo, "page-check", context) as phase:
        for page in pages:
            # (what it found of other pages' labels is part of what it was made of: labels.References)
            if phase.reuse(page.source, lambda read: _made(page, shared, read, artifacts)) is not None:
                continue                # as the last build found it, in this same context
            check_page(page, context, artifacts, sitemap, shared, checking, problems, warnings, memo, phase)
        problems.raise_if_any()
    return sitemap, frozenset(name for _, _, read in phase.now.values() if read for name in read[0])


def check_context(cfg: SiteConfig, sitemap: SiteMap) -> str:
    """What every page's check depends on besides its own text and the labs it shows (_made): the
    site's settings and every published path."""
    return digest(cfg.digest, cfg.base_url, sitemap.digest)


def _made(page: Page, shared: Shared, read, artifacts) -> tuple:
    """What a page's check is made of besides its context: its text, what it finds now of the labels and
    entries it read (`read`), and the outputs of the labs it shows (by their provenance, which hashes
    each file)."""
    return page.output, page.digest, shared.seen(read), labs_digest(page, artifacts)


class _LabsRead(Mapping):
    """The labs' artifacts as one page's check reads them: which it looked up (`read`), every one's
    (None) once it lists them."""

    def __init__(self, artifacts: dict[str, Artifacts]):
        self.artifacts, self.read = artifacts, set()

    def __getitem__(self, lab: str) -> Artifacts:
        if self.read is not None:
            self.read.add(lab)
        return self.artifacts[lab]

    def __iter__(self):
        self.read = None
        return iter(self.artifacts)

    def __len__(self) -> int:
        self.read = None
        return len(self.artifacts)


def check_page(page: Page, context: str, artifacts, sitemap: SiteMap, shared: Shared, checking: Checking,
               problems: Collector, warnings: Collector, memo: Memo | None, phase: Phase | None = None) -> None:
    """Check a page whose check is not recorded in `phase`, unless the memo holds it as found right in
    `context`, with what it reads of `shared` (other pages' labels, the entries it cites) as it is now;
    record it if it finds nothing."""
    references = references_of(page, sitemap, shared.labels)
    read = shared.read(page, references)
    made = _made(page, shared, read, artifacts)
    key = (context, page.source, *made)
    # (a page not read from its file has no digest)
    name = memo.name("page-check", key) if memo is not None and page.digest else None
    if name is None or memo.data(name) is None:
        before = len(problems.problems) + len(warnings.problems)
        labs = _LabsRead(artifacts)
        _check_page(page, labs, sitemap, references, checking, problems, warnings, memo)
        _citations(page, shared.bibliography, problems)
        shown = labs_shown(page)
        # (a check that read a lab the page does not show was made of more than its record says: none)
        outside = shown is not None and (labs.read is None or not labs.read <= shown | {""})
        if name is None or len(problems.problems) + len(warnings.problems) != before or outside:
            return
        memo.data("page-check", key, lambda: b"ok")
    if phase is not None:
        phase.made(page.source, made, key, summary=read)


def _check_page(page, artifacts, sitemap, references, checking, problems, warnings, memo) -> None:
    """A page's references: its lab, parent, values, figures, links and blocks."""
    art = artifacts.get(page.lab) if page.lab else None
    if page.lab and art is None:
        known = ", ".join(sorted(artifacts)) or "none in site.yaml"
        problems.add(page.source, page.meta_line, f"unknown lab '{page.lab}' (labs: {known})")
    results = art.results if art else None
    if "parent" in page.meta:
        try:
            resolve_target(page, page.meta["parent"], sitemap)
        except Unresolved as exc:
            problems.add(page.source, page.meta_line, f"front matter parent: {exc}")
    _references(page, references, problems, warnings)
    _footnotes(page, warnings)
    for block in page.blocks:
        if block.kind == "prose":
            outside = [(number, without_spans(text)) for number, text in prose_lines((block,))]  # (code spans: as written)
            computed = [(number, text) for number, text in outside
                        if values(text) or any(link["target"].startswith("figure:") for link in LINK.finditer(text))]
            if art is None and computed:
                if not page.lab:            # (at the first line that names a value or a figure)
                    problems.add(page.source, computed[0][0],
                                 "this refers to a lab, but the front matter names none: add 'lab: ID'")
                continue
            _prose(page, block, art, results, sitemap, problems, warnings, memo)
            continue
        kind = KINDS[block.kind]
        if not kind.needs_lab:
            kind.check(checking, page, block, None)
            continue
        shown = artifacts.get(kind.lab(page, block) or "")
        if shown is None:
            if kind.names_lab:
                problems.add(page.source, block.line, f"{block.kind}: unknown lab '{block.args[0]}' "
                                                      f"(labs: {', '.join(sorted(artifacts)) or 'none'})")
            elif not page.lab:
                problems.add(page.source, block.line,
                             "this refers to a lab, but the front matter names none: add 'lab: ID'")
            continue
        kind.check(checking, page, block, shown)


FOOTNOTE = re.compile(r"(?P<definition>^ {0,3})?\[\^(?P<name>[^\]\s]+)\](?P<colon>:)?")


def _footnotes(page, warnings) -> None:
    """A footnote referred to (`[^name]`) that the page never defines (`[^name]: ...`) shows as written, as
    CommonMark's footnotes leave it: said."""
    lines = [(number, without_spans(text)) for number, text in prose_lines([b for b in page.blocks if b.kind == "prose"])]
    defined = {found["name"] for _, text in lines for found in FOOTNOTE.finditer(text)
               if found["definition"] is not None and found["colon"]}
    for number, text in lines:
        for found in FOOTNOTE.finditer(text):
            if not (found["definition"] is not None and found["colon"]) and found["name"] not in defined:
                warnings.add(page.source, number, f"the footnote [^{found['name']}] is never defined: it shows as "
                                                  f"written; define it on the page, as a line [^{found['name']}]: its text")


def _references(page, references: References, problems, warnings) -> None:
    """Its labels, each defined once on it, and each reference naming one label of this page or the
    site; one to no label is a warning (the chapter it points into may be missing: it shows the name)."""
    for line, message in page_labels(page)[1]:
        problems.add(page.source, line, message)
    for line, source, name in page_references(page.blocks):
        found = references.find(source, name)
        if isinstance(found, Target):
            continue
        written = f"[]({source or ''}#{name})" if name else f"[]({source})"
        if not name:
            warnings.add(page.source, line, f"{written} names no page of the site: it shows as {source!r}; name a "
                                            "page's source file, relative to this page's")
        elif found:
            pages = ", ".join(sorted({target.output for target in found}))
            problems.add(page.source, line, f"{written} could be the label {name!r} of any of these pages: {pages}: "
                                            "name the page's source, as [](chapter.md#label)")
        elif name.startswith(TERM_LABEL) and not source:       # ({term}`name`: its text, as MyST shows it)
            warnings.add(page.source, line, f"the term '{name[len(TERM_LABEL):].replace('-', ' ')}' ({{term}}) is in no glossary of the site: it "
                                            "shows as its text; define it in a {glossary} (the term at the margin, "
                                            "its definition indented below it)")
        else:
            known = ", ".join(sorted(references.own)[:12]) or "none"
            warnings.add(page.source, line, f"{written} refers to no label of {source or 'this page or any other'} "
                                            f"(this page's: {known}): it shows as {name!r}; label a formula "
                                            "`$$ ... $$ {#name}`, a figure `![alt](image \"caption\"){#name}` or a "
                                            "heading `## Title {#name}`")


def _citations(page, bibliography, problems) -> None:
    """Each key a bracketed citation names, or the front matter's `nocite` lists, is an entry of the
    bibliography (citations.py)."""
    for key in listed_keys(page):
        if not bibliography:
            problems.add(page.source, page.meta_line, "nocite: lists entries, but site.yaml names no bibliography: "
                                                      "add `bibliography: references.bib` under site:")
            break
        if key != "*" and key not in bibliography:
            near = ", ".join(difflib.get_close_matches(key, list(bibliography), 3)) or "none close"
            problems.add(page.source, page.meta_line, f"nocite: no entry {key!r} in the bibliography (close: {near})")
    for line, text in prose_lines(page.blocks):
        for cited in line_citations(text, bibliography):
            for key in cited.keys:
                if key in bibliography or cited.narrative:
                    continue
                if not bibliography:
                    problems.add(page.source, line, f"[@{key}] cites, but site.yaml names no bibliography: add "
                                                    "`bibliography: references.bib` under site:, a BibTeX file "
                                                    "beside the pages in content/")
                else:
                    near = ", ".join(difflib.get_close_matches(key, list(bibliography), 3)) or "none close"
                    problems.add(page.source, line, f"[@{key}]: no entry {key!r} in the bibliography (close: {near})")


def _prose(page, block, art, results, sitemap, problems, warnings, memo):
    for number, tex, display in block_formulas(block):
        try:
            to_mathml(tex, display, memo)
        except Unresolved as exc:            # (the page shows its source: prose.math_html)
            warnings.add(page.source, number, f"{exc}: shown as its source")
    for number, line in prose_lines((block,)):         # (outside fenced code, which shows as written)
        for match in values(line if art is not None else without_spans(line)):   # (no lab: none)
            try:
                format_value(lookup(results, match["path"], NOTEBOOK_NAMES if runs_as_notebook(art.lab.script)
                                    else "results.json"), match["spec"])
            except Unresolved as exc:
                if art is None or f"{match['path']}.png" not in art.figures:       # (a glued figure: in the line)
                    problems.add(page.source, number, f"value {{{{ {match['path']} }}}}: {exc}")
        for match in LINK.finditer(without_spans(line)):          # (a code span: as written)
            target = match["target"]
            if target.startswith("figure:"):
                name = target[len("figure:"):]
                drew = name.rsplit("-", 1)[0] if name.endswith("-1.png") and runs_as_notebook(art.lab.script) else None
                if name not in art.figures and drew in {cell.name for cell in art.cells}:
                    if LABELLED_FIGURE.match(line):     # (a label, which a reference may name: it must be there)
                        problems.add(page.source, number, "this cell's figure has a label (#| label, or myst-nb's "
                                                          "figure options), but the cell drew no figure: draw one in "
                                                          "it, or remove them")
                    else:               # (a caption alone: as Quarto and myst-nb, nothing is shown)
                        warnings.add(page.source, number, "this cell's figure has a caption (#| fig-cap, or myst-nb's "
                                                          "figure options), but the cell drew no figure: the caption "
                                                          "is not shown; draw one in it, or remove the caption")
                elif name not in art.figures:
                    problems.add(page.source, number, f"unknown figure '{name}' "
                                                      f"(lab {art.lab.id} saved: {', '.join(art.figures) or 'none'})")
                elif not match["text"].strip():
                    problems.add(page.source, number, f"figure '{name}' needs alt text: ![what it shows](figure:{name})")
            elif match["bang"] and is_external(target) and not target.startswith("data:"):
                warnings.add(page.source, number, f"the image {target} is loaded from another site, which pages "
                                                  "never do: shown as a link to it (save it beside the page to show it)")
            elif not is_external(target):
                try:
                    resolve_target(page, target, sitemap, art)
                except Unresolved as exc:   # (a chapter taken from a book names its other files: prose._link)
                    if match["bang"]:
                        warnings.add(page.source, number, f"{exc}: the image is shown as its alt text; put the file "
                                                          "in content/, or correct the path")
                    elif not names_page(target):
                        warnings.add(page.source, number, f"{exc}: shown as its text; put the file in content/, or "
                                                          "link the address it is published at")
                    else:
                        warnings.add(page.source, number, f"links to {target}, which is no page or label of this "
                                                          "site: shown as its text; add that page to content/, or "
                                                          "link the address it is published at")


def served_file(url_path: str, files: dict) -> str | None:
    """The output file Cloudflare Pages answers a path with (at most one redirect)."""
    path = url_path.lstrip("/")
    for candidate in (path, path + ".html", path.rstrip("/") + "/index.html" if path else "index.html",
                      path[:-1] + ".html" if path.endswith("/") else None):
        if candidate is not None and candidate.lstrip("/") in files:
            return candidate.lstrip("/")
    return None
