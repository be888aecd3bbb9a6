"""How much of the math in real notebooks' Markdown cells a page shows as math, against a reference.

    python tests/corpus/mathshare.py [NAME.ipynb ...]     # the laid corpus (corpus.py lay), or these of it

The reference is not ours: markdown-it-py with mdit-py-plugins' dollarmath and amsmath (what MyST-NB and
Jupyter Book render notebooks' Markdown with; `$` beside any character and with spaces inside allowed,
as JupyterLab's MathJax takes them) and texmath's bracket delimiters for `\\(…\\)` and `\\[…\\]`. Each
notebook with math is built as corpus.py builds it (its repository's files around it, allow_errors:
its code runs), and on its page are counted the formulas its prose shows as MathML and the raw LaTeX
left in its prose's text (a `$`, `\\(`, `\\[` or `\\begin` outside code and cells' outputs). It prints
a row a notebook: the reference's inline and display formulas, the page's, and the leftovers; then
the totals.
"""
from __future__ import annotations

import json
import re
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RAW = re.compile(r"\$|\\\(|\\\[|\\begin\{")


def reference(cells: list[str]) -> tuple[int, int]:
    """(inline, display) formulas in these Markdown cells, as the reference renderer finds them."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.amsmath import amsmath_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.texmath import texmath_plugin
    dollars = MarkdownIt("commonmark").use(dollarmath_plugin, allow_space=True, allow_digits=True,
                                           allow_labels=True, double_inline=True).use(amsmath_plugin)
    brackets = MarkdownIt("commonmark").use(texmath_plugin, delimiters="brackets")
    inline = display = 0
    for text in cells:
        for parser, kinds in ((dollars, ("math_inline", "math_inline_double", "math_block", "math_block_label",
                                         "amsmath")), (brackets, ("math_inline", "math_block", "math_block_eqno"))):
            for token in _walk(parser.parse(text)):
                if token.type in kinds:
                    if token.type in ("math_inline",):
                        inline += 1
                    else:
                        display += 1
    return inline, display


def _walk(tokens):
    for token in tokens:
        yield token
        yield from _walk(token.children or [])


class _Page(HTMLParser):
    """The formulas (inline, display) of a page's prose, and its prose's text outside code and math (what a
    code cell showed, in its <section class="cell">, is not Markdown's: left out)."""
    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.inline = self.display = 0
        self.skip, self.cell, self.inside, self.text = 0, 0, False, []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "article":
            self.inside = True
        if self.inside and tag == "section" and ("cell" in (attrs.get("class") or "").split() or self.cell):
            self.cell += 1
        if self.inside and not self.cell and tag == "math":
            if attrs.get("display") == "block":
                self.display += 1
            else:
                self.inline += 1
        if self.inside and tag in ("math", "code", "pre", "script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if self.inside and tag in ("math", "code", "pre", "script", "style"):
            self.skip -= 1
        if self.inside and tag == "section" and self.cell:
            self.cell -= 1
        if tag == "article":
            self.inside = False

    def handle_data(self, data):
        if self.inside and not self.skip and not self.cell:
            self.text.append(data)


def measure(tree: Path, notebook: Path, work: Path) -> dict:
    """The notebook built as corpus.py builds it (its repository's files around it, allow_errors), and
    its Markdown cells measured against the reference."""
    sys.path[:0] = [str(REPO), str(HERE)]
    from corpus import build_page
    data = json.loads(notebook.read_text(encoding="utf-8"))
    cells = ["".join(c.get("source", "")) if isinstance(c.get("source"), list) else c.get("source", "")
             for c in data.get("cells", []) if c.get("cell_type") == "markdown"]
    inline, display = reference(cells)
    row = {"notebook": notebook.name, "reference_inline": inline, "reference_display": display}
    if not inline + display:            # (nothing to measure: not built)
        return {**row, "built": True, "page_inline": 0, "page_display": 0, "raw": 0}
    site = work / "site"
    code, said, _ = build_page(tree, notebook, site, allow_errors=True)
    row["built"] = code == 0
    if code == 0:
        from sitegen.project.nbsource import page_output
        rel = f"content/nb/{notebook.relative_to(tree).as_posix()}"
        page = _Page((site / "dist" / page_output(rel)).read_text(encoding="utf-8"))
        row.update(page_inline=page.inline, page_display=page.display, raw=len(RAW.findall("".join(page.text))))
    else:
        row.update(page_inline=0, page_display=0, raw=0, error=said.strip().splitlines()[:2])
    return row


def main(pairs: list[tuple[Path, Path]]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for tree, path in pairs:
            rows.append(measure(tree, path, Path(work)))
    print(f"{'notebook':58} {'reference':>14} {'page':>14} {'raw left':>8}")
    for row in rows:
        print(f"{row['notebook'][:58]:58} {row['reference_inline']:>6} + {row['reference_display']:<5} "
              f"{row['page_inline']:>6} + {row['page_display']:<5} {row['raw']:>8}"
              + ("" if row["built"] else f"  (not built: {row.get('error')})"))
    total = {key: sum(row[key] for row in rows) for key in ("reference_inline", "reference_display",
                                                            "page_inline", "page_display", "raw")}
    print(f"{'total':58} {total['reference_inline']:>6} + {total['reference_display']:<5} "
          f"{total['page_inline']:>6} + {total['page_display']:<5} {total['raw']:>8}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from corpus import laid
    main([(tree, notebook) for tree, notebook in laid() if notebook.exists()
          and (not sys.argv[1:] or notebook.name in sys.argv[1:])])
