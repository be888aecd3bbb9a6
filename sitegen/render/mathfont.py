"""The site's math font: STIX Two Math (sitegen/render/fonts/), cut down to what its formulas use.

Formulas are MathML, drawn by the reader's browser. Where the system has no math font (Linux,
Android), `font-family: math` falls back to a text font: square roots lose their bar and sums
shrink. So the site ships its own font, with an OpenType MATH table. The build subsets it to the
characters of the site's formulas, and fontTools keeps their size variants and assembly parts from
the MATH table. The result is a WOFF of a few tens of KB, named by its hash, and remembered in the
memo under the characters it covers.
"""
from __future__ import annotations

import functools
import html
import io
import json
import re
from pathlib import Path

from ..core.incremental import Phase
from ..core.memo import Memo
from ..pages.blocks import hidden_blocks
from ..pages.prose import Unresolved, block_formulas, to_mathml
from ..core.stored import sha256_of

FONT = Path(__file__).with_name("fonts") / "stix-two-math.woff"
FAMILY = "Site Math"
# Drawn by the engine from the font whatever the formula's text: digits, fences, the radical.
ALWAYS = "0123456789()[]{}|‖√∑∏∫=+−-,.:;!/<>"
TAG = re.compile(r"<[^>]+>")
SINGLE_IDENTIFIER = re.compile(r"<mi>([^<])</mi>")


def italic(char: str) -> str:
    """The mathematical italic form a browser shows for a one-letter identifier (<mi>x</mi>)."""
    code = ord(char)
    if char == "h":
        return "\u210e"                                  # Planck's h stands in for U+1D455
    if "a" <= char <= "z":
        return chr(0x1D44E + code - ord("a"))
    if "A" <= char <= "Z":
        return chr(0x1D434 + code - ord("A"))
    if "\u03b1" <= char <= "\u03c9":
        return chr(0x1D6FC + code - 0x3B1)
    if "\u0391" <= char <= "\u03a9":
        return chr(0x1D6E2 + code - 0x391)
    return char


def formula_characters(pages, memo: Memo, solutions: str = "folded") -> str:
    """Every character the site's formulas show, sorted; "" for a site without formulas. A build
    that leaves solutions out (`solutions`) leaves their formulas' glyphs out of the font too."""
    chars: set[str] = set()
    context = f"math-font {solutions}"
    with Phase(memo, "formula-characters", context) as phase:
        for page in pages:      # a page as the last build found it: its blocks are not even unpickled
            if page.digest and (record := phase.reuse(page.source, (page.digest,))) is not None:
                chars.update(record.summary)       # (content.Page), and its entry is kept
                continue
            # Else keyed on its formulas: a prose edit that leaves them as they were converts none
            formulas = page_formulas(page, solutions)
            key = (json.dumps(formulas, ensure_ascii=False),)
            found = memo.value("formula-characters", key, lambda: _characters(formulas, memo))
            if page.digest:
                phase.made(page.source, (page.digest,), key, summary="".join(sorted(found)))
            chars.update(found)
    if not chars:
        return ""
    return "".join(sorted((chars | set(ALWAYS)) - set(" \n\t")))


def page_formulas(page, solutions: str = "folded") -> list[tuple[str, bool]]:
    """(LaTeX, display) of each formula of a page's prose that a build with `solutions` shows, in order."""
    hidden = hidden_blocks(page, solutions)
    return [(tex, display) for index, block in enumerate(page.blocks) if block.kind == "prose" and index not in hidden
            for _, tex, display in block_formulas(block)]


def _characters(formulas: list, memo: Memo) -> set[str]:
    chars: set[str] = set()
    for tex, display in formulas:
        try:
            mathml = to_mathml(tex, display, memo)
        except Unresolved:          # (shown as its source: prose.math_html)
            continue
        chars.update(html.unescape(TAG.sub("", mathml)))
        chars.update(italic(c) for c in SINGLE_IDENTIFIER.findall(mathml))
    return chars


@functools.cache
def _source() -> tuple[bytes, str]:
    """The vendored font and its SHA-256, read once per process."""
    data = FONT.read_bytes()
    return data, sha256_of(data)


def subset(chars: str, memo: Memo) -> bytes:
    """The font as WOFF with only these characters (and the MATH glyphs they need)."""
    source, digest = _source()

    def make() -> bytes:
        from fontTools import subset as fonttools_subset
        options = fonttools_subset.Options()
        options.flavor = "woff"
        options.layout_features = ["*"]
        options.name_IDs = ["*"]              # the copyright and licence stay with the font
        options.notdef_outline = True
        options.hinting = False               # browsers do not need it, and it is a third of the size
        font = fonttools_subset.load_font(io.BytesIO(source), options)
        subsetter = fonttools_subset.Subsetter(options)
        subsetter.populate(unicodes=[ord(c) for c in chars])
        subsetter.subset(font)
        out = io.BytesIO()
        fonttools_subset.save_font(font, out, options)
        return out.getvalue()

    return memo.data("mathfont", (digest, chars), make)


def font_face_css(url: str) -> str:
    return (f'@font-face{{font-family:"{FAMILY}";src:url("{url}") format("woff");font-display:swap}}'
            f'math{{font-family:"{FAMILY}",math}}')
