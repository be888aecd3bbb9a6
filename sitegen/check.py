"""Phase 4: verify every reference before anything is rendered.

Cells, tables, values, figures and links of every page are resolved against
the labs' artifacts and the set of files the site will contain; all problems
are reported together, each as `content/...md:LINE: ...`.
"""
from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from .artifacts import NARROW, Artifacts, artifacts_digest
from .blocks import KINDS, Checking
from .config import SiteConfig
from .memo import Memo, digest
from .content import Page, content_images
from .prose import (LINK, VALUE, SiteMap, Unresolved, block_formulas, format_value, is_external, lookup,
                    resolve_target, to_mathml)
from .errors import Collector, Problem
from .stored import Stored, bytes_of, sha256_of, size_of


def lab_outputs(art: Artifacts) -> set[str]:
    """Every path a lab publishes: its notebook, downloads and figures."""
    paths = {f"{art.lab.downloads}/{name}" for name in art.hashes if not name.endswith(".png")}
    paths.update(art.figure_path(name) for name in art.figures)
    if art.lab.notebook:
        paths.add(art.lab.notebook)
    return paths


def site_map(cfg: SiteConfig, pages: list[Page], published: dict[str, set[str]], hashes: dict[str, str]) -> SiteMap:
    """Every path a link may point to: the pages, the images beside them, and what the labs publish
    (`published`: lab id -> its lab_outputs; `hashes`: the build's snapshot of the sources)."""
    images = content_images(cfg.content_dir, hashes)
    return SiteMap(set().union(*published.values()) | {page.output for page in pages} | set(images),
                   {page.content_path: page.output for page in pages}, images)


def check_site(cfg: SiteConfig, pages: list[Page], artifacts: dict[str, Artifacts], hashes: dict[str, str],
               memo: Memo | None = None) -> SiteMap:
    """Raises every problem at once; else the site map, for rendering (`hashes`: the build's snapshot)."""
    problems = Collector()
    checking = Checking(cfg, problems)
    for art in artifacts.values():
        for name in art.figures:
            if name.endswith(NARROW) and name[: -len(NARROW)] + ".png" not in art.figures:
                problems.add("site.yaml", art.lab.line, f"lab {art.lab.id} saved {name}, a narrow variant of "
                             f"{name[: -len(NARROW)]}.png, which it did not save: save both, or name it otherwise")
    problems.raise_if_any()
    published = {lab_id: lab_outputs(art) for lab_id, art in artifacts.items()}
    sitemap = site_map(cfg, pages, published, hashes)
    writers: dict[str, str] = {}
    for page in pages:
        if page.output in writers:
            problems.add(page.source, 0, f"two pages write {page.output}: this one and {writers[page.output]}")
        writers[page.output] = page.source
    for output in sitemap.images:
        writers.setdefault(output, f"content/{output}")
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
    # What a page's check depends on besides its own text: the site's settings, every lab's
    # outputs (by their provenance, which hashes each file) and every published path.
    context = digest(cfg.digest, cfg.base_url, artifacts_digest(artifacts),
                     sitemap.digest)
    last = memo.recorded("page-check", context) if memo is not None else {}
    checked = {}                    # source -> (output, digest, its entry's name): what this build records
    for page in pages:
        seen = memo.reused(last, page.source, (page.output, page.digest)) if memo is not None else None
        if seen is not None:
            checked[page.source] = seen         # as the last build found it, in this same context
            continue
        key = (context, page.source, page.output, page.digest)
        # (a page not read from its file has no digest)
        name = memo.name("page-check", key) if memo is not None and page.digest else None
        if name is not None and memo.entry(name) is not None:
            checked[page.source] = (page.output, page.digest, name)
            continue                # checked, with this text and all it refers to, and found right
        before = len(problems.problems)
        _check_page(page, artifacts, sitemap, checking, problems, memo)
        if name is not None and len(problems.problems) == before:
            memo.put("page-check", key, b"ok")
            checked[page.source] = (page.output, page.digest, name)
    problems.raise_if_any()
    if memo is not None:
        memo.record("page-check", context, checked)
    return sitemap


def _check_page(page, artifacts, sitemap, checking, problems, memo) -> None:
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
    for block in page.blocks:
        if block.kind == "prose":
            if (VALUE.search(block.text) or "figure:" in block.text) and art is None:
                if not page.lab:
                    problems.add(page.source, block.line,
                                 "this refers to a lab, but the front matter names none: add 'lab: ID'")
                continue
            _prose(page, block, art, results, sitemap, problems, memo)
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


def _prose(page, block, art, results, sitemap, problems, memo):
    for number, tex, display in block_formulas(block):
        try:
            to_mathml(tex, display, memo)
        except Unresolved as exc:
            problems.add(page.source, number, str(exc))
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
                    resolve_target(page, target, sitemap)
                except Unresolved as exc:
                    problems.add(page.source, number, str(exc))


# -- the rendered site -------------------------------------------------------

