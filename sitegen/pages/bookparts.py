"""A book's parts in MyST (Jupyter Book) and Quarto, as this site writes them (dialects.py reads the
fences around them): sphinx-exercise's exercises and solutions, figures and tables with captions,
glossaries, and roles in prose (references, citations, glossary terms, glued values).
"""
from __future__ import annotations

import re
import shlex

from ..core.sources import PAGE_FILES
from .markup import code_spans

# A fence: backticks or tildes (MyST's directive), or colons (MyST's colon fence, Quarto's div).
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
COLONS = re.compile(r"^(?P<indent> {0,3})(?P<fence>:{3,})\s*(?P<rest>.*)$")
REFERENCES = {"ref", "numref", "eq", "prf:ref"}      # (prf:ref: sphinx-proof's)
# sphinxcontrib-bibtex's roles as Pandoc's citations (citations.py): in brackets, in the sentence, the year.
CITATIONS = {"cite": "[@", "cite:p": "[@", "cite:ps": "[@", "cite:alp": "[@", "cite:alps": "[@", "cite:t": "@",
             "cite:ts": "@", "cite:year": "[-@", "cite:yearpar": "[-@"}
EXERCISES = {"exercise", "exercise-start", "exercise-end", "solution", "solution-start", "solution-end"}   # sphinx-exercise
EXERCISE_END = "\0exercise-end"    # (a closer: the exercise's `::: end`, which a solution right after it moves)
# A MyST role ({cite}`key`, {ref}`label`) in prose, wherever it stands (见{ref}`x`: MyST needs no space before
# it; an escaped \{ is text): {math} is this site's $...$, references, citations, terms and glued values this
# site's own; the others are said, and shown as their text.
ROLE = re.compile(r"(?<![`{\\])\{(?P<name>[a-z][\w:-]*)\}`(?P<text>[^`]+)`")
SPHINX_PAGES = {"genindex": "Sphinx's general index", "modindex": "Sphinx's module index", "search": "Sphinx's search page"}
# The schemes of a link that leaves the site (a browser opens it). MyST reads a link's other `name:` prefix as
# a reference: a label with a colon in it (`content:glue`), or a label of another Sphinx project's (intersphinx).
URL_SCHEMES = {"http", "https", "mailto", "tel", "sms", "ftp", "sftp", "file", "data", "javascript", "vbscript", "blob",
               "about", "irc", "news", "geo", "urn", "magnet", "xmpp", "sip", "webcal"}


def myst_reference(target: str) -> bool:
    """Whether a link's target is, as MyST reads it, a label named with a colon (no heading's anchor has one)."""
    scheme, colon, rest = target.partition(":")
    return bool(colon and scheme) and scheme.lower() not in URL_SCHEMES and scheme not in ("figure", "attachment") \
        and not rest.startswith("//") and re.fullmatch(r"[A-Za-z][\w.+-]*", scheme) is not None
def without_spans(line: str) -> str:
    """`line` without its code spans (what is read as markup, and nothing shown as written)."""
    parts, at = [], 0
    for start, end in code_spans(line) if "`" in line else ():
        parts.append(line[at:start])
        at = end
    return "".join(parts) + line[at:]


def outside_spans(pattern: re.Pattern, replace, line: str, also: re.Pattern | None = None) -> str:
    """`line` with `pattern`'s matches replaced (`replace(match)`), but not those that start in a code span
    (or in a match of `also`: a formula, say)."""
    spans = sorted([*(code_spans(line) if "`" in line else ()), *(m.span() for m in also.finditer(line))] if also
                   else code_spans(line) if "`" in line else ())
    if not spans:
        return pattern.sub(replace, line)
    parts, at, position = [], 0, 0
    while (found := pattern.search(line, position)) is not None:
        inside = next((end for start, end in spans if start <= found.start() < end), None)
        if inside is not None:          # (read on after the span: a match there may start later)
            position = inside
            continue
        parts += [line[at:found.start()], replace(found)]
        at, position = found.end(), found.end() + (found.end() == found.start())     # (an empty match: on)
        if position > len(line):
            break
    return "".join(parts) + line[at:]


