"""Phase 6: the rendered site checked before it is written, each file read as a browser that runs
scripts reads it (render/htmlread.py: html5lib, the WHATWG parsing algorithm). What stands inside
<noscript> is read too, as a browser without scripts would show it.

Links and #anchors must resolve; nothing may break the Content-Security-Policy
(inline scripts and styles, event handlers, `javascript:` and `data:`
navigations in any spelling) or load from another site (SVG's `href` and
`xlink:href`, `background=` and `srcset` included), since a copy opened from
disk has no CSP to stop it; images without alt text, empty sections,
external links without rel and links no browser opens (`href="content:glue"`)
are warnings. What one file says on its own is remembered under its bytes;
Cloudflare Pages' limits are checked last.
"""
from __future__ import annotations

from pathlib import Path

from ..pages.check import served_file
from ..project.config import SiteConfig
from ..pages.page import Page
from ..core.errors import Collector, Problem
from ..core.incremental import Phase
from ..core.memo import Memo, digest
from ..core.sources import source_path
from ..core.stored import sha256_of, size_of
from ..render.htmlread import read_html


# What a browser opens as a document that may run script: the site's pages, and any such file a lab
# wrote (an .xhtml, an .SVG, an .xml holding XHTML's <script>), which is read as the pages are.
DOCUMENTS = (".html", ".htm", ".xhtml", ".xht", ".shtml", ".svg", ".xml", ".mht", ".mhtml")


def is_document(path: str) -> bool:
    return path.lower().endswith(DOCUMENTS)


def check_rendered(cfg: SiteConfig, pages: list[Page], files: dict[str, bytes], memo: Memo | None = None) -> list[Problem]:
    """Every rendered HTML file: links and #anchors resolve and nothing breaks the CSP
    (errors, raised together); images without alt text, empty sections and
    external links without rel are returned as warnings. What one file says on its own is
    remembered under its bytes (`memo`). A file as the last build found it, when the site publishes
    the same paths, needs no look again but at its links into files that changed (their #anchors)."""
    problems, warnings = Collector(), Collector()
    sources = {page.output: page.source for page in pages}
    context = digest(cfg.base_url, "\0".join(sorted(files)))
    seen = {}                   # path -> what it says (read anew)
    shas = {path: sha256_of(files[path]) for path in sorted(path for path in files if is_document(path))}
    with Phase(memo, "html-check", context) as phase:
        # (kept: its links into other files' #anchors, and its warnings)
        unchanged = {path: record.summary for path, sha in shas.items() if (record := phase.reuse(path, (sha,)))}
        for path in (path for path in shas if path not in unchanged):
            seen[path] = read_html(path, files[path], cfg.base_url, memo, shas[path])
        served_at: dict[str, str | None] = {}

        def ids(path: str) -> set:
            if path not in seen:                    # a file as last time, into which a changed one links
                seen[path] = read_html(path, files[path], cfg.base_url, memo, shas[path])
            return seen[path]["ids"]

        for path in sorted(unchanged.keys() | seen.keys()):
            def where(needle: str) -> tuple[str, int]:
                return source_line(cfg.root, sources.get(path), needle)
            if path in unchanged:                   # as found last time, but for its links into other files
                elsewhere, said = unchanged[path]
                for attribute, url, served, fragment, needle in elsewhere:
                    if fragment not in ids(served):     # (a dead one said again: a warning, kept by none)
                        warnings.add(*where(needle), no_anchor(attribute, url, path, served, fragment))
                for needle, message in said:
                    warnings.add(*where(needle), message)
                continue
            elsewhere, own = file_problems(path, seen[path], files, ids, where, served_at, problems, warnings)
            phase.made(path, (shas[path],), (path, cfg.base_url, shas[path]), summary=(elsewhere, seen[path]["warnings"] + own))
        problems.raise_if_any()
    return sorted(warnings.problems, key=lambda p: (p.path, p.line, p.message))     # (in one order, whatever was reused)


def no_anchor(attribute: str, url: str, path: str, served: str, fragment: str) -> str:
    """A link to a place its page lacks (a browser opens the page at its top): a warning, as Sphinx says one."""
    return (f"{attribute}=\"{url}\" in {path}: {served} has no id '{fragment}' (the link opens that page at its top; "
            "name a heading's id, or a label)")


def file_problems(path: str, found: dict, files, ids, where, served_at: dict, problems: Collector,
                  warnings: Collector) -> list:
    """What a file's reading (`found`: read_html) makes of it among `files`: its links to no file
    and to no #anchor (`ids`: a path's ids), its errors and warnings, each where `where` finds it.
    Returns its links into other files' anchors, which hold while those files' ids
    do, and its links to places it lacks itself (warned: said again while it is as it is)."""
    elsewhere, own = [], []
    for attribute, url, target, fragment, needle in found["links"]:
        if target not in served_at:                 # every page links to the same few: each looked up once
            served_at[target] = served_file(target, files)
        served = served_at[target]
        if served is None and not where(needle)[1]:
            problems.add(*where(needle), f"{attribute}=\"{url}\" in {path} points to no file of the site")
        elif served is None:        # (one a page's author wrote, in its HTML: a warning, as a Markdown link's)
            message = (f"{attribute}=\"{url}\" in {path} points to no file of the site: put the file in content/, or "
                       "link the address it is published at")
            warnings.add(*where(needle), message)
            own.append((needle, message))           # (said again while the file, and the site's files, are as they are)
        elif fragment and served.endswith(".html") and served in files:
            dead = fragment not in ids(served)
            if dead:
                warnings.add(*where(needle), no_anchor(attribute, url, path, served, fragment))
            if served != path:
                elsewhere.append((attribute, url, served, fragment, needle))
            elif dead:                  # (said again while the file is as it is)
                own.append((needle, no_anchor(attribute, url, path, served, fragment)))
    for needle, message in found["errors"]:
        problems.add(*where(needle), message)
    for needle, message in found["warnings"]:
        warnings.add(*where(needle), message)
    return elsewhere, own


def source_line(root: Path, source: str | None, url: str) -> tuple[str, int]:
    """Best place to point an author at: the source line naming the link's anchor or file."""
    if not source:
        return ("templates/", 0)
    try:
        lines = source_path(root, source).read_text(encoding="utf-8").splitlines()
    except OSError:
        return (source, 0)
    needle = url.split("#", 1)[1] if "#" in url else url.rsplit("/", 1)[-1]
    for number, line in enumerate(lines, 1):
        if needle and needle in line:
            return (source, number)
    return (source, 0)


PAGES_MAX_FILES = 20_000
PAGES_MAX_BYTES = 25 * 1024 * 1024


def check_pages_limits(files: dict[str, bytes]) -> None:
    """What Cloudflare Pages accepts: 20,000 files, 25 MiB each, ASCII paths."""
    problems = Collector()
    if len(files) > PAGES_MAX_FILES:
        problems.add("dist", 0, f"{len(files)} files; Cloudflare Pages takes at most {PAGES_MAX_FILES}")
    for path, data in sorted(files.items()):
        if size_of(data) > PAGES_MAX_BYTES:
            problems.add(path, 0, f"{size_of(data) / 2**20:.1f} MiB; Cloudflare Pages takes at most 25 MiB a file")
        if not path.isascii() or any(c in path for c in " ?#%\\"):
            problems.add(path, 0, "file names must be ASCII without spaces, ?, #, % or \\ "
                                  "(non-ASCII names break Pages' redirects)")
    if "404.html" not in files:
        problems.add("content/404.md", 0, "no 404.html: without it Pages answers every unknown URL with "
                                          "the home page and status 200; add content/404.md")
    problems.raise_if_any()