# The build writes every attribute double-quoted (Jinja, Python-Markdown), and a
# quote inside text or code is escaped, so attributes can be read without a parser.
ATTRIBUTE = re.compile(r'\s(id|href|src)="([^"]*)"')
INLINE_CODE = [  # what the Content-Security-Policy (script-src/style-src 'self') would block, and a word
    # without which (in the lowercased page) it cannot be there: most pages need none of these searches
    (re.compile(r"<script\b(?![^>]*\ssrc=)[^>]*>", re.I), "an inline <script>", "<script"),
    (re.compile(r"<style\b", re.I), "an inline <style>", "<style"),
    (re.compile(r"<[a-z][^>]*\sstyle=", re.I), "a style= attribute", "style="),
    (re.compile(r"<[a-z][^>]*\son[a-z]+=", re.I), "an on...= event handler", re.compile(r"\son[a-z]+=")),
    (re.compile(r"href=\"\s*javascript:", re.I), "a javascript: link", "javascript:"),
]
# Elements that make a browser load or send something, and the attributes that say where. The
# pages may load only the site's own files: nothing from another origin (a filtered network, a
# student's privacy), and no redirect elsewhere.
LOADS = {"script": ("src",), "iframe": ("src",), "frame": ("src",), "img": ("src", "srcset"),
         "link": ("href",), "object": ("data",), "embed": ("src",), "form": ("action",), "base": ("href",),
         "video": ("src", "poster"), "audio": ("src",), "source": ("src", "srcset"), "track": ("src",),
         "input": ("src", "formaction"), "button": ("formaction",), "a": ("ping",), "area": ("ping",)}
NOT_LOADED = {"canonical", "alternate", "author", "license", "help", "prev", "next", "me"}   # <link rel=...>
LOADING_TAG = re.compile(r"<(%s|meta)\b[^>]*>" % "|".join(LOADS), re.I)
TAG_ATTRIBUTE = re.compile(r"""([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?""")
IMG_NO_ALT = re.compile(r'<img\b(?![^>]*\salt="[^"]+")[^>]*>', re.I)
EXTERNAL_NO_REL = re.compile(r'<a\b(?=[^>]*\shref="https?://)(?![^>]*\srel=)[^>]*>', re.I)
HEADING = re.compile(r"<h([2-6])\b[^>]*>(.*?)</h\1>", re.S)
NEXT_HEADING = re.compile(r"\s*(?:<h([2-6])\b|</article>)")
HEADING_ANCHOR = re.compile(r'<a class="heading-anchor".*?</a>', re.S)


def served_file(url_path: str, files: dict) -> str | None:
    """The output file Cloudflare Pages answers a path with (at most one redirect)."""
    path = url_path.lstrip("/")
    for candidate in (path, path + ".html", path.rstrip("/") + "/index.html" if path else "index.html",
                      path[:-1] + ".html" if path.endswith("/") else None):
        if candidate is not None and candidate.lstrip("/") in files:
            return candidate.lstrip("/")
    return None


def check_rendered(cfg: SiteConfig, pages: list[Page], files: dict[str, bytes], memo: Memo | None = None) -> list[Problem]:
    """Every rendered HTML file: links and #anchors resolve and nothing breaks the CSP
    (errors, raised together); images without alt text, empty sections and
    external links without rel are returned as warnings. What one file says on its own is
    remembered under its bytes (`memo`). A file as the last build found it, when the site publishes
    the same paths, needs no look again but at its links into files that changed (their #anchors)."""
    problems, warnings = Collector(), Collector()
    sources = {page.output: page.source for page in pages}
    context = digest(cfg.base_url, "\0".join(sorted(files)))
    last = memo.recorded("html-check", context) if memo is not None else {}
    records, seen = {}, {}      # path -> what the next build needs of it; path -> what it says (read anew)
    shas = {path: sha256_of(files[path]) for path in sorted(path for path in files if path.endswith(".html"))}
    for path, sha in shas.items():
        found = memo.reused(last, path, (sha,)) if memo is not None else None
        if found is not None:
            records[path] = found
        else:
            seen[path] = _read_html(path, files[path], cfg.base_url, memo, sha)
    served_at: dict[str, str | None] = {}       # every page links to the same few: each looked up once
    unchanged = set(records)

    def ids(path: str) -> set:
        if path not in seen:                    # a file as last time, into which a changed one links
            seen[path] = _read_html(path, files[path], cfg.base_url, memo, shas[path])
        return seen[path]["ids"]

    for path in sorted(unchanged | seen.keys()):
        def where(needle: str) -> tuple[str, int]:
            return _source_line(cfg.root, sources.get(path), needle)
        if path in unchanged:                   # found right last time: only its links into changed files
            for attribute, url, served, fragment, needle in records[path][2]:
                if served not in unchanged and fragment not in ids(served):
                    problems.add(*where(needle), f"{attribute}=\"{url}\" in {path}: {served} has no id '{fragment}'")
            for needle, message in records[path][3]:
                warnings.add(*where(needle), message)
            continue
        found, elsewhere = seen[path], []
        for attribute, url, target, fragment, needle in found["links"]:
            if target not in served_at:
                served_at[target] = served_file(target, files)
            served = served_at[target]
            if served is None:
                problems.add(*where(needle), f"{attribute}=\"{url}\" in {path} points to no file of the site")
            elif fragment and served.endswith(".html") and served in files:
                if fragment not in ids(served):
                    problems.add(*where(needle), f"{attribute}=\"{url}\" in {path}: {served} has no id '{fragment}'")
                elif served != path:
                    elsewhere.append((attribute, url, served, fragment, needle))
        for needle, message in found["errors"]:
            problems.add(*where(needle), message)
        for needle, message in found["warnings"]:
            warnings.add(*where(needle), message)
        if memo is not None and (name := memo.name("html-check", (path, cfg.base_url,
                                                                   shas[path]))) is not None:
            records[path] = (shas[path], name, elsewhere, found["warnings"])
    problems.raise_if_any()
    if memo is not None:
        memo.record("html-check", context, {path: records[path] for path in sorted(records)})
    return warnings.problems