STYLE = re.compile(r"\s+style\s*=\s*(?:\"[^\"]*\"|'[^']*')", re.I)      # (in raw HTML's tags)


def without_style(text: str, line: int, notes: list) -> str:
    """A line of prose with raw HTML's style= attributes dropped (the site's Content-Security-Policy
    refuses inline styles; a book's chapter or a notebook from elsewhere may hold them), said; a code
    span's as written."""
    kept = outside_spans(STYLE, lambda found: "", text)
    if kept != text:
        notes.append((line, "a style= attribute is dropped: the site's Content-Security-Policy refuses inline styles"))
    return kept


EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<[^<>]+>$")       # {ref}`the text shown <label>`


def directive(kind: str, title: str, fold: str | None, line: int, notes: list, label: str = "") -> str:
    """This site's line opening a callout or a statement (a role in its title read as in prose)."""
    title = outside_spans(ROLE, lambda found: read_role(found, line, notes, in_title=True), title)
    words = [f"::: {kind}"] + ([f"title={shlex.quote(title)}"] if title else []) + ([f"fold={fold}"] if fold else []) \
        + ([f"label={shlex.quote(label)}"] if label else [])
    return " ".join(words)


def exercise(out, index, number, name: str, title: str, options: dict, fence, closers, ended, notes) -> None:
    """sphinx-exercise's directives as this site's exercise: `{exercise}` (or `{exercise-start}` ...
    `{exercise-end}`) is `::: exercise`; a `{solution}` (or `{solution-start}` ... `{solution-end}`)
    right after it is its `::: solution`, which a student's build leaves out; one elsewhere is a
    solution of an exercise of its own, never shown to students either."""
    argument, title = title, title if name.startswith("exercise") else ""     # (a solution's: its exercise's label)
    label = label_name(options.get("label") or options.get("name") or "") if name.startswith("exercise") else ""
    opening = directive("exercise", title, None, number, notes, label=label)
    if name in ("exercise", "exercise-start"):
        out[index], ended[1] = opening, label
        closers.append((*fence, EXERCISE_END if name == "exercise" else "", number))
    elif name == "exercise-end":
        out[index] = ""
        closers.append((*fence, EXERCISE_END, number))
    elif name in ("solution", "solution-start"):
        follows = ended[0] >= 0 and all(not line.strip() for line in out[ended[0] + 1: index])
        if follows:
            out[ended[0]] = ""                          # (the exercise ends after its solution)
        if argument and (not follows or ended[1] and label_name(argument) != ended[1]):     # (its exercise's label)
            notes.append((number, f"this {{{name}}} is of the exercise '{argument}', but stands after " + (
                f"exercise '{ended[1]}': shown as its solution" if follows else "no exercise: shown as the solution "
                "of an exercise of its own") + " (put it right after its {exercise})"))
        out[index] = "::: solution" if follows else opening + "\n::: solution"
        closers.append((*fence, "::: end" if name == "solution" else "", number))
    else:                                               # solution-end
        out[index] = "::: end"
        closers.append((*fence, "", number))
    ended[0] = -1 if name != "exercise-end" else ended[0]
    dropped(name, options, {"label", "class", "nonumber", "hidden"}, number, notes)


def dropped(name: str, options: dict, kept, line: int, notes: list) -> None:
    """Say, in one note, the options of the directive `name` other than those `kept` (left out here)."""
    if unknown := sorted(options.keys() - set(kept)):
        notes.append((line, f"{{{name}}}: option{'s' if len(unknown) > 1 else ''} {', '.join(':' + k + ':' for k in unknown)} "
                            "not supported here (left out)"))


TERM_LABEL = "term-"     # what a glossary term's label starts with


def term_label(term: str) -> str:
    """The label of a glossary's term, which MyST's {term} role names: term-<its words joined by ->."""
    return TERM_LABEL + re.sub(r"[^\w]+", "-", unlinked(term).strip().lower()).strip("-")


PATH_TOKEN = re.compile(r"\.?([A-Za-z_][\w-]*)|\[(-?\d+)\]")          # (a key may hold "-": a glued name, a JSON key)


