"""CommonMark's own spec examples, and GitHub's for its extensions (tables, strikethrough, autolinks, task
lists), read as the site reads a page's prose and a notebook's Markdown cell, compared with the spec's HTML.

    python tests/corpus/spec.py lay       # the examples, out of the fetched specs (MIRROR)
    python tests/corpus/spec.py report    # each section's examples: as the spec renders them, or not

The specs are not committed: fetch github:commonmark/commonmark-spec and github:github/cmark-gfm. An
example is read as a page's body is (content.parse_page, then prose.transform_prose and the page's
Markdown, render/markdown.py), and as a notebook's Markdown cell is (nbpage.page_text first); the
site's own decorations are left out of the comparison (a heading's id and its link, Pygments' spans,
a table column's alignment as a class) and both sides compared as an HTML parser reads them. Examples
that hold the site's own syntax (a `::: kind` line, `{{ value }}`, `$` math, a `[^note]`) are not the
spec's to judge: they are counted apart.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from corpus import LAID, MIRROR

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
SPECS = [("commonmark/commonmark-spec", "spec.txt", None),
         ("github/cmark-gfm", "test/spec.txt", ("Tables (extension)", "Strikethrough (extension)",
                                                 "Autolinks (extension)", "Task list items (extension)"))]
FENCE = "`" * 32
SITE_SYNTAX = re.compile(r"^ {0,3}:::|\{\{|\$|\[\^|\{#|\{[a-z-]+\}`", re.M)
# CommonMark's examples of text that is no autolink in CommonMark alone, which GitHub's autolinks (as
# Jupyter renders Markdown: GFM) make links: read as GitHub's spec reads them.
BARE = re.compile(r"(?<![<(\w])(?:https?://|www\.|[\w.+-]+@[\w-]+\.)")


def examples(text: str, sections) -> list[dict]:
    found, section, lines, k = [], "", text.split("\n"), 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("## "):
            section = line[3:].strip()
        if line.startswith(FENCE + " example") and (sections is None or section in sections):
            body, k = [], k + 1
            while lines[k] != FENCE:
                body.append(lines[k])
                k += 1
            dot = body.index(".")                   # (the line between an example's Markdown and its HTML)
            markdown, html = ("\n".join(part) + "\n" if part else "" for part in (body[:dot], body[dot + 1:]))
            found.append({"section": section, "markdown": markdown.replace("\u2192", "\t"),
                          "html": html.replace("\u2192", "\t")})
        k += 1
    return found


def lay() -> None:
    found = []
    for repo, path, sections in SPECS:
        git = MIRROR / repo.replace("/", "+") / "repo"
        text = subprocess.run(["git", f"--git-dir={git}" if (git / "HEAD").exists() else f"--git-dir={git}/.git",
                               "show", f"HEAD:{path}"], capture_output=True, text=True, check=True).stdout
        found += [{**example, "spec": repo} for example in examples(text, sections)]
    (LAID / "spec").mkdir(parents=True, exist_ok=True)
    (LAID / "spec/examples.json").write_text(json.dumps(found, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"laid {len(found)} examples in {LAID / 'spec'}")


def as_page(markdown: str) -> str:
    """An example read as a page's prose is (its blocks none: an example holds no `::: kind`)."""
    from sitegen.pages.content import parse_page
    from sitegen.pages.prose import transform_prose
    from sitegen.render.markdown import Markdown
    page = parse_page("---\ntitle: Example\n---\n" + markdown, "content/example.md", "example.html")
    parts = [transform_prose(block.text, None, lambda target: target) for block in page.blocks if block.kind == "prose"]
    return Markdown({"heading_link": "", "footnote_back": ""}).convert("\n".join(parts))


def as_cell(markdown: str) -> str:
    """An example read as a notebook's Markdown cell is (the page's text a notebook makes: nbpage.py)."""
    from sitegen.pages.nbpage import page_text
    from sitegen.project.nbsource import NotebookCell, NotebookSource
    source = NotebookSource("content/example.ipynb", {"title": "Example"}, {"title": 1},
                            (NotebookCell("markdown", markdown, 1, tuple(range(1, markdown.count("\n") + 2))),), (),
                            False, None, None)
    text, _, _ = page_text(source)
    return as_page(text.split("---\n", 2)[2])