def _read_html(path: str, data: bytes | Stored, base_url: str, memo: Memo | None, sha: str | None = None) -> dict:
    """What one HTML file says on its own: its ids, its links into the site (each with the path and
    #fragment it asks for), and its problems, with the text that finds each in its source. With a
    memo, remembered under the file's SHA-256 (`sha`, when the caller has it)."""
    if memo is not None:
        return memo.remember("html-check", (path, base_url, sha or sha256_of(data)),
                             lambda: _read_html(path, data, base_url, None))
    text = bytes_of(data).decode("utf-8")
    base = urlsplit(base_url)
    here = f"{base.scheme}://{base.netloc}/{path}"
    ids, links, errors, warnings = set(), [], [], []
    for name, value in ATTRIBUTE.findall(text):
        value = html.unescape(value)
        if name == "id":
            ids.add(value)
            continue
        target = urlsplit(urljoin(here, value))
        if target.netloc == base.netloc and target.scheme in ("http", "https"):
            needle = value.split("#", 1)[1] if "#" in value else value.rsplit("/", 1)[-1]
            links.append((name, value, unquote(target.path), unquote(target.fragment), needle))
    lowered = text.lower()
    for pattern, what, word in INLINE_CODE:
        if (word not in lowered) if isinstance(word, str) else not word.search(lowered):
            continue
        for match in pattern.finditer(text):
            errors.append((match.group(0)[:12], f"{path} has {what}, which the site's "
                           "Content-Security-Policy blocks: move it to static/ and load it by URL"))
    for match in LOADING_TAG.finditer(text):
        errors += [(needle, f"{path} has {problem}") for needle, problem in _off_site(match, here, base.netloc)]
    for match in IMG_NO_ALT.finditer(text):
        warnings.append((match.group(0)[:30], f"{path}: an image without alt text: {match.group(0)[:80]}"))
    for match in EXTERNAL_NO_REL.finditer(text):
        warnings.append((match.group(0)[9:40], f"{path}: external link without rel "
                                               f"(add rel=\"noopener\"): {match.group(0)[:80]}"))
    for match in HEADING.finditer(text):
        after = NEXT_HEADING.match(text, match.end())
        if after and (after.group(1) is None or int(after.group(1)) <= int(match.group(1))):
            title = html.unescape(re.sub(r"<[^>]+>", "", HEADING_ANCHOR.sub("", match.group(2)))).strip()
            warnings.append((title, f"{path}: section '{title}' is empty"))
    return {"ids": ids, "links": links, "errors": errors, "warnings": warnings}


def _off_site(tag, page_url: str, host: str) -> list[tuple[str, str]]:
    """(URL, problem) for what in one tag loads from another origin or redirects the reader."""
    name = tag.group(1).lower()
    attributes = {m[1].lower(): html.unescape(m[2] or m[3] or m[4] or "") for m in TAG_ATTRIBUTE.finditer(tag.group(0)[len(name) + 1:])}
    if name == "meta":
        if attributes.get("http-equiv", "").lower() == "refresh":
            return [(attributes.get("content", "http-equiv"),
                     '<meta http-equiv="refresh">, which sends readers to another address: link to it instead')]
        return []
    if name == "link" and set(attributes.get("rel", "").lower().split()) <= NOT_LOADED and attributes.get("rel"):
        return []
    found = []
    for attribute in LOADS[name]:
        value = attributes.get(attribute, "").strip()
        urls = [part.strip().split()[0] for part in value.split(",") if part.strip()] if attribute == "srcset" else [value]
        for url in filter(None, urls):
            target = urlsplit(urljoin(page_url, url))
            if target.scheme == "data" and name in ("img", "source", "video") or \
                    (target.scheme in ("http", "https") and target.netloc == host):
                continue
            found.append((url, f"<{name} {attribute}=\"{url}\">, which loads from {target.scheme}://{target.netloc}: "
                               "pages may load only the site's own files (put it in static/ or a lab's outputs)"))
    return found


def _source_line(root: Path, source: str | None, url: str) -> tuple[str, int]:
    """Best place to point an author at: the source line naming the link's anchor or file."""
    if not source:
        return ("templates/", 0)
    try:
        lines = (root / source).read_text(encoding="utf-8").splitlines()
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
