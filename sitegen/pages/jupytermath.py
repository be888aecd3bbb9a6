"""Math in a notebook's Markdown cells as Jupyter shows it, written as this site's prose writes it.

Jupyter (JupyterLab's and the classic notebook's Markdown, with MathJax) takes as math: `$…$`
within a line, spaces inside or not, touching any character; `$$…$$` and `\\[…\\]` across lines,
inside a paragraph or not; `\\(…\\)`; and a bare `\\begin{align}…\\end{align}` (or equation,
gather, multline, eqnarray, alignat, with or without `*`), also between single dollars across
lines (`$\\begin{align}…\\end{align}$`, as Jupyter's own example notebook writes it), shown as a
display. Code spans and fences are not math, nor an escaped `\\$`. A display's `\\label{x}` numbers it, and
`\\eqref{x}` (or `\\ref{x}`) in the prose refers to it, as MathJax's AMS numbering does. This site's prose (prose.py)
has `$…$` inline and a display formula as a line `$$…$$` of its own: each formula is rewritten
into that form here, so that the page renders what Jupyter renders; the rest of each line is left
as it was.
"""
from __future__ import annotations

import re
from bisect import bisect_left

from .bookparts import outside_spans
from .markup import in_code

ENVIRONMENTS = "equation|align|alignat|gather|multline|eqnarray|flalign"
MATH = re.compile(
    r"(?P<code>(?P<ticks>`+).+?(?P=ticks))"                     # a code span: as it is
    r"|(?P<escaped>\\\$)"                                       # \$: a dollar sign
    r"|\$\$(?P<dollars>.+?)\$\$"                                # display, across lines too
    r"|\$(?P<dollar_environment>\s*\\begin\{(?P<env_in_dollars>[a-z]+\*?)\}.+?\\end\{(?P=env_in_dollars)\}\s*)\$"
    r"|\\\[(?P<brackets>.+?)\\\]"
    r"|(?P<environment>\\begin\{(?P<env>(?:" + ENVIRONMENTS + r")\*?)\}.+?\\end\{(?P=env)\})"
    r"|\\\((?P<parens>.+?)\\\)"
    r"|\$(?P<inline>[^$\n]*?[^\s$\\][^$\n]*?)\$",               # inline, in one line: not empty, not `$ $`
    re.S)
LABEL = re.compile(r"\s*(?:\((?P<myst>[^()\s]+)\)|\{#(?P<quarto>[^}\s]+)\})")
TEX_LABEL = re.compile(r"\\label\{(?P<label>[^{}\s]+)\}")     # amsmath's \label{eq:x} in a numbered formula
# A reference to one in the prose (MathJax reads \eqref and \ref outside math too): this site's reference.
TEX_REF = re.compile(r"\\(?:eq)?ref\{(?P<label>[^{}\s]+)\}")


def tex_labelled(tex: str) -> tuple[str, str]:
    """A display formula's LaTeX without its \\label{...}, and that label ("" if none): numbered here as
    MathJax numbers it, with references to it ([](#label))."""
    found = TEX_LABEL.search(tex)
    return (TEX_LABEL.sub("", tex).strip(), found["label"]) if found else (tex, "")


def site_math(lines: list[str]) -> list[tuple[str, int]]:
    """A Markdown cell's lines with every formula in this site's form: each line, with the index of
    the given line it starts at (a display formula across lines becomes one line)."""
    out: list[tuple[str, int]] = []
    prose: list[str] = []                       # lines outside code fences, not yet rewritten
    start = 0
    for index, (line, code) in enumerate(zip(lines + [None], in_code(lines) + [True])):
        if not code:
            if not prose:
                start = index
            prose.append(line)
            continue
        if prose:
            out += _rewritten(prose, start)
            prose = []
        if line is not None:
            out.append((line, index))
    return out


def _rewritten(lines: list[str], first: int) -> list[tuple[str, int]]:
    """`lines` (the given lines from index `first`, outside fences) with their formulas rewritten."""
    text = "\n".join(lines)
    breaks = [i for i, c in enumerate(text) if c == "\n"]

    def line_at(offset: int) -> int:
        return first + bisect_left(breaks, offset)

    out: list[tuple[str, int]] = []
    line, number, done, ended = "", first, 0, False

    def plain(upto: int) -> None:               # the text from `done` to `upto`, its line breaks kept
        nonlocal line, number, done
        offset = done
        for k, part in enumerate(text[done:upto].split("\n")):
            if k:
                out.append((line, number))
                line, number = "", line_at(offset)
            line += part
            offset += len(part) + 1
        done = upto

    for match in MATH.finditer(text):
        if match["code"] or match["escaped"]:
            continue
        ended = False
        tex = next(match[g] for g in ("dollars", "dollar_environment", "brackets", "environment", "parens", "inline")
                   if match[g] is not None)
        quoted = "\n" in match[0] and re.fullmatch(r"[ >]*>[ >]*", text[text.rfind("\n", 0, match.start()) + 1:match.start()])
        parts = (part.strip().lstrip(">").strip() if quoted else part.strip() for part in tex.split("\n"))
        tex = " ".join(part for part in parts if part)          # (a quote's lines: without their >)
        if not tex:
            continue
        plain(match.start())
        done = match.end()
        if (match["inline"] is not None or match["parens"] is not None) and (ref := TEX_REF.fullmatch(tex.strip())):
            line += f"[](#{ref['label']})"      # ($\eqref{x}$: the reference MathJax makes of it)
            continue
        if match["inline"] is not None or match["parens"] is not None:
            line += f"${tex}$"
            continue
        after = text[done:].split("\n", 1)[0]
        if match["dollars"] is not None and "\n" not in match[0] and (line.strip() or after.strip()) \
                and not LABEL.match(after):     # (in a sentence, a table's cell, a footnote: where it stands)
            line += f"$${tex}$$"
            continue
        lead = line if not line.strip(" >") else ""     # (its line's indent or quote: in the item, in the quote)
        if line.strip(" >"):                    # a display formula is a line of its own
            out.append((line.rstrip(), number))
        rest = text[done:].split("\n", 1)[0]
        label = LABEL.match(rest) if match["dollars"] is not None else None
        if label:                               # MyST's $$ ... $$ (label), Quarto's $$ ... $$ {#eq-label}
            done += label.end()
            rest = rest[label.end():]
        tex, named = tex_labelled(tex)
        name = label and (label["myst"] or label["quarto"]) or named
        out.append((f"{lead}$${tex}$$" + (f" {{#{name}}}" if name else ""), line_at(match.start())))
        line, number = "", line_at(done)
        if not rest.strip() and done + len(rest) < len(text):
            done += len(rest) + 1               # its line ends with it
            number = line_at(done)
        ended = done >= len(text)
    plain(len(text))
    if line or not ended:
        out.append((line, number))
    return [(outside_spans(TEX_REF, lambda found: f"[](#{found['label']})", line, FORMULAS) if "ref{" in line else line,
             number) for line, number in out]


FORMULAS = re.compile(r"\$\$.+?\$\$|\$[^$]+\$")      # (this site's, in a rewritten line: \ref in one is LaTeX's)