def normal(html: str) -> str:
    """HTML as a parser reads it, without the site's decorations and the whitespace between tags."""
    import html5lib
    from html5lib import treewalkers
    tree = html5lib.parseFragment(html, treebuilder="etree", namespaceHTMLElements=False)
    out, skip = [], 0
    for token in treewalkers.getTreeWalker("etree")(tree):
        kind, name = token["type"], token.get("name")
        attrs = {key[1]: value for key, value in token["data"].items()} if kind in ("StartTag", "EmptyTag") else {}
        if kind in ("StartTag", "EmptyTag"):
            if skip or (name == "a" and "heading-anchor" in attrs.get("class", "")):
                skip += kind == "StartTag"
                continue
            if name in ("span",) or (name == "div" and "highlight" in attrs.get("class", "")):
                continue                        # (Pygments' spans, the highlight's box)
            if re.fullmatch(r"h[1-6]", name):
                attrs.pop("id", None)
            if (align := re.search(r"align-(\w+)", attrs.get("class", ""))):
                attrs["align"] = align[1]
            for key in ("rel", "class"):
                attrs.pop(key, None)
            for key in ("disabled", "checked"):
                if key in attrs:
                    attrs[key] = ""
            out.append(f"<{name}" + "".join(f' {k}="{v}"' for k, v in sorted(attrs.items())) + ">")
        elif kind == "EndTag":
            if skip:
                skip -= 1
                continue
            if name == "span" or (name == "div" and out and False):
                continue
            out.append(f"</{name}>")
        elif kind in ("Characters", "SpaceCharacters") and not skip:
            out.append(token["data"])
    text = "".join(out).replace("</div>", "") if "highlight" in html else "".join(out)
    text = text.replace("<code>\n</code>", "<code></code>")        # (Pygments ends even empty code with a newline)
    text = re.sub(r"\s+(</(?:a|foo|em|strong|style|script|pre|textarea)>)", r"\1", text)   # (an HTML block's end)
    return re.sub(r"\s*(</?(?:p|li|ul|ol|h\d|blockquote|pre|table|thead|tbody|tr|th|td|hr|div|dl|dt|dd)\b[^>]*>)\s*",
                  r"\1", text).strip()


def report() -> int:
    found = json.loads((LAID / "spec/examples.json").read_text(encoding="utf-8"))
    counts: dict[tuple[str, str], list[int]] = {}
    failed = []
    for number, example in enumerate(found, 1):
        ours = "site" if SITE_SYNTAX.search(example["markdown"]) or (
            example["spec"].startswith("commonmark") and "<a" not in example["html"] and BARE.search(example["markdown"])) \
            else "spec"
        row = counts.setdefault((example["spec"], example["section"]), [0, 0, 0, 0])   # page, cell, of, site's
        if ours == "site":
            row[3] += 1
            continue
        row[2] += 1
        want = normal(example["html"])
        for column, read in ((0, as_page), (1, as_cell)):
            try:
                got = normal(read(example["markdown"]))
            except Exception as exc:        # noqa: BLE001 - an example the site cannot read is one it fails
                got = f"{type(exc).__name__}: {exc}"
            if got == want:
                row[column] += 1
            else:
                failed.append((number, f"{example['section']} ({'page' if column == 0 else 'cell'})",
                               example["markdown"], want, got))
    print("| spec | section | as a page | as a notebook's cell | examples | left out (the site's syntax, GFM's autolinks) |")
    print("|---|---|---|---|---|---|")
    total = [0, 0, 0, 0]
    for (spec, section), row in counts.items():
        print(f"| {spec} | {section} | {row[0]} | {row[1]} | {row[2]} | {row[3]} |")
        total = [a + b for a, b in zip(total, row)]
    print(f"| all | | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    for number, section, markdown, want, got in failed[:int(sys.argv[2]) if len(sys.argv) > 2 else 0]:
        print(f"\n#{number} {section}\n{markdown!r}\nwant {want!r}\ngot  {got!r}")
    return 0 if total[0] == total[2] else 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if sys.argv[1:2] == ["lay"]:
        lay()
        sys.exit(0)
    if sys.argv[1:2] == ["report"]:
        sys.exit(report())
    sys.exit(__doc__)
