"""What prose may say, and how it resolves: values, figures, links and math.

In a page's Markdown, `{{ path }}` is a value from the lab's results.json (4
decimals, or `{{ path | .2e }}`), `![alt](figure:NAME.png)` is a figure the
lab saved, links name pages by their source (`guide.md#anchor`) or site path
(`/course/x`), and `$...$` (inline) or a line `$$...$$` (display) is LaTeX
math. check verifies every reference; render (the page) and notebook (the
download) both resolve prose through transform_prose, each with its own
idea of a link and a figure.
"""
from __future__ import annotations

import functools
import html
import json
import posixpath
import re
from pathlib import PurePosixPath

from typing import TYPE_CHECKING

from ..core.memo import Memo, digest, package_version
from ..core.sources import PAGE_FILES
from .bookparts import PATH_TOKEN, is_value_path, outside_spans
from .markup import LIST_ITEM, code_spans, in_code
from .labels import LABELLED_FIGURE, LABELLED_MATH, TABLE_CAPTION, References, SiteLabels, page_labels

if TYPE_CHECKING:              # content reads pages with blocks.py, which resolves prose through here
    from .page import Page

VALUE = re.compile(r"\{\{\s*(?P<path>[^}|]+?)\s*(?:\|\s*(?P<spec>[^}]*?)\s*)?\}\}")
def values(line: str) -> list[re.Match]:
    """The values `{{ path }}` a line of prose names: not LaTeX's own braces in a formula (`$\\mathbf{{x}}$`, as
    Jupyter and MyST read it; a value in a formula is spaced, `${{ x }}$`), nor Quarto's shortcodes ({{< ... >}})."""
    found = [match for match in VALUE.finditer(line) if not match["path"].startswith(("<", "%"))]
    if not found or "$" not in line:
        return found
    spans = [(a, b) for a, b, _, _ in math_spans(line)]
    return [match for match in found if not any(a <= match.start() < b for a, b in spans)
            or (match[0][2].isspace() and match[0][-3].isspace())]


def with_values(line: str, value) -> str:
    """`line` with each of its values (values()) replaced by `value(match)`."""
    parts, at = [], 0
    for match in values(line):
        parts += [line[at:match.start()], value(match)]
        at = match.end()
    return "".join(parts) + line[at:]


LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
DISPLAY_MATH = re.compile(r"^\s*\$\$(?P<tex>.+?)\$\$\s*(?:\{#[^}\s]+\}\s*)?$")    # (a label: labels.py)
# Inline math as Pandoc reads it: a `$` with no space after it, up to a `$` with no space before it and no
# digit after it (so "$5 and $6" is money); beside any letter, a Chinese one as well (紧贴中文的$\alpha$公式).
INLINE_MATH = re.compile(r"(?<![\\$])\$(?=[^\s$])(?P<tex>[^$\n]+?)(?<=\S)\$(?![\d$])")
# A display formula inside a line (a sentence, a table's cell, a footnote), as Pandoc and MyST's dollarmath read it.
DISPLAY_INLINE = re.compile(r"(?<![\\$])\$\$(?=[^$])(?P<tex>[^$\n]*?\S[^$\n]*?)\$\$(?!\$)")
FIGURE_LINE = re.compile(r"^\s*!\[(?P<alt>[^\]]+)\]\(figure:(?P<name>[^)\s]+)(?:\s+\"(?P<title>[^\"]*)\")?\)\s*$")


class Unresolved(LookupError):
    """A reference that does not resolve; its message says what exists."""


def math_spans(line: str) -> list[tuple[int, int, str, bool]]:
    """(start, end, LaTeX, display) of each formula in a line, outside `code`."""
    display = DISPLAY_MATH.match(line)
    if display:
        return [(0, len(line), display["tex"].strip(), True)]
    code = code_spans(line) if "`" in line else ()
    found = [(m.start(), m.end(), m["tex"], False) for m in INLINE_MATH.finditer(line)] + \
        ([(m.start(), m.end(), m["tex"].strip(), True) for m in DISPLAY_INLINE.finditer(line)] if "$$" in line else [])
    return sorted(span for span in found if not any(a <= span[0] < b for a, b in code))


