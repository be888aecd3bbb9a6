"""Phase 5: pages, assets and lab files as OutputFiles, in memory.

Templates get one typed context per page and never compute; the numbers they
show were computed by the labs and formatted here.
"""
from __future__ import annotations

import functools
import html
import json
import re
import struct
from typing import NamedTuple

import jinja2
from markupsafe import Markup

from ..pages.blocks import KINDS, code, hidden_blocks, labs_digest, word_html
from .converters import template_environment, template_line
from .markdown import Markdown
from ..labs.artifacts import NARROW, Artifacts
from ..project.config import SiteConfig
from ..pages.page import Page
from ..pages.prose import (SiteMap, Unresolved, is_external, math_html, math_spans, pretty_url, references_of, relative_url,
                           resolve_target, transform_prose)
from ..core.errors import BuildError, Problem
from ..core.incremental import Phase
from .deploy import add_deploy_files
from .face import linked, mapped
from ..pages.highlight import highlighted, pygments_css
from .assets import PAGE_SCRIPTS, PREVIEW_SCRIPTS, publish_assets
from .mathfont import formula_characters, subset
from ..core.memo import Memo, digest
from .search import INDEX, search_index
from .withheld import history_readers, withheld_cells, withheld_files
from .archive import notebook_archive
from ..core.stored import bytes_of, sha256_of
from ..labs.labreads import archived_reads, project_files_read
from ..core.sources import read_bytes
from ..pages.citations import Citations, listed_keys
from ..pages.labels import References
from ..pages.shared import Shared
from ..project import textnb
from ..project.nbsource import runs_as_notebook


class Outputs(dict):
    """Output path -> bytes (or a Stored file); a path is written once (two writers is a bug). `rendered`: the
    pages rendered anew (the others were unchanged, and came from the memo). `made_with`: what a page
    was rendered with besides its own (site_key, assets, scripts) and where each page's piece of
    search.json is (offsets): what a build that patches a page into this site needs (patch.py)."""
    rendered: tuple[str, ...] = ()
    made_with: dict = {}

    def add(self, path: str, data: bytes, source: str = "") -> None:
        if path in self:
            raise BuildError(Problem(source or path, 0, f"{path} would be written twice"))
        self[path] = data


class PageContext(NamedTuple):
    """Everything a page template may use."""
    site: SiteConfig
    page: Page
    body: str                 # rendered HTML of the page's content
    toc: list                 # [{id, name, level}] of h2/h3 headings
    stylesheet: str           # relative href of the fingerprinted CSS
    stylesheets: list         # relative hrefs of the stylesheets its blocks add (a widget's own)
    icon: str                 # relative href of the favicon
    scripts: list             # relative hrefs of the scripts the page loads
    home: str                 # relative href of the home page
    canonical: str            # the page's absolute URL on the published site
    nav: list                 # [{title, href, current, external}]
    breadcrumbs: list         # [{title, href}] from home to the page's parent
    previous: dict | None     # {title, href} in site.yaml's sequence
    next: dict | None
    provenance: Markup        # on lab pages: which script computed its numbers, when, with what ("" elsewhere)
    words: dict               # the interface's words (site.yaml's vocabulary over the generator's)


PLACEHOLDER = re.compile("<!--block-[0-9]+-->|\ue000[0-9]+\ue001")     # see Renderer.page_body


def png_size(data: bytes) -> tuple[int, int]:
    return struct.unpack(">II", data[16:24])


def provenance_note(words: dict, provenance: dict) -> Markup:
    """The footer of a lab's page: which script computed it, when, with what (no seed: none said)."""
    seed = provenance.get("seed")
    return word_html(words["provenance"], script=code(provenance["script"]), when=provenance["computed_at"],
                      seed="" if seed is None else words["provenance_seed"].format(seed=seed),
                      python=provenance["python"], numpy=provenance["numpy"], matplotlib=provenance["matplotlib"])


