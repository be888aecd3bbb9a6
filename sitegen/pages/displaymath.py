"""A display formula written across lines, as MyST, Quarto and amsmath write one, made this site's one line
`$$ ... $$ {#label}` (prose.py turns it into MathML, labels.py numbers it); the lines it joined are
left blank, so that every line keeps its number.
"""
from __future__ import annotations

import re

from .jupytermath import tex_labelled

# `$$` alone on its first line (in a quote or a list item too), and on its last `$$` with MyST's `(label)`
# or Quarto's `{#eq-label}` after it; MyST's `$$ x $$ (label)` on one line; amsmath's environment at a
# block's start, as MyST's amsmath extension reads one.
MATH_OPEN = re.compile(r"^(?P<quote>(?: {0,3}> ?)*) *(?::\s+)?\$\$\s*$")  # (in a quote, a list item, a definition too)
AMS_OPEN = re.compile(r"^ {0,3}\\begin\{(?P<env>(?:equation|align|alignat|gather|multline|eqnarray|flalign)\*?)\}")
MATH_CLOSE = re.compile(r"^(?P<tex>.*?)\$\$\s*(?:\((?P<myst>[^()\s]+)\)|\{#(?P<quarto>[^}\s]+)\})?\s*$")
MYST_LABELLED = re.compile(r"^(?P<math>\s*\$\$.+?\$\$)\s*\((?P<label>[^()\s]+)\)\s*$")     # $$ x $$ (label)


def ams_environment(out: list[str], index: int, label: str, number: int, notes: list) -> int | None:
    """amsmath's environment opening at `index` (`\\begin{align}` ... `\\end{align}`), its `\\label{x}` its label
    (or a (label)= above it: `label`): the index after it; None if none opens there."""
    ams = AMS_OPEN.match(out[index])
    if ams is None or (index and out[index - 1].strip()):
        return None
    end = next((k for k in range(index, len(out)) if f"\\end{{{ams['env']}}}" in out[k]), None)
    if end is None:
        return None
    tex, named = tex_labelled(" ".join(part.strip() for part in out[index:end + 1]))
    return joined(out, index, end, tex, label or named, number, notes)


def display_math(out, numbers, index, label: str, notes: list) -> int:
    """A display formula from `$$` on a line of its own to the line that ends with `$$` (and a label):
    one line of this site's, `$$ ... $$ {#label}`; the lines it joined left blank. Returns the index after."""
    if MYST_LABELLED.match(out[index]):                 # (one line already)
        found = MYST_LABELLED.match(out[index])
        out[index] = f"{found['math']} {{#{found['label'] or label}}}"
        return index + 1
    quote = (opening := MATH_OPEN.match(out[index])) and opening["quote"] or ""      # (a quote's formula: its lines')
    inside = [line[len(quote):] if quote and line.startswith(quote.rstrip()) else line for line in out]
    end = next((k for k in range(index + 1, len(out)) if "$$" in inside[k]), None)
    if end is None:
        notes.append((numbers[index], "this '$$' opens a formula that no later '$$' closes: close it with a line '$$'"))
        return index + 1
    close = MATH_CLOSE.match(inside[end])
    if close is None:
        return index + 1
    tex = " ".join(part.strip() for part in inside[index + 1: end] + [close["tex"]] if part.strip())
    after = joined(out, index, end, tex, close["myst"] or close["quarto"] or label, numbers[index], notes)
    if quote:       # (its blank lines the quote's, so that what follows in it stays in it)
        out[index + 1:after] = [quote + line for line in out[index + 1:after]]
    return after


def joined(out, index: int, end: int, tex: str, label: str, number: int, notes: list) -> int:
    """The formula `tex` as this site's one line, `$$ ... $$ {#label}`, at `index`; the lines to `end` blank.
    An empty one is said and left out (its label with it: a reference to it is said)."""
    if "\\label{" in tex:            # (amsmath's label inside it, as MathJax reads it: its label here)
        tex, named = tex_labelled(tex)
        label = label or named
    if not tex.strip():
        notes.append((number, "this display formula is empty: left out" + (f" (and its label '{label}')" if label else "")))
    lead = re.match(r"^[ >]*(?::\s+)?(?=\$\$)", out[index])      # (a list item's indent, a definition's `:`: in it)
    indent = lead[0] if lead else out[index][:len(out[index]) - len(out[index].lstrip(" "))]
    out[index] = indent + f"$${tex}$$" + (f" {{#{label}}}" if label else "") if tex.strip() else ""
    for k in range(index + 1, end + 1):
        out[k] = ""
    return end + 1


ONE_LINE = re.compile(r"^(?P<lead>[ >]*(?::\s+)?)\$\$(?P<tex>.+)\$\$\s*$")


def labelled_line(line: str) -> str | None:
    """A display formula on a line of its own whose LaTeX holds amsmath's \\label{x}: `$$ ... $$ {#x}`; else None."""
    found = ONE_LINE.match(line) if "\\label{" in line else None
    if found is None or "$$" in found["tex"]:
        return None
    tex, label = tex_labelled(found["tex"].strip())
    return f"{found['lead']}$${tex}$$ {{#{label}}}" if label else None
