"""Phase 3: content/*.md into Pages, and how a page's references resolve.

A page is YAML front matter between `---` lines, then Markdown in which a line
`::: kind args key=value` is a block the build fills in:

    ::: cell NAME [output=shown|collapsed]   a lab cell's code and printed output
    ::: table PATH axes=a,b caption="..."     a tensor from results.json as a table
                     [columns=PATH]           column labels: a list of names in results.json
    ::: downloads                             the lab's downloads with their sizes
    ::: widget LAB [view=NAME]                 the lab's own interactive widget (site.yaml: widget)
    ::: materials                             the lecture's map: the pages of `sequence:`, in order

What prose may say (values, figures, links, math) and how it resolves is
prose.py's.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
import shlex
from pathlib import Path

from .blocks import KINDS
from .bookparts import substitute
from .markup import in_code
from .dialects import CODE, ELSEWHERE, FOREIGN_FRONT_MATTER, translate

from ..core.errors import BuildError, Collector, Problem
from ..core.incremental import Phase
from ..core.memo import Memo
from .page import Block, Page
from ..core.sources import decode, read_bytes
from ..core.yamlfile import load_yaml
from ..project.nbsource import LAB_KEYS
from ..core.stored import sha256_of

DIRECTIVE = re.compile(r"^:::\s*(?P<kind>\S+)(?P<rest>.*)$")
INDENTED = re.compile(r"^ {1,3}:::\s*(?P<kind>[a-z][\w-]*)\b")     # (a block's line that an indent made text)
FRONT_MATTER = {"title": str, "description": str, "lab": str, "toc": bool, "parent": str, "url": str, "aliases": list,
                "minutes": int, "nocite": str}
# A published address: ASCII folders and a name, as Pages wants them (a trailing / for a folder's index).
URL = re.compile(r"^/?(?:[A-Za-z0-9][A-Za-z0-9._-]*/)*(?:[A-Za-z0-9][A-Za-z0-9._-]*)?$")
# A page's first line of prose as its title, as Jupyter Book and MkDocs read one: `# Title`, its label
# ({#label}, or MyST's `(label)=` above it, which translate made that) the title's.
TITLE = re.compile(r"^ {0,3}#[ \t]+(?P<title>.+?)(?:\s*\{#(?P<label>[^}\s]+)\})?(?:[ \t]+#+)?[ \t]*$")


def url_output(url: str) -> str | None:
    """The output file of a front matter `url` (course/lab11 -> course/lab11.html, course/ -> course/index.html),
    or None if it is not an address the site can publish."""
    if not URL.match(url) or ".." in url.split("/"):
        return None
    path = url.strip("/")
    if not path or url.endswith("/"):
        return (path + "/index.html").lstrip("/")
    return path if path.endswith(".html") else path + ".html"


def parse_page(text: str, source: str, output: str, memo=None) -> Page:
    problems = Collector()
    lines = text.splitlines()
    meta, body_start, meta_line = {}, 0, 1
    notes: list[tuple[int, str]] = []       # other tools' markup this site reads otherwise, or not at all
    substitutions: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration:
            raise BuildError(Problem(source, 1, "front matter opened with '---' is never closed; "
                                                     "add a line '---' after it")) from None
        loaded = load_yaml("\n".join(lines[1:end]), source, line_offset=1, memo=memo)
        meta_line = 2
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise BuildError(Problem(source, 2, "front matter must be a mapping (key: value lines)"))
        key_lines = getattr(loaded, "key_lines", {})
        for key, value in list(loaded.items()):
            line = key_lines.get(key, 0) + 1
            if key in ("substitutions", "myst") and isinstance(value, dict) and isinstance(
                    found := value if key == "substitutions" else value.get("substitutions"), dict):
                substitutions = {str(name): str(text) for name, text in found.items()}      # MyST's: {{ name }}
                if key == "myst" and len(value) > 1:
                    notes.append((line, "front matter 'myst': only its substitutions are read here (the rest left out)"))
                del loaded[key]
            elif key not in FRONT_MATTER and key in FOREIGN_FRONT_MATTER:
                notes.append((line, f"front matter '{key}' is {FOREIGN_FRONT_MATTER[key]}'s; this site does not "
                                    "read it: left out (delete it, or keep it for that tool)" + ELSEWHERE.get(key, "")))
                del loaded[key]
            elif key not in FRONT_MATTER:
                # (a notebook's front matter is a raw cell at its top: its lab is itself, and it may say how it runs)
                keys = (FRONT_MATTER.keys() - {"lab"}) | LAB_KEYS.keys() if source.endswith(".ipynb") else FRONT_MATTER
                near = difflib.get_close_matches(key, list(keys), 1)
                notes.append((line, f"unknown front matter key '{key}': left out (" + (
                    f"did you mean '{near[0]}'?" if near else f"expected one of: {', '.join(sorted(keys))}") + ")"))
                del loaded[key]
            elif value is None:             # (`title:` with nothing after it: not given, the first heading the title)
                del loaded[key]
            elif not isinstance(value, FRONT_MATTER[key]):
                problems.add(source, line, f"front matter '{key}' must be a "
                                           f"{FRONT_MATTER[key].__name__}, not {type(value).__name__}")
        meta, body_start = dict(loaded), end + 1
        if isinstance(meta.get("url"), str):
            output = url_output(meta["url"]) or output
            if url_output(meta["url"]) is None:
                problems.add(source, key_lines.get("url", 0) + 1, f"url {meta['url']!r} must be a path of ASCII "
                                                                  "names, e.g. course/lab11 (published as course/lab11.html)")
        for alias in meta.get("aliases", []) if isinstance(meta.get("aliases"), list) else []:
            if not (isinstance(alias, str) and alias.startswith("/") and URL.match(alias)):
                problems.add(source, key_lines.get("aliases", 0) + 1, f"aliases: {alias!r} must be an old address "
                                                                      "of this page, e.g. /course/old-name")
    blocks: list[Block] = []
    prose: list[str] = []
    prose_line = body_start + 1
    body, numbers = lines[body_start:], list(range(body_start + 1, len(lines) + 1))
    if substitutions:           # MyST's substitutions, outside code, before its markup is read (they may hold some)
        body, numbers = substitute(body, in_code(body, CODE), numbers, substitutions, "lab" in meta, notes)
    body, numbers, codes = translate(body, body_start, notes, computed="lab" in meta, numbers=numbers)
    body, title_label = _title(meta, body, numbers, codes)
    if "title" not in meta:
        problems.add(source, meta_line, "the page has no title: start it with a heading (`# Its title`), or give "
                                        "its front matter one (`title: Its title`)")
    for line, number, code in zip(body, numbers, codes):
        match = DIRECTIVE.match(line) if not code else None
        if not match and not code and (indented := INDENTED.match(line)):
            said = (f"'{line.strip()}' is indented, so it is read as text, not as a block: start it at the "
                    "line's margin" + (" (as it is, the solution shows in every build, a student's too)"
                                       if indented["kind"] == "solution" else ""))
            if indented["kind"] == "solution":
                problems.add(source, number, said)
            else:
                notes.append((number, said))
        if not match:
            if not prose:
                prose_line = number
            prose.append(line)
            continue
        if "".join(prose).strip():
            blocks.append(Block("prose", prose_line, "\n".join(prose)))
        prose = []
        block = _directive(match, source, number, problems)
        if block:
            blocks.append(block)
    if "".join(prose).strip():
        blocks.append(Block("prose", prose_line, "\n".join(prose)))
    _check_nesting(blocks, source, problems)
    problems.raise_if_any()
    return Page(source, output, meta, tuple(blocks), meta_line, notes=tuple(notes),
                kinds=tuple(sorted({block.kind for block in blocks})), title_label=title_label)


def _title(meta: dict, body: list[str], numbers: list[int], codes: list[bool]) -> tuple[list[str], tuple]:
    """The page's body without its first line of prose if that is its title's heading (`# Title`): the
    page's title when its front matter gives none, or the same title again (shown once, by the page);
    and that heading's label with its line, if it has one: the title's."""
    first = next((i for i, (line, code) in enumerate(zip(body, codes)) if line.strip() and not code), None)
    heading = TITLE.match(body[first]) if first is not None else None
    if not heading or meta.setdefault("title", heading["title"]) != heading["title"]:
        return body, ()
    return body[:first] + [""] + body[first + 1:], (heading["label"], numbers[first]) if heading["label"] else ()


def _check_nesting(blocks: list[Block], source: str, problems: Collector) -> None:
    """Containers (`::: exercise`, `::: note`, ... `::: end`) close, one that may not nest stands in
    none, and what belongs inside one (a hint, a solution) stands right inside it."""
    opened: list[tuple[Block, list[str]]] = []      # the open containers, innermost last, with their parts
    for block in blocks:
        kind = KINDS.get(block.kind)
        if kind is None:
            continue
        if block.kind == "end":
            if not opened:
                problems.add(source, block.line, "'::: end' closes nothing: it ends an exercise or a callout "
                                                 "opened above it ('::: exercise', '::: note', ...)")
            else:
                opened.pop()
            continue
        if kind.container and opened and not kind.nests:
            outer = opened[-1][0]
            problems.add(source, block.line, f"'::: {block.kind}' inside the {outer.kind} opened at line "
                                             f"{outer.line}: close that one with '::: end' first")
        if kind.within:
            inner, parts = opened[-1] if opened else (None, [])
            if inner is None or inner.kind != kind.within:
                problems.add(source, block.line, f"'::: {block.kind}' belongs inside {'an' if kind.within[0] in 'aeiou' else 'a'} {kind.within}: open one "
                                                 f"with '::: {kind.within}' above it"
                             + (f" (the {inner.kind} opened at line {inner.line} is open: close it with "
                                "'::: end' first)" if inner is not None else ""))
            elif parts and KINDS[parts[-1]].last:
                problems.add(source, block.line, f"'::: {block.kind}' after the {parts[-1]} at the {kind.within}'s "
                                                 f"end: put it before, so that the {parts[-1]} comes last")
            parts.append(block.kind)
        if kind.container:
            opened.append((block, []))
    for block, _ in opened:
        problems.add(source, block.line, f"'::: {block.kind}' is never closed: add a line '::: end' after it")


def _directive(match, source, number, problems) -> Block | None:
    kind = match["kind"]
    if kind not in KINDS:
        near = " or ".join(f"'::: {name}'" for name in difflib.get_close_matches(kind, list(KINDS), 3))
        problems.add(source, number, f"unknown block '::: {kind}' ("
                     + (f"did you mean {near}?" if near else f"expected one of: {', '.join(KINDS)}") + ")")
        return None
    try:
        words = shlex.split(match["rest"])
    except ValueError as exc:
        problems.add(source, number, f"'::: {kind}': {exc} (quote values with spaces: key=\"a b\")")
        return None
    allowed, count = KINDS[kind].options, KINDS[kind].names
    args = tuple(w for w in words if "=" not in w)
    options = dict(w.split("=", 1) for w in words if "=" in w)
    for key, value in options.items():
        if key not in allowed:
            problems.add(source, number, f"'::: {kind}' has no option '{key}'"
                                         + (f" (expected: {', '.join(sorted(allowed))})" if allowed else ""))
        elif allowed[key] is not None and value not in allowed[key]:
            problems.add(source, number, f"{kind} option {key}= must be "
                                         + " or ".join(f"'{v}'" for v in allowed[key]))
    if len(args) != count:
        problems.add(source, number, f"'::: {kind}' takes {count} name{'s' if count != 1 else ''}, got {len(args)}")
        return None
    return Block(kind, number, args=args, options=options)


IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg",
          ".mp4", ".m4v", ".webm", ".mp3", ".ogg", ".wav")      # and the videos and sounds a page plays


# What each kind of file kept beside the pages begins with: a file named as an image is published only
# when it is one (a `leak.svg` holding a copied .env is not).
SIGNATURES = {".png": (b"\x89PNG\r\n\x1a\n",), ".jpg": (b"\xff\xd8\xff",), ".jpeg": (b"\xff\xd8\xff",),
              ".gif": (b"GIF87a", b"GIF89a"), ".webp": (b"RIFF",), ".webm": (b"\x1a\x45\xdf\xa3",),
              ".mp3": (b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"), ".ogg": (b"OggS",), ".wav": (b"RIFF",)}


PICTURES = (".png", ".jpg", ".gif", ".webp")     # formats a browser shows by their bytes, whatever the name says


def media_problem(rel: str, head: bytes) -> tuple[str, bool] | None:
    """What is wrong with a file beside the pages whose first 1,024 bytes are `head`, given its name, and
    whether it keeps it from being published; None when it is what its name says. A picture in another
    picture's format (a PNG named .jpg, as real repositories hold) is published: browsers show it by its bytes."""
    suffix = os.path.splitext(rel)[1].lower()
    if _holds(suffix, head):
        return None
    if suffix in (*PICTURES, ".jpeg") and (kind := next((other for other in PICTURES if _holds(other, head)), None)):
        return f"it is a {kind[1:].upper()} image named {suffix}: browsers show it; rename it to {kind}", False
    return (f"is named as a {suffix[1:]} file but its bytes are not one: only images, videos and "
            f"sounds are published beside pages; rename or remove it", True)     # (its bytes unsaid: a secret?)