def is_value_path(path: str) -> bool:
    """Whether `path` names a value as {{ }} quotes one: name.key[0] (prose.lookup)."""
    tokens = list(PATH_TOKEN.finditer(path))
    return bool(tokens) and "".join(t.group(0) for t in tokens) == path and not path.startswith(".")


def slugify(value: str, separator: str = "-") -> str:
    """Heading ids that keep Chinese: lowercase, spaces to '-', punctuation dropped (Markdown's toc
    extension gives a heading this id: render/converters.py)."""
    value = re.sub(r"[^\w\s-]", "", value.lower(), flags=re.UNICODE).strip()
    return re.sub(r"[\s_-]+", separator, value)


def unlinked(markdown: str) -> str:
    """Markdown with each link its text (a glossary's term written as a link, `[Sphinx](https://...)`)."""
    return re.sub(r"(?<!!)\[([^\]]*)\]\([^)]*\)", r"\1", markdown)


def closing(out: list[str], after: int, fence: tuple[str, int]) -> int:
    """The index of the line that closes a directive's `fence` (its character, its length), from
    `after` on: one of that character, as long or longer, with nothing after it; or the page's end."""
    return next((k for k in range(after, len(out)) if (f := FENCE.match(out[k]) or COLONS.match(out[k]))
                 and f["fence"][0] == fence[0] and len(f["fence"]) >= fence[1]
                 and not (f.groupdict().get("info") or f.groupdict().get("rest") or "").strip()), len(out))


ROW = re.compile(r"^[*+-]\s+[*+-](?:\s+(?P<cell>.*))?$")     # a list-table's row: `* - first cell`
CELL = re.compile(r"^ {2}[*+-](?:\s+(?P<cell>.*))?$")        # and each other cell: `  - cell`
BLOCK_START = re.compile(r"^\s*(?:[*+-]|\d{1,9}[.)])\s|^\s*#|^\s*>")   # a line no one-paragraph cell holds


def _rows(lines: list[str]) -> list[list[list[tuple[int, str]]]] | None:
    """A list-table's rows, each a list of cells, each its lines as (index in `lines`, text without the
    list's indent); None where a line is no row's, cell's or cell's own."""
    rows: list[list[list[tuple[int, str]]]] = []
    for k, line in enumerate(lines):
        if (row := ROW.match(line)) is not None:
            rows.append([[(k, row["cell"] or "")]])
        elif rows and (cell := CELL.match(line)) is not None:
            rows[-1].append([(k, cell["cell"] or "")])
        elif rows and (not line.strip() or line.startswith("    ")):
            rows[-1][-1].append((k, line[4:]))
        elif line.strip():
            return None
    return rows


def _paragraph(cell: list[tuple[int, str]]) -> str | None:
    """A cell's text on one line, if it is one paragraph (what a Markdown table's cell holds)."""
    texts = [text for _, text in cell]
    while texts and not texts[-1].strip():
        texts.pop()
    if any(not text.strip() or FENCE.match(text) or COLONS.match(text) or BLOCK_START.match(text) for text in texts):
        return None
    return " ".join(text.strip() for text in texts)


