"""Other tools' markup within a line of prose, as this site writes it: MyST's roles, Quarto's inline
expressions, shortcodes, cross-references (`@fig-x`) and figures, Pandoc's attributes on a heading or an
image, MyST's links to a label or into another project's inventory, and Jupyter's heading anchors.
dialects.py reads the blocks (directives, divs, alerts, formulas across lines) and hands each line of
prose between them to `inline_markup`; what is not supported is said in `notes` as (line, message).
"""
from __future__ import annotations

import re

from .bookparts import (ROLE, SPHINX_PAGES, is_value_path, myst_reference, outside_spans, read_role, slugify,
                        without_style)
from .jupytermath import FORMULAS, TEX_REF
from .markup import code_spans
from .quartodivs import PANDOC_ATTRS, pandoc_attributes

HEADING = re.compile(r"^\s*#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
REF_FORMULA = re.compile(r"\$\s*\\(?:eq)?ref\{(?P<label>[^{}\s]+)\}\s*\$")      # $\eqref{x}$: a reference
# Quarto's cross-reference: @fig-x, @eq-x, @sec-x, @tbl-x (never an e-mail address's @); its inline
# expression, a code span (`{python} radius`); MyST's link into another Sphinx project's inventory
# (intersphinx): [text](inv:project#target)
QUARTO_REF = re.compile(r"(?<![\w@.])(?:\[(?P<prefix>[^\[\]@]*?)(?P<minus>-?))?@(?P<label>(?:fig|eq|sec|tbl)-[\w-]*\w)"
                        r"(?(prefix)\]|\]?)")
LABEL_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<label>[A-Za-z][\w:./-]*)\)")
INLINE_EXPRESSION = re.compile(r"`\{(?P<language>[A-Za-z]\w*)\}\s+(?P<expression>[^`]+)`")
SHORTCODE = re.compile(r"\{\{<\s*(?P<name>[\w-]+)(?P<args>.*?)>\}\}")     # Quarto's: {{< video URL >}}
IMAGE_ATTRS = re.compile(r"""(?P<image>!\[[^\]]*\]\([^)\s]+(?:\s+"[^"]*")?\))""" + PANDOC_ATTRS.pattern)
ANCHOR_LINK = re.compile(r"(?P<head>\]\()#(?P<fragment>[^)\s]+)\)")      # a link to a place on its page: [text](#x)
INVENTORY_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>inv:[^)\s]*)\)")
QUARTO_FIGURE = re.compile(r'^\s*!\[(?P<caption>[^\]]+)\]\((?P<target>[^)\s]+)\)\{#(?P<label>fig-[^}\s]+)(?P<attrs>[^}]*)\}\s*$')


def inline_markup(line: str, number: int, notes: list, code: bool, computed: bool, named: set[str], indexed: set[str],
                  headings: set[str]) -> str:
    """A line of prose (`code`: a fence's, whose links and references are as written) with other tools'
    markup in it written as this site's; `named`, `indexed` and `headings`: the page's MyST labels, its
    index entries and its headings' ids (dialects.translate)."""
    if "style" in line.lower():       # (raw HTML's: dropped, said)
        line = without_style(line, number, notes)
    if ROLE.search(line):
        line = outside_spans(ROLE, lambda found: read_role(found, number, notes, computed=computed, unmade=indexed),
                             line)
    if "`{" in line:
        line = _inline_expressions(line, number, notes, computed)
    if "{{<" in line:
        line = outside_spans(SHORTCODE, lambda found: _shortcode(found, number, notes), line)
    if (figure := QUARTO_FIGURE.match(line)) and not code:   # Quarto: the bracket is the caption
        alt = re.search(r'fig-alt="([^"]*)"', figure["attrs"] or "")
        line = (f'![{alt[1] if alt else figure["caption"]}]({figure["target"]} "{figure["caption"].replace(chr(34), chr(39))}")'
                f' {{#{figure["label"]}}}')
    if "{" in line and not code and (HEADING.match(line) or "](" in line):
        line = _attributed(line, number, notes)
    if "](" in line and not code:
        line = outside_spans(LABEL_LINK, lambda m: _label_link(m, named, indexed, number, notes), line)
        line = outside_spans(INVENTORY_LINK, lambda m: _inventory_link(m, number, notes), line)
        line = outside_spans(ANCHOR_LINK, lambda m: _jupyter_anchor(m, headings, named), line)
    if "@" in line and not code:
        line = outside_spans(QUARTO_REF, _quarto_reference, line)
    if "ref{" in line and not code:     # amsmath's \eqref{x} in prose (or alone in a formula), as MathJax reads it
        line = outside_spans(REF_FORMULA, lambda found: f"[](#{found['label']})", line)
        line = outside_spans(TEX_REF, lambda found: f"[](#{found['label']})", line, FORMULAS)
    return line