def _holds(suffix: str, head: bytes) -> bool:
    """Whether a file's first bytes are those of a file of this suffix's format."""
    if suffix == ".svg":
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
        return text.startswith((b"<svg", b"<?xml", b"<!--", b"<!doctype svg")) and b"<svg" in head.lower()
    if suffix in (".mp4", ".m4v"):
        return head[4:8] == b"ftyp"
    return head.startswith(SIGNATURES[suffix]) and (suffix not in (".webp", ".wav") or
                                                    head[8:12] == (b"WEBP" if suffix == ".webp" else b"WAVE"))


def content_images(content_dir: Path, snapshot: dict[str, str]) -> dict[str, Path]:
    """Images (and videos, sounds) kept beside the pages (content/x/images/a.png), published at the same place
    (x/images/a.png), so that a page's relative links to them work as written: among the
    sources the build's snapshot took (`snapshot`), as the pages are."""
    images = [rel[len("content/"):] for rel in snapshot
              if rel.startswith("content/") and os.path.splitext(rel)[1].lower() in IMAGES]
    return {rel: content_dir / rel for rel in sorted(images, key=lambda rel: rel.split("/"))}


def load_pages(content_dir: Path, snapshot: dict[str, str], memo: Memo | None = None,
               notebooks: frozenset[str] = frozenset()) -> list[Page]:
    """Every page (content/**.md among the sources the build's snapshot took: `snapshot`, source ->
    SHA-256, but the MyST Markdown `notebooks`, which are notebook pages: nbpage.py), parsed; with a
    Memo, a page whose text did not change is neither read nor parsed again."""
    memo = memo or Memo(None)
    problems: list = []
    pages = []
    # (the last build's entry of each page, by its text's hash: its key is not worked out again)
    with Phase(memo, "parsed") as phase:
        for source in sorted((rel for rel in snapshot if rel.startswith("content/") and rel.endswith(".md")
                              and rel not in notebooks),
                             key=lambda rel: rel.split("/")):
            rel = source[len("content/"):]
            output = rel[: -len(".md")] + ".html"           # content/x/y.md is published as x/y.html
            try:
                record = phase.reuse(source, (snapshot[source],)) or phase.made(source, (snapshot[source],),
                                                                              (source, snapshot[source]))
                found = memo.value(record.entry) if record is not None else None
                if found is None:
                    data = read_bytes(content_dir / rel, source, snapshot)
                    digest = sha256_of(data)     # what was read (it may have changed since)
                    phase.made(source, (digest,), (source, digest))
                    found = memo.value("parsed", (source, digest), lambda: dataclasses.replace(
                        parse_page(decode(data, source), source, output, memo), digest=digest))
                pages.append(found)
            except BuildError as exc:
                problems.extend(exc.problems)
        if problems:
            raise BuildError(problems)
    return pages
