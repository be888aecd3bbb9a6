"""Phase 3: content/*.md into Pages, and how a page's references resolve.

A page is YAML front matter between `---` lines, then Markdown in which a line
`::: kind args key=value` is a block the build fills in:

    ::: cell NAME [output=shown|collapsed]   a lab cell's code and printed output
    ::: table PATH axes=a,b caption="..."     a tensor from results.json as a table
                     [columns=PATH]           column labels: a list of names in results.json
    ::: downloads                             the lab's downloads with their sizes
    ::: explorer LAB [view=compact]           the live encoder explorer on LAB's weights

In prose, `{{ path }}` is a value from the lab's results.json (4 decimals, or
`{{ path | .2e }}`), `![alt](figure:NAME.png)` is a figure the lab saved,
links name pages by their source (`guide.md#anchor`) or site path (`/course/x`),
and `$...$` (inline) or a line `$$...$$` (display) is LaTeX math.
"""
from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .config import load_yaml
from .errors import BuildError, Collector, Problem
from .memo import Memo, package_version
from .sources import read_text

DIRECTIVE = re.compile(r"^:::\s*(?P<kind>\S+)(?P<rest>.*)$")
VALUE = re.compile(r"\{\{\s*(?P<path>[^}|]+?)\s*(?:\|\s*(?P<spec>[^}]*?)\s*)?\}\}")
LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
DISPLAY_MATH = re.compile(r"^\s*\$\$(?P<tex>.+?)\$\$\s*$")
INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?=\S)(?P<tex>[^$\n]+?)(?<=\S)\$(?![\w$])")
CODE_SPAN = re.compile(r"(`+).+?\1")
PATH_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]")
BLOCKS = {"cell": ({"output"}, 1), "table": ({"axes", "caption", "columns"}, 1), "downloads": (set(), 0),
          "explorer": ({"view"}, 1)}
FRONT_MATTER = {"title": str, "description": str, "lab": str, "toc": bool, "parent": str}
REQUIRED = {"title"}


@dataclass(frozen=True)
class Block:
    kind: str                      # prose, cell, table or downloads
    line: int                      # first line in the page's source file
    text: str = ""                 # prose only: its Markdown
    args: tuple[str, ...] = ()
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Page:
    source: str                    # e.g. content/course/lab11.md
    output: str                    # e.g. course/lab11.html
    meta: dict
    blocks: tuple[Block, ...]
    meta_line: int = 1

    @property
    def title(self) -> str:
        return self.meta["title"]

    @property
    def lab(self) -> str | None:
        return self.meta.get("lab")

    @property
    def content_path(self) -> str:
        """Path inside content/, as site.yaml names pages."""
        return self.source[len("content/"):]


def output_path(rel_source: PurePosixPath | str) -> str:
    """content/x/y.md is published as x/y.html."""
    return str(PurePosixPath(rel_source).with_suffix(".html"))


def parse_page(text: str, source: str, output: str) -> Page:
    problems = Collector()
    lines = text.splitlines()
    meta, body_start, meta_line = {}, 0, 1
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration:
            raise BuildError(Problem(source, 1, "front matter opened with '---' is never closed; "
                                                     "add a line '---' after it")) from None
        loaded = load_yaml("\n".join(lines[1:end]), source, line_offset=1)
        meta_line = 2
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise BuildError(Problem(source, 2, "front matter must be a mapping (key: value lines)"))
        key_lines = getattr(loaded, "key_lines", {})
        for key, value in loaded.items():
            line = key_lines.get(key, 0) + 1
            if key not in FRONT_MATTER:
                problems.add(source, line, f"unknown front matter key '{key}' "
                                           f"(expected one of: {', '.join(sorted(FRONT_MATTER))})")
            elif not isinstance(value, FRONT_MATTER[key]):
                problems.add(source, line, f"front matter '{key}' must be a "
                                           f"{FRONT_MATTER[key].__name__}, not {type(value).__name__}")
        meta, body_start = dict(loaded), end + 1
    for key in sorted(REQUIRED - set(meta)):
        problems.add(source, meta_line, f"front matter is missing required key '{key}'")

    blocks: list[Block] = []
    prose: list[str] = []
    prose_line = body_start + 1
    fence = None
    for index in range(body_start, len(lines)):
        line, number = lines[index], index + 1
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
        match = DIRECTIVE.match(line) if fence is None else None
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
    problems.raise_if_any()
    return Page(source, output, meta, tuple(blocks), meta_line)


def _directive(match, source, number, problems) -> Block | None:
    kind = match["kind"]
    if kind not in BLOCKS:
        problems.add(source, number, f"unknown block '::: {kind}' (expected one of: {', '.join(BLOCKS)})")
        return None
    try:
        words = shlex.split(match["rest"])
    except ValueError as exc:
        problems.add(source, number, f"'::: {kind}': {exc} (quote values with spaces: key=\"a b\")")
        return None
    allowed, count = BLOCKS[kind]
    args = tuple(w for w in words if "=" not in w)
    options = dict(w.split("=", 1) for w in words if "=" in w)
    for key in options:
        if key not in allowed:
            problems.add(source, number, f"'::: {kind}' has no option '{key}'"
                                         + (f" (expected: {', '.join(sorted(allowed))})" if allowed else ""))
    if len(args) != count:
        problems.add(source, number, f"'::: {kind}' takes {count} name{'s' if count != 1 else ''}, got {len(args)}")
        return None
    return Block(kind, number, args=args, options=options)