# A line that a paragraph's next line continues (not a heading, an item, a quote, a table, a fence or a div).
CONTINUED = re.compile(r"^ {0,3}(?![#>|]|[*+-]\s|\d{1,9}[.)]\s|`{3}|~{3}|:{3}|\$\$)\S")
OPENING_DOLLAR = re.compile(r"(?<![\\$])\$(?=[^\s$])")


def paragraph_lines(lines: list[str]) -> list[tuple[int, str, bool]]:
    """(offset, line, whether it is code) of a prose block's lines, a line whose `$` opens a formula that a
    later line of its paragraph closes joined to them (Pandoc's and Jupyter's inline math runs across a
    line break); code as it is."""
    out: list[tuple[int, str, bool]] = []
    given = list(zip(lines, in_code(lines)))
    offset = 0
    while offset < len(given):
        line, code = given[offset]
        opening, taken = None if code else _open_formula(line), 1
        while opening is not None and offset + taken < len(given) and taken < 8:
            following, following_code = given[offset + taken]
            if following_code or not following.strip() or not CONTINUED.match(following):
                break
            line, taken = line.rstrip() + " " + following.strip(), taken + 1
            if any(a == opening for a, _, _, _ in math_spans(line)):      # (closed: joined)
                break
        if taken > 1 and not any(a == opening for a, _, _, _ in math_spans(line)):    # (never closed: as it was)
            line, taken = given[offset][0], 1
        out.append((offset, line, code))
        offset += taken
    return out


def _open_formula(line: str) -> int | None:
    """Where a line holds a `$` that can open a formula which no `$` on it closes."""
    if "$" not in line or DISPLAY_MATH.match(line):
        return None
    spans = [(a, b) for a, b, _, _ in math_spans(line)] + list(code_spans(line) if "`" in line else ())
    return next((m.start() for m in OPENING_DOLLAR.finditer(line) if not any(a <= m.start() < b for a, b in spans)),
                None)


def block_formulas(block):
    """(line, LaTeX, display) of each formula in a prose block, values inside it read as 0."""
    for offset, line, code in paragraph_lines(block.text.splitlines()):
        for _, _, tex, display in ([] if code else math_spans(with_values(line, lambda _: "0"))):
            yield block.line + offset, tex, display


def to_mathml(tex: str, display: bool, memo: Memo | None = None) -> str:
    """MathML for the browser to render: no script, no font download.

    Remembered in the memo: importing latex2mathml costs more than the rest of
    a prose-edit rebuild's rendering.
    """
    def convert() -> bytes:
        from latex2mathml.converter import convert
        for code in UNICODE_ARGUMENT.finditer(tex):
            if not re.fullmatch(r"\s*(x[0-9A-Fa-f]+|[0-9]+)\s*", code[1]):
                raise Unresolved(f"math ${tex}$: \\unicode{{{code[1]}}} takes a character's number, as "
                                 "\\unicode{x263A}")
        try:
            mathml = convert(_text_escaped(_as_arrays(tex)), display="block" if display else "inline")
        except Exception as exc:  # noqa: BLE001 - latex2mathml raises many kinds
            raise Unresolved(f"math ${tex}$ is not LaTeX that can be read: {type(exc).__name__} {exc}".rstrip())
        return _for_browsers(UNSAFE_ATTRIBUTE.sub("", mathml).replace(LESS_THAN, "&lt;")).encode()
    if memo is None:
        return convert().decode()
    return memo.data("mathml", (package_version("latex2mathml"), tex, display), convert).decode()


def math_html(tex: str, display: bool, memo: Memo | None = None) -> str:
    """A formula as a page shows it: MathML; where it is not LaTeX that can be read (check.py says so,
    as a warning), its source, as code: never the page lost for one formula."""
    try:
        return to_mathml(tex, display, memo)
    except Unresolved:
        import html
        return f'<code class="math-source">{html.escape(("$$" if display else "$") + tex + ("$$" if display else "$"))}</code>'


# amsmath's environments that stand inside a formula, which latex2mathml runs together into one line (a
# newline MathML Core ignores, an "&" shown as a letter): written as the array they are, a table.
INNER = re.compile(r"\\begin\{(?P<env>aligned|gathered|alignedat)\}(?:\{\d+\})?(?P<body>.*?)\\end\{(?P=env)\}", re.S)