def list_table(out, index: int, after: int, title: str, options: dict, fence, number: int, notes) -> int | None:
    """MyST's {list-table} (a list of rows, each a list of cells): where each cell is one paragraph, a
    Markdown table, its first :header-rows: row the header, its title the caption (`: title {#name}`
    below it, as {table}'s); where a cell holds blocks (code, a list, a directive), this site's
    `::: list-table` with a `::: row` per row and an `::: entry` per cell, each cell's lines at the
    margin (read on as the page's: a directive in a cell is one), the lines of markers before them
    (dialects.translate reads a line holding several as several). Returns the index to read on
    from, or None where a line is no row's or cell's."""
    end = closing(out, after, fence)
    rows = _rows(out[after:end])
    if not rows:
        return None
    dropped("list-table", options, {"name", "header-rows", "widths", "width", "align", "class"}, number, notes)
    heads = min(int(options.get("header-rows", "0") or 0), len(rows))
    label = options.get("name", "")
    caption = [f": {title} {{#{label}}}"] if title and label else [f"**{title}**", ""] if title else []
    span = end + 1 - index if end < len(out) else end - index
    cells = [[_paragraph(cell) for cell in row] for row in rows]
    if all(text is not None for row in cells for text in row):
        width = max(len(row) for row in cells)

        def line(texts: list[str]) -> str:
            return "| " + " | ".join(text.replace("|", "\\|") for text in texts + [""] * (width - len(texts))) + " |"
        table = [line(cells[0] if heads else [])] + ["|" + "---|" * width] + [line(row) for row in cells[min(heads, 1):]]
        lines = ([] if label else caption) + table + ([""] + caption if label else [])
        out[index:index + span] = (lines + [""] * span)[:span] if len(lines) <= span else ["\n".join(lines)] + [""] * (span - 1)
        return index        # (its lines are read on as prose's: the roles in its cells)
    out[index] = f"::: list-table header-rows={heads}" + (f" title={shlex.quote(title)}" if title and not label else "")
    for k in range(index + 1, end + (end < len(out))):
        out[k] = ""
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            first, text = cell[0]
            markers = (["::: end"] if c else ["::: end", "::: end"] if r else []) + (["::: row"] if not c else []) + ["::: entry"]
            out[after + first] = "\n".join(markers + [text])
            for k, text in cell[1:]:
                out[after + k] = text
    closing_lines = ["::: end", "::: end", "::: end"] + (["", caption[0]] if label else [])
    if end < len(out):
        out[end] = "\n".join(closing_lines)
    else:           # (never closed: it runs to the page's end, as CommonMark runs a fence)
        out[end - 1] = "\n".join([out[end - 1], *closing_lines])
    return index


DEFINITION = re.compile(r"^:[ \t]+(?P<text>.*)$")


def glossary(out, start: int, end: int, ordered: bool, number: int, notes: list) -> None:
    """MyST's {glossary} (terms at the margin, each definition indented below them, or as mystmd writes
    it, a definition list: `Term` then `: definition`) as a definition list,
    each term labelled (term_label) for references to show it: `Term {#term-term}` then `:   definition`
    (names of one thing on one line, each its own: `[Term]{#term-term}, [Other]{#term-other}`)."""
    entries: list[tuple[list[str], list[str]]] = []
    listed = any(DEFINITION.match(line) for line in out[start:end])    # (mystmd's: a definition list's `: `)
    for line in out[start:end]:
        if listed and (definition := DEFINITION.match(line)) and entries:
            entries[-1][1].append("    " + definition["text"])
        elif line.strip() and not line[0].isspace():
            if not entries or entries[-1][1]:
                entries.append(([], []))
            entries[-1][0].append(line.strip())
        elif entries and (line.strip() or entries[-1][1]):
            entries[-1][1].append(line)
    lines = []
    for terms, definition in sorted(entries) if ordered else entries:
        if not any(line.strip() for line in definition):      # (a term alone: said, shown as its name)
            notes.append((number, f"the glossary's term '{terms[0]}' has no definition (indent one below it): "
                                  "it shows alone"))
            lines += [", ".join(f"[{term}]{{#{term_label(term)}}}" for term in terms), ""]
            continue
        indent = min((len(line) - len(line.lstrip()) for line in definition if line.strip()), default=0)
        body = [line[indent:] for line in definition]
        lines.append(f"{terms[0]} {{#{term_label(terms[0])}}}" if len(terms) == 1 else    # (several names: one
                     ", ".join(f"[{term}]{{#{term_label(term)}}}" for term in terms))       # term, each its id)
        lines += [f":   {body[0]}" if body else ":"] + [f"    {line}" if line.strip() else "" for line in body[1:]] + [""]
    out[start:end] = (lines + [""] * (end - start))[: end - start] if len(lines) <= end - start else \
        ["\n".join(lines)] + [""] * (end - start - 1)