def _attributed(line: str, number: int, notes: list) -> str:
    """Pandoc's attributes on a heading (at its end) or an image (after it) as this site reads them: the id
    kept (`{#id}`), the rest left out (said but for what needs no word: quartodivs.UNSAID)."""
    def kept(found: re.Match, what: str) -> str:
        ident, other = pandoc_attributes(found["attrs"])
        if other:
            notes.append((number, f"{what}'s attributes {' '.join(other)} are not read here: left out"))
        return f"{{#{ident}}}" if ident else ""
    if HEADING.match(line) and (found := PANDOC_ATTRS.search(line)) and not line[found.end():].strip():
        return f"{line[:found.start()].rstrip()} {kept(found, 'the heading')}".rstrip()
    return outside_spans(IMAGE_ATTRS, lambda image: image["image"] + kept(image, "the image"), line)


def _quarto_reference(ref: re.Match) -> str:
    """Quarto's reference as this site's: `@fig-a` its name and number, `[-@fig-a]` its number alone,
    `[Fig. @fig-a]` that word and its number."""
    prefix = (ref["prefix"] or "").strip()
    if ref["minus"] or prefix:
        return f"[{prefix + ' ' if prefix else ''}%s](#{ref['label']})"
    return f"[](#{ref['label']})"


def _shortcode(found: re.Match, number: int, notes: list) -> str:
    """Quarto's shortcode as its HTML output shows it here: a page break (print's) nothing, a video a link to
    it (a page embeds nothing from another site), any other its source as code, said."""
    name, args = found["name"], found["args"].split()
    if name == "pagebreak":
        return ""
    if name == "video" and args:
        notes.append((number, f"{{{{< video {args[0]} >}}}}: shown as a link to it (a page embeds nothing from another site)"))
        return f"[{args[0]}]({args[0]})"
    notes.append((number, f"Quarto's shortcode {{{{< {name} >}}}} is not supported here: shown as its source"))
    return f"`` {found[0]} ``"


def _label_link(link: re.Match, named: set[str], indexed: set[str], number: int, notes: list) -> str:
    """MyST's Markdown link to a label, [text](label): this site's [text](#label) (a label named with a
    colon, `content:glue`, may be another page's: labels.References finds it); to an index entry or
    to one of Sphinx's own pages (its general index), its text, said."""
    label = link["label"]
    if label in indexed or label in SPHINX_PAGES:
        notes.append((number, f"[{link['text']}]({label}) links to {SPHINX_PAGES.get(label, 'an entry of the index')}, "
                              "which this site does not make: shown as its text"))
        return link["text"] or label
    return f"[{link['text']}](#{label})" if label in named or myst_reference(label) else link[0]


def _jupyter_anchor(link: re.Match, headings: set[str], named: set[str]) -> str:
    """A link to a heading of the page by the id Jupyter gives it (`#Two-Words`): to the id it has here."""
    from urllib.parse import unquote
    fragment = link["fragment"]
    slug = slugify(unquote(fragment).replace("-", " "))
    if fragment in headings or fragment in named or slug not in headings:
        return link[0]
    return f"{link['head']}#{slug})"


def _inline_expressions(line: str, number: int, notes: list, computed: bool) -> str:
    """Quarto's inline expressions, `{python} radius`: this site's {{ radius }} (a value the notebook's
    code computed, quoted as every value is); one that is not a name like name.key[0] (a call, an
    operator), in another language, or on a page that runs no code is its expression as code, said."""
    parts, at = [], 0
    for start, end in code_spans(line):
        if not (found := INLINE_EXPRESSION.fullmatch(line, start, end)):
            continue
        expression = found["expression"].strip()
        if computed and found["language"] == "python" and is_value_path(expression):
            shown = f"{{{{ {expression} }}}}"
        else:
            why = ("this page runs no code: quote it in a notebook page" if not computed else
                   "a notebook page runs Python only" if found["language"] != "python" else
                   "this site quotes a value by its name, as name.key[0]: compute it in a code cell and quote that name")
            notes.append((number, f"the inline expression {line[start:end]} is shown as code, not evaluated: {why}"))
            shown = f"`{expression}`"
        parts.append(line[at:start] + shown)
        at = end
    return "".join(parts) + line[at:]


def _inventory_link(link: re.Match, number: int, notes: list) -> str:
    """MyST's link into another project's inventory: its text (or the target's name), said."""
    notes.append((number, f"[{link['text']}]({link['target']}) links into another project's documentation by its "
                          "inventory (MyST's intersphinx), which a build without the network does not read: shown as "
                          "its text; link the page's address instead"))
    return link["text"] or link["target"].rpartition("#")[2]