def _as_arrays(tex: str) -> str:
    def array(match) -> str:
        body = match["body"]
        if match["env"] == "gathered":
            return f"\\begin{{array}}{{c}}{body}\\end{{array}}"
        cells = max(row.count("&") for row in re.split(r"\\\\", body)) + 1     # right, left, right, ...
        return f"\\begin{{array}}{{{''.join('rl'[k % 2] for k in range(cells))}}}{body}\\end{{array}}"
    return INNER.sub(array, tex) if "\\begin{" in tex else tex


# latex2mathml writes the argument of \\text and its kin as it is, and \\href, \\style, \\class and
# \\cssId as attributes: a formula's "<" would open a tag, and a link or a style has no place in
# MathML (the page's policy forbids styles). Its "<" is written as a character latex2mathml passes
# through (LESS_THAN), made &lt; after; those attributes are dropped (the formula stays).
TEXT_COMMAND = re.compile(r"\\(?:text[a-z]*|mbox|hbox)\s*\{")
UNICODE_ARGUMENT = re.compile(r"\\unicode\s*\{([^}]*)\}")
UNSAFE_ATTRIBUTE = re.compile(r'\s(?:href|style|class|id)="[^"]*"')
LESS_THAN = "\ue010"


def _text_escaped(tex: str) -> str:
    """`tex` with each "<" inside a text command's braces (nested braces counted) made LESS_THAN."""
    out, at = [], 0
    for match in TEXT_COMMAND.finditer(tex):
        if match.start() < at:
            continue
        depth, end = 1, match.end()
        while end < len(tex) and depth:
            depth += {"{": 1, "}": -1}.get(tex[end], 0) if tex[end - 1] != "\\" else 0
            end += 1
        out += [tex[at:match.end()], tex[match.end():end].replace("<", LESS_THAN)]
        at = end
    return "".join(out) + tex[at:]


BOLD_DIGITS = re.compile(r'<mn mathvariant="bold">([0-9.]+)</mn>')
BARE_BAR = re.compile(r"<mo>(&#x02016;|&#x0007C;|\|)</mo>")


def _for_browsers(mathml: str) -> str:
    """MathML as MathML Core browsers draw it: a bold digit (\\mathbf{1}) as the bold character itself,
    since they ignore mathvariant but on <mi>; a bar that \\left does not size (\\lVert, \\rVert, |)
    never stretched, so that its two sides are drawn alike."""
    mathml = BOLD_DIGITS.sub(lambda m: "<mn>" + "".join(chr(0x1D7CE + int(c)) if c.isdigit() else c
                                                          for c in m[1]) + "</mn>", mathml)
    return BARE_BAR.sub(lambda m: f'<mo stretchy="false">{m[1]}</mo>', mathml)


NOTEBOOK_NAMES = "the notebook's names (what its code cells define at their top level)"


def lookup(data, path: str, top: str = "results.json"):
    """`trace.attention[0]` in results.json: the value, or Unresolved (`top`: what the author calls the
    whole: a notebook page has no results.json of its author's, but names, NOTEBOOK_NAMES)."""
    if not is_value_path(path):
        raise Unresolved(f"'{path}' is not a value path like name.key[0]")
    tokens = list(PATH_TOKEN.finditer(path))
    value, walked = data, ""
    for token in tokens:
        key, index = token.group(1), token.group(2)
        if key is not None:
            if not isinstance(value, dict) or key not in value:
                options = ", ".join(sorted(value)) if isinstance(value, dict) else "none (not a mapping)"
                raise Unresolved(f"no '{key}' in {walked or top}; it has: {options}")
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


class SiteMap(frozenset):
    """Every path the site publishes (a set of output paths), where each page's source is published
    (`pages`: content path -> output, since a page's `url` may differ from its file), and the images
    kept beside the pages (`images`: output path -> file)."""

    def __new__(cls, paths, pages: dict[str, str], images: dict | None = None):
        site = super().__new__(cls, paths)
        site.pages, site.images = dict(pages), dict(images or {})
        return site

    def __reduce__(self):            # (kept in the build's state, for a patched build: patch.py)
        return SiteMap, (frozenset(self), self.pages, self.images)

    @functools.cached_property
    def digest(self) -> str:
        """What is published where, hashed: part of every key of what shows links or paths."""
        return digest(json.dumps([sorted(self), sorted(self.pages.items()), sorted(self.images)]))