def load_pages(content_dir: Path) -> list[Page]:
    problems: list = []
    pages = []
    for path in sorted(content_dir.rglob("*.md")):
        rel = PurePosixPath(path.relative_to(content_dir).as_posix())
        source = f"content/{rel}"
        try:
            pages.append(parse_page(read_text(path, source), source, output_path(rel)))
        except BuildError as exc:
            problems.extend(exc.problems)
    if problems:
        raise BuildError(problems)
    return pages


# -- resolving references ---------------------------------------------------

class Unresolved(LookupError):
    """A reference that does not resolve; its message says what exists."""


def math_spans(line: str) -> list[tuple[int, int, str, bool]]:
    """(start, end, LaTeX, display) of each formula in a line, outside `code`."""
    display = DISPLAY_MATH.match(line)
    if display:
        return [(0, len(line), display["tex"].strip(), True)]
    code = [m.span() for m in CODE_SPAN.finditer(line)]
    return [(m.start(), m.end(), m["tex"], False) for m in INLINE_MATH.finditer(line)
            if not any(a <= m.start() < b for a, b in code)]


def to_mathml(tex: str, display: bool, memo: Memo | None = None) -> str:
    """MathML for the browser to render: no script, no font download.

    Remembered in the memo: importing latex2mathml costs more than the rest of
    a prose-edit rebuild's rendering.
    """
    def convert() -> bytes:
        from latex2mathml.converter import convert
        try:
            return convert(tex, display="block" if display else "inline").encode()
        except Exception as exc:  # noqa: BLE001 - latex2mathml raises many kinds
            raise Unresolved(f"math ${tex}$ is not LaTeX that can be read: {type(exc).__name__} {exc}".rstrip())
    if memo is None:
        return convert().decode()
    return memo.get("mathml", (package_version("latex2mathml"), tex, display), convert).decode()


def lookup(data, path: str):
    """`trace.attention[0]` in results.json: the value, or Unresolved."""
    tokens = list(PATH_TOKEN.finditer(path))
    if not tokens or "".join(t.group(0) for t in tokens) != path or path.startswith("."):
        raise Unresolved(f"'{path}' is not a value path like name.key[0]")
    value, walked = data, ""
    for token in tokens:
        key, index = token.group(1), token.group(2)
        if key is not None:
            if not isinstance(value, dict) or key not in value:
                options = ", ".join(sorted(value)) if isinstance(value, dict) else "none (not a mapping)"
                raise Unresolved(f"no '{key}' in {walked or 'results.json'}; it has: {options}")
            value = value[key]
        else:
            i = int(index)
            if not isinstance(value, list) or not -len(value) <= i < len(value):
                size = len(value) if isinstance(value, list) else 0
                raise Unresolved(f"index [{i}] out of range in {walked} (length {size})")
            value = value[i]
        walked += token.group(0)
    return value


def format_value(value, spec: str | None = None) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if spec:
            raise Unresolved(f"format '{spec}' applies to numbers, not {type(value).__name__}")
        return str(value)
    if spec:
        try:
            text = format(value, spec)
        except ValueError as exc:
            raise Unresolved(f"bad number format '{spec}': {exc}") from None
    else:
        text = str(value) if isinstance(value, int) else f"{value:.4f}"
    return "0" + text[2:] if re.fullmatch(r"-0(\.0*)?(e[+-]0+)?", text) else text


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9+.-]*:", target)) and not target.startswith("figure:")


def resolve_target(page: Page, target: str, outputs: set[str]) -> tuple[str, str]:
    """An internal link as (output path, fragment); raises Unresolved."""
    path, _, fragment = target.partition("#")
    if not path:
        return page.output, fragment
    if path.startswith("/"):
        candidates = [path.strip("/"), path.strip("/") + ".html",
                      (path.strip("/") + "/index.html").lstrip("/")]
    else:
        normal = posixpath.normpath(posixpath.join(posixpath.dirname(page.output), path))
        if normal == ".." or normal.startswith("../"):
            raise Unresolved(f"link '{target}' leaves the site")
        candidates = [output_path(PurePosixPath(normal))] if normal.endswith(".md") else [normal]
    for candidate in candidates:
        if candidate in outputs:
            return candidate, fragment
    raise Unresolved(f"link '{target}' points to nothing the site builds")


def pretty_url(output: str) -> str:
    """The form Cloudflare Pages serves without a redirect: x.html -> x, a/index.html -> a/."""
    if output == "index.html" or output.endswith("/index.html"):
        return output[: -len("index.html")]
    return output[: -len(".html")] if output.endswith(".html") else output


def relative_url(from_output: str, to_output: str, fragment: str = "") -> str:
    """A relative href from one output file to another, in the no-redirect form.

    404.html is answered at any unknown path, so its links are root-absolute.
    """
    target = pretty_url(to_output)
    if from_output == "404.html":
        return "/" + target + (f"#{fragment}" if fragment else "")
    is_dir = not target or target.endswith("/")
    parts = PurePosixPath(target).parts if target else ()
    folder, name = (parts, "") if is_dir else (parts[:-1], parts[-1])
    base = PurePosixPath(from_output).parent.parts
    common = 0
    while common < min(len(base), len(folder)) and base[common] == folder[common]:
        common += 1
    pieces = [".."] * (len(base) - common) + list(folder[common:])
    rel = "/".join(pieces + ([name] if name else [])) + ("/" if is_dir and pieces else "")
    return (rel or "./") + (f"#{fragment}" if fragment else "")