def while_labs_run(cfg: SiteConfig, memo: Memo, pending, pages: list[Page], snapshot: dict[str, str],
                   solutions: str = "folded") -> None:
    """What rendering can do before the labs' results exist, done while they compute: Pygments'
    CSS, and for the labs being computed (`pending`: (lab, cells) pairs) their highlighted code,
    the compiled templates and Markdown's extensions (the first page rendered would otherwise pay
    about 40 ms for these after the last lab ends), and the math font (its
    subset of a new set of characters costs 0.2 s). A template that does not compile is left for
    rendering to report, with its file and line."""
    pygments_css(memo)
    if not pending:
        return
    try:
        if chars := formula_characters(pages, memo, solutions):
            subset(chars, memo)
    except Unresolved:
        pass            # a formula that is not LaTeX: the check reports it, with its line
    env = template_environment(cfg.root, memo.folder, snapshot)
    for name in env.list_templates():
        try:
            env.get_template(name)
        except jinja2.TemplateError:
            pass
    Markdown(cfg.vocabulary.words).convert("# warm\n\n*x* [y](z)\n\n| a |\n|---|\n| 1 |\n\n```python\nx = 1\n```\n")
    for _, cells in pending:
        for cell in cells:
            highlighted(memo, cell.source)


class Renderer:
    def __init__(self, cfg: SiteConfig, pages: list[Page], artifacts: dict[str, Artifacts], memo: Memo,
                 sitemap: SiteMap, snapshot: dict[str, str], solutions: str = "folded", shared: Shared = Shared()):
        self.cfg, self.pages, self.artifacts, self.memo = cfg, pages, artifacts, memo
        self.shared = shared            # what pages show of other pages' labels and of the bibliography
        self.snapshot = snapshot            # the build's snapshot of the sources (templates/ among them)
        self.solutions = solutions          # exercises' solutions: folded, shown or omitted
        self.sitemap = sitemap
        self.env = template_environment(cfg.root, memo.folder, snapshot)
        self.out = Outputs()
        self.words, self.axes = cfg.vocabulary.words, cfg.vocabulary.axes
        self.markdown = Markdown(self.words, cfg.base_url)
        self.rendered: list[str] = []       # the pages rendered anew (the others came from the memo)
        # What the last build found of each page (by source: made of its digest and blocks.labs_digest) and of
        # each notebook (by lab: made of its page's source and digest and its lab's digest): render_site's
        # (these, outside it, reuse nothing and record nothing, but name the entries they make).
        self.page_phase, self.notebook_phase = Phase(memo, "pages", None), Phase(memo, "notebooks", None)

    def template(self, name: str):
        try:
            return self.env.get_template(name)
        except jinja2.TemplateSyntaxError as exc:
            raise BuildError(Problem(f"templates/{exc.name or name}", exc.lineno, f"template syntax: {exc.message}"))
        except jinja2.TemplateNotFound as exc:
            raise BuildError(Problem(f"templates/{name}", 0, f"template not found: {exc.name}"))

    def render_template(self, template: str, **context) -> str:
        try:
            return self.template(template).render(**context)
        except jinja2.UndefinedError as exc:
            line = template_line(exc, template)
            raise BuildError(Problem(f"templates/{line[0]}", line[1], f"undefined in template: {exc.message}"))

    # -- labs ---------------------------------------------------------------
    def lab_files(self, art: Artifacts, page: Page) -> None:
        script = art.lab.script.relative_to(self.cfg.root).as_posix()       # (what a problem with them names)
        self.refuse_solutions_read(art, script)
        for cell in history_readers(art, self.withheld_cells.get(art.lab.id, frozenset())):
            raise BuildError(Problem(script, cell.first_line, f"{cell.label} reads IPython's history of the code run "
                                     "(In, _ih, %history...), which holds the code of the solution's cells before it: "
                                     "a student build would show it; leave the history out of a notebook with solutions"))
        withheld = self.withheld.get(art.lab.id, frozenset())
        for name in art.figures:
            if name not in withheld:
                self.out.add(art.figure_path(name), art.stored(name), script)
        for name in art.hashes:
            if not name.endswith(".png") and name not in withheld:
                self.out.add(f"{art.lab.downloads}/{name}", art.stored(name), script)
        if art.lab.notebook:
            # Rebuilt only when what it is made of changed: its page, its lab (its digest: a recompute
            # changes computed_at), site.yaml (words, descriptions), links, solutions, the generator.
            # and what it shows of other pages' labels and of the bibliography (shared.py).
            record = self.notebook_phase.reuse(     # (what it read of them last time, as it is now)
                art.lab.id, lambda read: (page.source, page.digest, art.digest, self.shared.seen(read)))
            notebook = self.memo.file(record.entry) if record is not None else None
            if notebook is None:
                read = self.shared.read(page, self.references(page))
                made = (page.source, page.digest, art.digest, self.shared.seen(read))
                key = (*made, self.notebook_site_key)
                memo = self.memo if page.digest else Memo(None)  # (a page not read from its file has no digest)
                notebook = memo.file("notebook", key, lambda: self.notebook(page, art))
                if page.digest:
                    self.notebook_phase.made(art.lab.id, made, key, summary=read, namespace="notebook")
            self.out.add(art.lab.notebook, notebook, page.source)
            if archived_reads(art, self.cfg.root, self.snapshot):
                # The notebook with the files its run read, for a student's rerun (archive.py).
                key = (script, sha256_of(notebook), json.dumps(art.reads, sort_keys=True))
                self.out.add(art.lab.archive, self.memo.file("archive", key, lambda: notebook_archive(
                    self.cfg.root, script, bytes_of(notebook), art.reads, self.snapshot)), page.source)

    def refuse_solutions_read(self, art: Artifacts, script: str) -> None:
        """A student build publishes no byte of a solution, whoever read it: a lab that read a page
        holding one may show it in anything it made (printed, split, encoded, in a file, in its
        download's copy of the page), so such a build publishes none of it, and says so."""
        if self.solutions != "omitted" or not art.reads:
            return
        for rel in project_files_read(art.reads, script, self.snapshot):
            other = self.by_source.get(rel)
            hidden = sorted(hidden_blocks(other, "omitted")) if other is not None else []
            if hidden:
                raise BuildError(Problem(script, 0, f"lab {art.lab.id} read {rel}, which holds a solution (line "
                                                    f"{other.blocks[hidden[0]].line}) that a student build leaves out: "
                                                    "what the lab made may show it, so this build publishes none of it. "
                                                    "Have the lab read a file without solutions (say, the data beside "
                                                    "the page), or build with --solutions"))

    @functools.cached_property
    def withheld_cells(self) -> dict[str, frozenset[str]]:
        """Lab id -> its cells inside solutions, which a student build leaves out (withheld.py)."""
        return {page.lab: withheld_cells(page, self.solutions) for page in self.pages if page.lab}

    @functools.cached_property
    def withheld(self) -> dict[str, frozenset[str]]:
        """Lab id -> the files a student build leaves out: what its withheld cells drew and wrote, a
        notebook's results.json (withheld.py)."""
        return {lab: withheld_files(self.artifacts[lab], cells, runs_as_notebook(self.artifacts[lab].lab.script))
                for lab, cells in self.withheld_cells.items() if cells and lab in self.artifacts}

    def notebook(self, page: Page, art: Artifacts) -> bytes:
        """A lab's notebook download: a notebook page's own notebook with this build's outputs, or one
        made of its page's prose and its cells (notebook.py)."""
        from .notebook import build_notebook, computed_notebook
        if runs_as_notebook(art.lab.script):
            rel = page.source
            data = read_bytes(self.cfg.root / rel, rel, self.snapshot)
            if rel.endswith(textnb.TEXT):           # a MyST Markdown notebook is downloaded as an .ipynb
                data = textnb.as_ipynb(data, rel)
            return computed_notebook(self.cfg, page, art, self.sitemap, data, self.solutions)
        return build_notebook(self.cfg, page, art, self.sitemap, self.solutions, self.references(page),
                              Citations(self.shared.bibliography, self.words))

    @functools.cached_property
    def sequence_items(self) -> list[tuple[Page, Artifacts | None]]:
        pages = {p.content_path: p for p in self.pages}
        return [(pages[rel], self.artifacts.get(pages[rel].lab or "")) for rel in self.cfg.sequence if rel in pages]

    def materials(self, page: Page) -> list[dict]:
        """The lecture's map as `page` shows it (blocks.py, ::: materials)."""
        items = []
        for other, art in self.sequence_items:
            (output, title, _), (description, minutes, words) = linked(other), mapped(other)
            withheld = self.withheld.get(art.lab.id, ()) if art else ()
            figure = next((f for f in art.figures if not f.endswith(NARROW) and f not in withheld), None) if art else None
            thumbnail = None
            if figure:
                width, height = png_size(art.files[figure].read_bytes())
                thumbnail = {"src": relative_url(page.output, art.figure_path(figure)),
                             "width": (width + 1) // 2, "height": (height + 1) // 2,
                             "alt": dict(words).get(figure) or self.words["material_thumb"].format(title=title)}
            items.append({"title": title, "description": description,
                          "href": relative_url(page.output, output), "path": "/" + pretty_url(output),
                          "kind": self.words["material_lab" if art and art.lab.notebook else
                                             "material_figures" if art else "material_reading"],
                          "minutes": minutes, "thumbnail": thumbnail})
        return items

    @functools.cached_property
    def by_output(self) -> dict[str, Page]:
        return {p.output: p for p in self.pages}

    @functools.cached_property
    def by_source(self) -> dict[str, Page]:
        return {p.source: p for p in self.pages}

    def faces(self, sources) -> tuple | None:
        """What a page shows of each of these pages (breadcrumbs, previous and next): the address,
        title and parent of their faces (face.py); None when one of them is gone."""
        try:
            return tuple(linked(self.by_source[source]) for source in sources or ())
        except KeyError:
            return None

    @functools.cached_property
    def notebook_site_key(self) -> str:
        """What of the site any notebook shows: site.yaml, its links' targets, solutions."""
        return digest(self.cfg.digest, self.cfg.base_url, self.sitemap.digest, self.solutions)

    # -- pages --------------------------------------------------------------
    def output_markdown(self, text: str) -> str:
        """Markdown a cell displayed (text/markdown), with its math, as the page's prose is made; the HTML
        it holds reduced as a text/html output's is (outputs.safe_html)."""
        from ..pages.outputs import safe_html
        return self._with_formulas(text, lambda held: safe_html(self.output_converter.reset().convert(held), classes=True))

    def inline_markdown(self, text: str) -> Markup:
        """A title's Markdown (a callout's, an exercise's, a theorem's): its code spans, emphasis and
        formulas, as a sentence of the page shows them."""
        return Markup(self._with_formulas(text, lambda held: self.markdown.md.renderInline(held)))

    def _with_formulas(self, text: str, convert) -> str:
        """`convert(text)` with each formula in it made MathML (held out of the conversion, then put back)."""
        formulas: dict[str, str] = {}
        lines = []
        for line in text.splitlines():
            for start, end, tex, display in reversed(math_spans(line)):
                key = f"\ue000m{len(formulas)}\ue001"
                formulas[key] = math_html(tex, display, self.memo)
                line = line[:start] + key + line[end:]
            lines.append(line)
        return re.sub("\ue000m\\d+\ue001", lambda m: formulas[m.group(0)], convert("\n".join(lines)))

    @functools.cached_property
    def output_converter(self):
        return Markdown(self.words)

    def figure_html(self, page: Page, art: Artifacts, name: str, alt: str, caption: str = "", label: str = "") -> str:
        """A lab's figure on `page`, with its narrow variant for phones if it has one."""
        def shown(figure: str) -> dict:         # saved at twice the size it is shown at
            width, height = png_size(art.files[figure].read_bytes())
            return {"src": relative_url(page.output, art.figure_path(figure)),
                    "width": (width + 1) // 2, "height": (height + 1) // 2}
        narrow = art.narrow(name)
        return self.render_template("partials/figure.html", figure=shown(name), narrow=shown(narrow) if narrow else None,
                                    alt=alt, caption=caption, words=self.words, id=label)

    def page_body(self, page: Page) -> tuple[str, list, list[str]]:
        """The page's HTML, its table of contents, and the extra scripts its blocks need."""
        art = self.artifacts.get(page.lab) if page.lab else None
        results = art.results if art else None
        rendered: dict[str, str] = {}
        scripts: list[str] = []

        def placeholder(html_text: str) -> str:
            key = f"<!--block-{len(rendered)}-->"
            rendered[key] = html_text
            return f"\n\n{key}\n\n"

        def href(target: str) -> str:
            if is_external(target):
                return target
            if target.startswith("figure:"):
                return relative_url(page.output, art.figure_path(target[len("figure:"):]))
            try:
                output, fragment = resolve_target(page, target, self.sitemap, art)
            except Unresolved:
                return None         # a page or file the site lacks: its text alone (check.py warned)
            return relative_url(page.output, output, fragment)

        def figure_block(name: str, alt: str, caption: str, label: str = "", src: str = "") -> str:
            if src:                 # an image beside the page, numbered (labels.py)
                return placeholder(self.render_template("partials/figure.html", figure={"src": src, "width": None}, narrow=None, alt=alt,
                                                        caption=caption, words=self.words, id=label))
            if name not in art.figures:         # a caption for a figure its cell did not draw (check.py)
                return ""
            return placeholder(self.figure_html(page, art, name, alt, caption, label))

        def math(tex: str, display: bool, label: str = "", number: int = 0, inline: bool = False) -> str:
            mathml = math_html(tex, display, self.memo)
            if label:           # a numbered formula (labels.py): its number at its right, its label its id
                return placeholder(f'<div class="equation" id="{html.escape(label)}"><div class="math" tabindex="0" '
                                   f'data-search-ignore>{mathml}</div><span class="equation-number">({number})</span></div>')
            if display and not inline:      # (a formula of its own line: a block; one in a sentence or a cell stays in it)
                return placeholder(f'<div class="math" tabindex="0" data-search-ignore>{mathml}</div>')
            key = f"\ue000{len(rendered)}\ue001"      # Markdown leaves private-use characters alone
            rendered[key] = mathml
            return key

        parts = []
        hidden = hidden_blocks(page, self.solutions)
        references, citations = self.references(page), Citations(self.shared.bibliography, self.words)
        for index, block in enumerate(page.blocks):
            if index in hidden:
                continue
            if block.kind == "prose":
                parts.append(transform_prose(block.text, results, href, figure_block, math, references,
                                             self.words["caption_join"], citations))
            else:
                kind = KINDS[block.kind]
                shown = self.artifacts[kind.lab(page, block)] if kind.needs_lab else None
                parts.append(placeholder(kind.render(self, page, block, shown)))
                scripts.extend(kind.scripts(shown))
        if cited := citations.list_html(listed_keys(page)):    # what the page cited (or lists), at its end
            parts.append(placeholder(cited))
        md = self.markdown.reset()
        body = md.convert("\n".join(parts)).replace('class="heading-anchor"',
                                                      'class="heading-anchor" data-search-ignore').replace(
            '<div class="footnote">', f'<div class="footnote" role="doc-endnotes" aria-label="{html.escape(self.words["footnotes"])}">', 1)
        # One pass over the page, not one per placeholder (a page of 10,000 formulas was quadratic);
        # what a placeholder stands for may hold others (a figure's caption, its formulas).
        def fill(match) -> str:
            value = rendered.get(match.group(0))
            return match.group(0) if value is None else PLACEHOLDER.sub(fill, value)
        body = PLACEHOLDER.sub(fill, body)
        # Code and formulas scroll sideways in their own box on a phone: reachable by keyboard.
        body = body.replace("<pre>", '<pre tabindex="0">')
        toc = [{"id": t["id"], "name": html.unescape(t["name"]), "level": t["level"]}
               for t in md.toc if t["level"] in (2, 3)]
        return body, toc, scripts

    def references(self, page: Page) -> References:
        return references_of(page, self.sitemap, self.shared.labels, self.words)

    def site_key(self, assets: dict[str, str], scripts: list[str]) -> str:
        """What any page may show besides its own source, neighbours and labs (the generator and the
        packages' versions are in every memo key): the templates, site.yaml, what is published where,
        and the assets' hashed names. A page is rendered again only when this or its own part changed."""
        templates = sorted((rel, sha) for rel, sha in self.snapshot.items() if rel.startswith("templates/"))
        return digest(self.cfg.digest, self.cfg.base_url, self.solutions, json.dumps(templates), self.sitemap.digest,
                      json.dumps(assets, sort_keys=True), json.dumps(scripts))

    def page(self, page: Page, assets: dict[str, str], scripts: list[str], site_key: str = "") -> None:
        """Render `page` into the outputs, or take it from the memo when neither its source, nor
        what it shows of other pages (navigation, breadcrumbs, previous/next) and of labs (blocks.labs_digest),
        nor `site_key` changed:
        when no page's title, address or parent changed either, as the last build recorded it."""
        # (a page with the lecture's map shows what other pages hold: it is looked up by all of that)
        mapped = "materials" in page.kinds
        labs_key = labs_digest(page, self.artifacts)
        record = None if mapped else self.page_phase.reuse(     # (its entry is looked up once)
            page.source, lambda read: (page.digest, labs_key, self.faces(read[0]), self.shared.seen(read[1])))
        if record is not None and (kept := self.memo.file(record.entry)) is not None:
            self.out.add(page.output, kept, page.source)
            return
        art = self.artifacts.get(page.lab) if page.lab else None
        published = self.sitemap.pages          # content path -> output
        nav = [{"title": item.title, "href": item.url, "current": False, "external": True} if item.url else
               {"title": item.title, "href": relative_url(page.output, published[item.page]),
                "current": published[item.page] == page.output, "external": False} for item in self.cfg.nav]
        by_output = self.by_output
        read = []               # the pages whose faces it shows, in the order it reads them
        crumbs, parent, seen = [], page.meta.get("parent"), {page.output}
        while parent:
            output, fragment = resolve_target(page, parent, self.sitemap)
            if output in seen:
                break
            seen.add(output)
            parent_page = by_output[output]
            read.append(parent_page.source)
            crumbs.insert(0, {"title": parent_page.title, "href": relative_url(page.output, output, fragment)})
            parent = parent_page.meta.get("parent")
        if page.output != "index.html":
            crumbs.insert(0, {"title": self.words["home"], "href": relative_url(page.output, "index.html")})
        order = self.cfg.sequence
        neighbours = {}
        if page.content_path in order:
            at = order.index(page.content_path)
            for key, index in (("previous", at - 1), ("next", at + 1)):
                if 0 <= index < len(order):
                    other = by_output[published[order[index]]]
                    read.append(other.source)
                    neighbours[key] = {"title": other.title, "href": relative_url(page.output, other.output)}
        shown = self.materials(page) if mapped else []
        shows = self.shared.read(page, self.references(page))   # other pages' labels, entries it cites
        seen = self.shared.seen(shows)
        key = (site_key, page.source, page.digest, labs_key,
               json.dumps([nav, crumbs, neighbours, shown, seen], ensure_ascii=False, sort_keys=True))
        site_key = site_key if page.digest else ""         # (a page not read from its file has no digest)
        record = self.page_phase.made(page.source, (page.digest, labs_key, self.faces(read), seen), key,
                                      summary=(tuple(read), shows), namespace="page") if site_key else None
        if record is not None and (kept := self.memo.file(record.entry)) is not None:
            self.out.add(page.output, kept, page.source)
            return
        try:
            body, toc, extra = self.page_body(page)
        except RecursionError:
            raise BuildError(Problem(page.source, 0, "nested too deeply to render (lists, quotes or "
                                                     "emphasis inside each other hundreds of levels deep)")) from None
        context = PageContext(site=self.cfg, page=page, body=body, toc=toc if page.meta.get("toc", True) else [],
                              stylesheet=relative_url(page.output, assets["style.css"]),
                              icon=relative_url(page.output, assets["favicon.svg"]),
                              scripts=[relative_url(page.output, s) for s in
                                       scripts + sorted({assets[name] for name in extra if not name.endswith(".css")})],
                              stylesheets=[relative_url(page.output, s) for s in
                                           sorted({assets[name] for name in extra if name.endswith(".css")})],
                              home=relative_url(page.output, "index.html"), nav=nav, breadcrumbs=crumbs,
                              canonical=f"{self.cfg.base_url}/{pretty_url(page.output)}",
                              previous=neighbours.get("previous"), next=neighbours.get("next"),
                              provenance=provenance_note(self.words, art.provenance) if art else "",
                              words=self.words)
        html_bytes = self.render_template("page.html", ctx=context).encode()
        self.rendered.append(page.source)
        self.out.add(page.output, self.memo.file("page", key, lambda: html_bytes) if site_key else html_bytes, page.source)


def render_site(cfg: SiteConfig, pages: list[Page], artifacts: dict[str, Artifacts], sitemap: SiteMap,
                snapshot: dict[str, str], preview: bool = False, memo: Memo | None = None,
                solutions: str = "folded", shared: Shared = Shared()) -> Outputs:
    """Every file of the site; `sitemap` is what the check resolved links against, `snapshot` the
    build's snapshot of the sources, `shared` what pages show of each other's labels and the bibliography."""
    renderer = Renderer(cfg, pages, artifacts, memo or Memo(None), sitemap, snapshot, solutions, shared)
    assets = publish_assets(cfg, pages, renderer.memo, renderer.out, preview, snapshot, solutions)
    scripts = [assets[name] for name in PAGE_SCRIPTS + (PREVIEW_SCRIPTS if preview else ())]
    site_key = renderer.site_key(assets, scripts) if memo else ""
    # (What a page shows of the others, in its breadcrumbs and previous/next, each page's record holds.)
    with Phase(renderer.memo if site_key else None, "pages", site_key) as renderer.page_phase:
        for page in pages:
            renderer.page(page, assets, scripts, site_key)
    with Phase(renderer.memo, "notebooks", renderer.notebook_site_key) as renderer.notebook_phase:
        for art in artifacts.values():
            renderer.lab_files(art, renderer.by_source[f"content/{art.lab.page}"])
    for output, path in sitemap.images.items():
        renderer.out.add(output, read_bytes(path, f"content/{output}", snapshot), f"content/{output}")
    offsets: dict[str, tuple[int, int]] = {}
    renderer.out.add(INDEX, search_index({page.output: (page.title, renderer.out[page.output])
                                          for page in pages if page.output != "404.html"}, renderer.memo, offsets),
                     "search")
    add_deploy_files(cfg, renderer.out, {alias: page.output for page in pages for alias in page.aliases})
    renderer.out.rendered = tuple(renderer.rendered)
    renderer.out.made_with = {"site_key": site_key, "assets": assets, "scripts": scripts, "offsets": offsets}
    return renderer.out