SOURCES = PAGE_FILES       # a link to a page's source file


def resolve_target(page: Page, target: str, sitemap: SiteMap, art=None) -> tuple[str, str]:
    """An internal link as (output path, fragment); raises Unresolved.

    A link to a page's source (`guide.md`, or a notebook page's `chapter 2.ipynb`, spaces written
    as %20 or not) is relative to the linking page's source file and goes wherever that page is
    published; any other relative link is relative to the published page, or (`art`: the page's lab)
    names a file its run saved beside it, as Jupyter shows one (`{figure} fit.png`), where it is published.
    """
    try:
        return _site_target(page, target, sitemap)
    except Unresolved:
        if art is None or (saved := lab_file(art, target)) is None:
            raise
        return saved, ""


def lab_file(art, target: str) -> str | None:
    """Where a file a lab's run saved in its folder (a figure, or another file) is published, or None."""
    name = posixpath.normpath(target.partition("#")[0])
    if name.startswith(("../", "/")) or name not in art.hashes:
        return None
    return art.figure_path(name) if name in art.figures else f"{art.lab.downloads}/{name}"


def _site_target(page: Page, target: str, sitemap: SiteMap) -> tuple[str, str]:
    from urllib.parse import unquote
    path, _, fragment = target.partition("#")
    path = unquote(path) if path.endswith(SOURCES) else path
    if not path:
        return page.output, fragment
    def source(normal: str) -> str:
        """The output of the page whose source is `normal`, else "" (MyST names a page without its suffix,
        which dialects.py writes .md: a notebook's is another)."""
        stem = normal[:-len(".md")] if normal.endswith(".md") else ""
        return next((sitemap.pages[rel] for rel in (normal, *(stem + suffix for suffix in SOURCES if stem))
                     if rel in sitemap.pages), "")
    if path.startswith("/"):    # an address on the site, or a page's source from content/ (as {doc} may name one)
        candidates = [source(path.strip("/")) if path.endswith(SOURCES) else "", path.strip("/"),
                      path.strip("/") + ".html", (path.strip("/") + "/index.html").lstrip("/")]
    else:
        base = posixpath.dirname(page.content_path if path.endswith(SOURCES) else page.output)
        normal = posixpath.normpath(posixpath.join(base, path))
        if normal == ".." or normal.startswith("../"):
            raise Unresolved(f"link '{target}' leaves the site")
        candidates = [source(normal)] if normal.endswith(SOURCES) else [normal]
    for candidate in candidates:
        if candidate in sitemap:
            return candidate, fragment
    raise Unresolved(f"link '{target}' points to nothing the site builds")


def references_of(page: Page, sitemap: SiteMap, labels: SiteLabels, words: dict | None = None) -> References:
    """What `page`'s references find: its own labels, then the site's (labels.py), a page's source path
    resolved as its links are."""
    def output_of(source: str) -> str | None:
        try:
            return resolve_target(page, source, sitemap)[0]
        except Unresolved:
            return None
    return References(page.output, page_labels(page, words)[0], labels, output_of, page.blocks)


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


def _value(results: dict, value: re.Match) -> str:
    """A value quoted in prose, as the page shows it; a name no value has is a figure myst-nb's glue
    saved (labs/glue.py; check.py made sure): the image, in the sentence."""
    try:
        return html.escape(format_value(lookup(results, value["path"]), value["spec"]))
    except Unresolved:
        return f"![{value['path']}](figure:{value['path']}.png)"