def captioned(out, index, after, name: str, title: str, options: dict, fence, closers, number: int, notes,
              computed: bool = True) -> int:
    """MyST's {image} as an image (its :name: the image's id); its {figure} (its image, :name: and :alt:,
    and its content the caption) as this site's
    `![alt](image "caption"){#name}`, numbered (myst-nb's {glue:figure} NAME too: the figure glued as
    NAME, labs/glue.py); its {table} (its title the caption, its content the
    table) with a caption line `: caption {#name}` after the table, as Pandoc writes one."""
    label = options.get("name", "")
    if name.startswith("glue") and "doc" in options:        # (glued in another notebook: that page shows it)
        notes.append((number, f"{{{name}}} {title} with :doc: (a figure another notebook glued) is not supported "
                              "here: left out; show it on that notebook's page"))
        out[index] = ""
        closers.append((*fence, "", number))
        return after
    dropped(name, options, {"name", "alt", "width", "height", "align", "class", "figwidth", "scale"}, number, notes)
    if name == "table":
        out[index] = ""
        closers.append((*fence, f"\n: {title} {{#{label}}}" if label and title else "", number))     # (a line apart)
        return after
    end = closing(out, after, fence)
    if name == "image":         # an image, not a figure: not numbered; its name an anchor (`{#name}`), its path
        alt = options.get("alt", title).replace("]", ")").replace("[", "(")         # its alt text, as docutils'
        out[index] = f"![{alt}]({title})" + (f"{{#{label}}}" if label else "")
        out[index + 1:min(end + 1, len(out))] = [""] * (min(end + 1, len(out)) - index - 1)
        return min(end + 1, len(out))
    caption = " ".join(line.strip() for line in out[after:end] if line.strip()).replace('"', "'")
    caption = outside_spans(ROLE, lambda found: read_role(found, number, notes, computed=computed), caption)
    alt = options.get("alt", caption or (title if name != "figure" else "")).replace("]", ")").replace("[", "(")
    if name.startswith("glue") and not computed:         # (no code runs here: nothing glued it)
        notes.append((number, f"{{{name}}} {title} shows a figure a notebook's code glued, and this page runs no "
                              "code: its caption shown alone; show it in the notebook that glues it"))
        out[index] = caption
    elif not title.strip():             # (a figure that names no image: its caption, said)
        notes.append((number, f"this {{{name}}} names no image (write it as ```{{{name}}} path/to/image.png```): "
                              "its caption shows alone"))
        out[index] = caption
    else:
        title = f"figure:{title}.png" if name != "figure" else title        # (a glued figure: its name's)
        out[index] = f'![{alt}]({title}' + (f' "{caption}"' if caption else "") + ")" + (f" {{#{label}}}" if label else "")
    for k in range(index + 1, min(end + 1, len(out))):
        out[k] = ""
    return min(end + 1, len(out))


def label_name(name: str) -> str:
    """A label's name as this site writes it: MyST (docutils) reads spaces in one as one, and the page's id
    can hold none; so each run of them is a hyphen ("data frame" is "data-frame")."""
    return re.sub(r"\s+", "-", name.strip())