def transform_prose(text: str, results: dict | None, href, figure_block=None, math=None, references=None,
                    join: str = " · ", citations=None) -> str:
    """Fill values, point links at their targets, give references their text (`references`: the page's,
    labels.References) and citations theirs (`citations`: citations.Citations), and (on pages) lift figures into blocks and turn formulas into MathML via
    `math(tex, display, label, number)`; without it, a numbered formula is numbered as Jupyter's
    MathJax numbers one, with \\tag."""
    labels = references.own if references is not None else {}

    def shown(line: str) -> str:
        """One line of prose as the page shows it."""
        match = FIGURE_LINE.match(line)
        if match and figure_block is not None:
            return figure_block(match["name"], match["alt"], match["title"] or "")
        if results is not None:         # (a page with no lab has none, but in code spans: shown as written)
            line = with_values(line, lambda m: _value(results, m))
        if references is not None:
            line = references.fill(line)
        if citations is not None:
            line = citations.fill(line)
        if (numbered := LABELLED_MATH.match(line)) and numbered["label"] in labels:
            number = labels[numbered["label"]].number
            return (math(numbered["tex"].strip(), True, numbered["label"], number) if math is not None
                    else f"$${numbered['tex'].strip()} \\tag{{{number}}}$$")
        if (figure := LABELLED_FIGURE.match(line)) and figure["label"] in labels:
            label = labels[figure["label"]]         # a numbered figure: its number before its caption
            caption = label.shown + (join + figure["caption"] if figure["caption"] else "")
            target = figure["target"]
            src = None if target.startswith("figure:") else href(target)
            if figure_block is not None and (src is not None or target.startswith("figure:")):
                return (figure_block(target[len("figure:"):], figure["alt"], caption, figure["label"])
                        if target.startswith("figure:") else figure_block("", figure["alt"], caption, figure["label"], src))
            if src is None and not target.startswith("figure:"):     # (a file the site lacks: check.py warned)
                return f"[{figure['alt']}]{{.missing-image #{figure['label']}}}\n\n*{caption}*"
            return f"![{figure['alt']}]({href(target)})\n\n*{caption}*"
        if (table := TABLE_CAPTION.match(line)) and table["label"] in labels:
            label = labels[table["label"]]
            caption = html.escape(label.shown + join + table["caption"])
            return (f'<p class="table-caption" id="{html.escape(table["label"])}">{caption}</p>' if math is not None
                    else f"*{label.shown}{join}{table['caption']}*")
        if math is not None:
            for start, end, tex, display in reversed(math_spans(line)):     # (a display in a sentence: in it)
                line = line[:start] + (math(tex, display) if not display or not line[:start] + line[end:]
                                       else math(tex, display, inline=True)) + line[end:]
        return outside_spans(LINK, lambda m: _link(m, href), line)     # (a code span: as written)

    lines, within = [], 0           # within: where the content of the line before starts (a list item's: after its marker)
    for _, line, code in paragraph_lines(text.splitlines()):
        made = line if code else shown(line)          # (fenced code: as written, its {{ }} and links too)
        indent = min(len(line) - len(line.lstrip(" ")), within)
        if indent and not code and made != made.strip("\n") and "\n" not in made.strip("\n"):
            made = f"\n\n{' ' * indent}{made.strip()}\n\n"     # (a block of a list item's line: in the item, never
        lines.append(made)                                        # indented so far as to be code)
        if line.strip() and not code:
            item = LIST_ITEM.match(line)
            within = len(item[0]) if item else len(line) - len(line.lstrip(" "))
    return "\n".join(lines)


def _link(match, href) -> str:
    """A link or image as the page shows it: an image from another site as a link to it, which loads
    nothing; one to nothing the site builds as its text (an image's alt text, marked): check.py warned."""
    title = match["title"] or ""
    target = href(match["target"])
    if match["bang"] and target is not None and is_external(target) and not target.startswith("data:"):
        return f"[{match['text'] or target}]({target}{title}){{.remote-image}}"
    if target is None:
        return f"[{match['text']}]{{.missing-image}}" if match["bang"] and match["text"] else match["text"]
    return f"{match['bang']}[{match['text']}]({target}{title})"


# What a link names when it names a page (its source, a book's other formats, the page as published, as
# Quarto chapters link each other, or a path without a suffix) or a MyST label: one the site lacks is shown
# as its text, with a warning (check.py); a missing file is an error.
PAGE_SUFFIXES = (*SOURCES, ".Rmd", ".myst", ".rst", ".html")


def names_page(target: str) -> bool:
    path = target.partition("#")[0].rstrip("/")
    return bool(path) and (path.endswith(PAGE_SUFFIXES) or "." not in path.rsplit("/", 1)[-1])