def read_role(role: re.Match, line: int, notes: list, in_title: bool = False, computed: bool = True,
              unmade: frozenset | set = frozenset()) -> str:
    """A MyST role as this site writes it: {math} as $...$; a reference ({ref}, {numref}, {eq}) as a link
    to its label, [](#label), which shows the label's number or title; another one said in `notes` and
    shown as its text (`text <label>`: the text), never with its {name}."""
    text = role["text"]
    if role["name"] == "math":
        return f"${text}$"
    if role["name"] in CITATIONS and not in_title:         # sphinxcontrib-bibtex's: Pandoc's citations
        keys = [key.strip() for key in text.split(",") if key.strip()]
        if CITATIONS[role["name"]] == "@":
            return ", ".join(f"@{key}" for key in keys)
        return "[" + "; ".join(CITATIONS[role["name"]][1:] + key for key in keys) + "]"
    if role["name"] in ("glue", "glue:", "glue:text", "glue:md") and not in_title:     # myst-nb's: a value
        name, _, spec = text.partition(":")                                           # (labs/glue.py)
        if not computed:
            notes.append((line, f"{{{role['name']}}}`{text}` quotes a value a notebook's code glued, and this page "
                                "runs no code: shown as its name; quote it in the notebook that glues it"))
            return f"`{name.strip()}`"
        return f"{{{{ {name.strip()}{' | ' + spec.strip() if spec.strip() else ''} }}}}"
    if role["name"] == "term" and not in_title:           # a glossary's term: its text, linked to it, as MyST shows it
        explicit = re.match(r"^(?P<text>.*?)\s*<(?P<term>[^<>]+)>$", text)
        return f"[{explicit['text']}](#{term_label(explicit['term'])})" if explicit else f"[{text}](#{term_label(text)})"
    if role["name"] == "doc" and not in_title:      # a page, by its source's path (its suffix left out or not):
        explicit = re.match(r"^(?P<text>.*?)\s*<(?P<path>[^<>]+)>$", text)      # [](path.md) shows its title
        path = (explicit["path"] if explicit else text).strip()
        path += "" if path.endswith(PAGE_FILES) else ".md"
        return f"[{explicit['text'] if explicit else ''}]({path})"
    if role["name"] in REFERENCES and not in_title:     # (a title is text)
        explicit = re.match(r"^(?P<text>.*?)\s*<(?P<label>[^<>]+)>$", text)
        label = label_name((explicit["label"] if explicit else text).lstrip("#"))
        shown = explicit["text"].replace("{number}", "%s") if explicit else ""
        if label in SPHINX_PAGES or label in unmade:        # (unmade: the names of {index} entries)
            notes.append((line, f"{{{role['name']}}}`{text}`: '{label}' is "
                                f"{SPHINX_PAGES.get(label, 'an entry of the index')}, which this site does not make: "
                                "shown as its text"))
            return shown.replace("%s", label) or label
        return f"[{shown}](#{label})"
    explicit = EXPLICIT.match(text)
    notes.append((line, f"the MyST role {{{role['name']}}} is not supported here: "
                        + (f"shown as its text '{explicit['text']}'" if explicit else f"shown as `{text}`")))
    return explicit["text"] if explicit else f"`{text}`"


SUBSTITUTION = re.compile(r"\{\{\s*(?P<name>[\w-]+)\s*(?P<filters>\|[^}]*)?\}\}")
DEPTH = 10          # substitutions within substitutions, at most (MyST's refuses a circle)


def substitute(lines: list[str], codes: list[bool], numbers: list[int], substitutions: dict[str, str], computed: bool,
               notes: list) -> tuple[list[str], list[int]]:
    """MyST's substitutions: `{{ name }}` outside code (`codes`: which lines are) is the Markdown the front
    matter gives `name`, itself substituted, a block of lines where it holds several (each at the line of
    its {{ }}: `numbers`); `{{ name | filter(...) }}` is Jinja's, as MyST renders it. On a page that is not
    `computed` (no lab's values to quote) an unknown name is said and shown as its name."""
    out: list[str] = []
    at: list[int] = []
    for line, code, number in zip(lines, codes, numbers):
        if not code:
            for _ in range(DEPTH):
                done = outside_spans(SUBSTITUTION, lambda found: _substituted(found, substitutions, computed, number,
                                                                               notes), line)      # (code spans: as written)
                if done == line:
                    break
                line = done
        parts = line.split("\n")
        out += parts
        at += [number] * len(parts)
    return out, at


def _substituted(found: re.Match, substitutions: dict[str, str], computed: bool, line: int, notes: list) -> str:
    name = found["name"]
    if name not in substitutions and computed:
        return found[0]                     # (a lab's value: {{ name | .2f }})
    if name not in substitutions:
        notes.append((line, f"{{{{ {name} }}}}: the front matter's substitutions name no '{name}' "
                            f"(they are: {', '.join(sorted(substitutions))}): shown as its name"))
        return f"`{name}`"
    within = found.string[:found.start()].strip() or found.string[found.end():].strip()
    if within and "\n" in str(substitutions[name]).strip():
        notes.append((line, f"{{{{ {name} }}}} holds several lines (a block: a callout, a figure), and stands inside a "
                            "line here (a table's cell): a block cannot show there; shown as its name"))
        return f"`{name}`"
    if not found["filters"]:
        return substitutions[name]
    from jinja2 import TemplateError
    from jinja2.sandbox import SandboxedEnvironment
    try:
        return SandboxedEnvironment().from_string(found[0]).render(substitutions)
    except TemplateError as exc:
        notes.append((line, f"{found[0]}: {exc} (Jinja, as MyST reads a substitution with a filter): "
                            "shown as the substitution alone"))
        return substitutions[name]
