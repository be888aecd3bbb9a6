"""The block markup teachers bring from Jupyter Book (MyST), Quarto and GitHub, read as this site's.

A page's body is read line by line (content.py). Before that, `translate` turns each callout written
in another tool's syntax into this site's (`::: note title="..."` ... `::: end`), line for line, so
that every line keeps its number and what follows is one syntax:

    ```{note} Title           MyST's directive (backticks or tildes), its options as `:key: value` lines;
    ...                       {tip}, {warning}, {important}, {caution}, and their kin ({hint}, {danger},
    ```                       ...); {admonition} Title (its `:class:` says which kind); {dropdown} Title
    :::{tip}                  MyST's colon fence, the same
    ...
    :::
    ::: {.callout-warning title="..." collapse="true"}    Quarto's callout (its title may be a heading inside)
    ...
    :::
    > [!NOTE]                 GitHub's alert: the quote's lines, without their `>`
    > ...

Markup of those tools that looks like a directive, a div or a role but is none this site supports is
said in a note (a warning; an error under --strict) naming its line and what it is, and what the page
shows instead: a directive's or div's content as prose, its fences left out.
"""
from __future__ import annotations

import re

from .bookparts import (COLONS, EXERCISE_END, EXERCISES, FENCE, captioned, closing, directive, dropped, exercise,
                        glossary, label_name, list_table, slugify, unlinked)
from .displaymath import MATH_OPEN, MYST_LABELLED, ams_environment, display_math, joined, labelled_line
from .inlines import HEADING, inline_markup
from .markup import code_blocks, in_code, open_fence
from .quartodivs import attributes, div_end, shown_here, tabset

CALLOUTS = ("note", "tip", "important", "warning", "caution")      # the kinds of callout, as GitHub's alerts name them
BOXES = (*CALLOUTS, "margin", "tab")    # what `::: KIND` ... `::: end` opens besides statements: a callout, a margin
                                        # note, or one of a set of tabs (on a page of its own: one after another)
# Another tool's margin notes, as this site's `::: margin`: MyST's directives, Quarto's div classes.
MARGINS = {"margin", "sidebar", "aside", "column-margin"}
# Pandoc's divs a Quarto document writes with a bare class (`::: aside`), as it would write `::: {.aside}`.
BARE_DIVS = {"aside", "column-margin", "panel-tabset", "notes", "incremental", "nonincremental", "columns", "column", "fragment"}
# A mathematical statement, numbered per kind on its page (a proof is not): sphinx-proof's {prf:...} directives.
STATEMENTS = ("theorem", "lemma", "corollary", "proposition", "conjecture", "definition", "axiom", "assumption",
              "example", "remark", "property", "observation", "criterion", "notation", "algorithm", "proof")
# MyST's admonitions (docutils' names) as the kind of callout they look most like.
MYST_KINDS = {**{kind: kind for kind in CALLOUTS}, "hint": "tip", "seealso": "note", "attention": "important",
              "danger": "caution", "error": "caution", "admonition": "note", "dropdown": "note"}
# MyST's directives whose content is code, not Markdown: shown as a block of code when not supported.
CODE = {"code-cell", "code-block", "code", "sourcecode", "literalinclude", "ipython", "raw", "math", "mermaid", "graphviz",
        "eval-rst"}
OWN_CONTAINERS = {"exercise", *BOXES, *STATEMENTS}     # this site's blocks that `::: end` closes (blocks.KINDS)
QUOTES = {"epigraph", "pull-quote", "highlights"}     # docutils' quotations: a quote here
SHOWN_CODE = {"code-block", "code", "sourcecode"}       # those whose meaning is code shown, in the language they name
# Front matter keys of other tools' pages that this site's pages do not read: left out with a note.
FOREIGN_FRONT_MATTER = {
    **dict.fromkeys(("subtitle", "short_title", "authors", "date", "doi", "license", "github", "binder",
                     "keywords", "tags", "thumbnail", "banner", "numbering", "math", "abbreviations", "exports",
                     "downloads", "bibliography", "myst", "substitutions", "html_meta", "orphan", "file_format",
                     "jupytext", "kernelspec", "label", "site", "venue", "subject", "affiliations"), "MyST"),
    **dict.fromkeys(("author", "format", "execute", "jupyter", "editor", "lang", "number-sections", "crossref",
                     "toc-title", "abstract", "categories", "image", "engine", "filters", "csl", "citation",
                     "reference-location", "title-block-banner", "freeze", "echo", "code-fold"), "Quarto"),
}
# Where this site reads what such a key says.
ELSEWHERE = {"bibliography": "; a course's BibTeX files are named once, in site.yaml: site: bibliography: references.bib",
             "csl": "; the citation style is site.yaml's site: citation_style: (a CSL style's name)",
             "lang": "; the course's language is site.yaml's site: language:"}
MYST_OPTIONS = {"class", "open", "name"}     # what a callout's options may say; `name`: kept for references

OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")
MYST = re.compile(r"^\{(?P<name>[A-Za-z][\w:-]*)\}\s*(?P<title>.*)$")
QUARTO = re.compile(r"^\{(?P<attrs>[^}]*)\}\s*$")
QUARTO_CALLOUT = re.compile(r"(?:^|\s)\.callout-(?P<kind>[a-z]+)(?=\s|$)")
ALERT = re.compile(r"^ {0,3}>\s*\[!(?P<kind>[A-Za-z]+)\][+-]?\s*(?P<title>.*)$")
TARGET = re.compile(r"^ {0,3}\((?P<label>[^()\s]+)\)=\s*$")     # MyST's `(label)=` above a heading
QUOTED = re.compile(r"^(?: {0,3}> ?)+")
DEFINED = re.compile(r"^ {0,3}\((?P<label>[^()\s]+)\)=\s*$|^\s*:(?:label|name):\s*(?P<option>\S+)")
# A MyST directive, a colon fence's or a Quarto div in a quote: `> ```{note}`, `> :::{tip}`, `> ::: {.callout-note}`
QUOTED_DIRECTIVE = re.compile(r"^ {0,3}>(?: {0,3}>)* ?(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>\{.*)$")
NESTED_DIRECTIVE = re.compile(r"^(?P<indent> {2,})(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>\{.*)$")   # under a list item


def translate(lines: list[str], start: int, notes: list, computed: bool = True,
              numbers: list[int] | None = None) -> tuple[list[str], list[int], list[bool]]:
    """`lines` (a page's body, its first at file line `start` + 1) with other tools' callouts written in
    this site's syntax; the file's line number of each line (a GitHub alert's end is a line of its
    own, which the file lacks: it takes the number of the line after it); and whether each is code
    (a fenced block's, its fences included: read here once, as CommonMark reads fences, for
    content.py too). What is not supported is said in `notes` as (line, message); so is a glued value's
    role on a page that is not `computed` (names no lab: it has no values). `numbers`: each line's in the
    file, when they are not start + 1 on (a substitution's lines are its {{ }}'s)."""
    out = list(lines)
    numbers = list(numbers) if numbers is not None else list(range(start + 1, start + 1 + len(lines)))
    codes = [False] * len(lines)
    # What is code, as CommonMark and MyST read it (markup.py, the render's own parser): each line inside a
    # block of code, and each that opens one (a directive's that holds code is read here; the rest skipped).
    inside, opens = _code_lines(lines)
    left_open = open_fence(lines, CODE)         # (said at the end)
    given_numbers = list(numbers)
    closers: list[tuple[str, int, str, int]] = []   # open fences of directives: (char, length, the line that
                                                    # closes it here: "::: end" or "", the line it opened at)
    ended = [-1, ""]        # the index of the last exercise's `::: end` (a solution right after it moves it), its label
    alert = False
    pending = ""                # a (label)= above a formula: its label
    own: list[int] = []         # this site's blocks open (`::: note`): a bare `:::` closes the innermost
    # The page's labels, as MyST defines them: a Markdown link to one, [text](label), is [text](#label).
    named, indexed = _defined(lines)
    # Its headings' ids, which a Jupyter-style table of contents names as Jupyter does (case kept, `-` for a space).
    headings = {slugify(unlinked(found["title"])) for line in lines if (found := HEADING.match(line))}
    index = 0
    while index < len(out):
        if "\n" in out[index]:         # (lines a rewrite made of one, a list-table's markers: each read, all
            k = index                   # such lines split at once, and what is code in them and after read again)
            while k < len(out):
                parts = out[k].split("\n")
                out[k:k + 1], numbers[k:k + 1], codes[k:k + 1] = parts, [numbers[k]] * len(parts), [codes[k]] * len(parts)
                k += len(parts)
            inside[index:], opens[index:] = _code_lines(out[index:])
        line, number = out[index], numbers[index]
        if alert:                   # inside a GitHub alert: a quote's line, or the line that ends it
            if re.match(r"^ {0,3}>", line):
                out[index] = re.sub(r"^ {0,3}> ?", "", line)
                index += 1
                continue
            alert = False
            if line.strip():        # (a line that is no quote's right after it: the end goes between)
                out.insert(index, "::: end")
                numbers.insert(index, number)
                codes.insert(index, False)
                inside.insert(index, False)
                opens.insert(index, False)
            else:
                out[index] = "::: end"
            index += 1
            continue
        if not inside[index] and (quoted := QUOTED_DIRECTIVE.match(line)) and (
                MYST.match(quoted["info"].strip()) or quoted["fence"][0] == ":"):
            _unquote(out, index, quoted, notes, number)
            line = out[index]
        if not inside[index] and (nested := NESTED_DIRECTIVE.match(line)) and MYST.match(nested["info"].strip()):
            _unnest(out, index, nested, notes, number)
            line = out[index]
        fence = FENCE.match(line)
        if inside[index] and not opens[index]:      # (code: as written)
            codes[index] = True
            index += 1
            continue
        if fence and fence["fence"][0] == "`" and "`" in fence["info"] and MYST.match(fence["info"].strip()):
            notes.append((number, "a backtick fence's info string may hold no backtick (CommonMark, and so MyST): this "
                                  "is no directive; write it with tildes (~~~{name} ...) or colons (:::{name} ...)"))
            index += 1          # (its text as written: read, a role in it would make it a fence, which it is not)
            continue
        if fence:
            char, length, info = fence["fence"][0], len(fence["fence"]), fence["info"].strip()
            if closers and closers[-1][0] == char and length >= closers[-1][1] and not info:
                out[index] = _close(closers.pop(), index, ended)
                if opens[index]:        # (read after a rewrite, which left it no directive to close: read again)
                    inside[index + 1:], opens[index + 1:] = _code_lines(out[index + 1:])
                index += 1
                continue
            myst = MYST.match(info)
            if myst and myst["name"] in MYST_KINDS:
                index = _myst(out, index, number, myst, (char, length), closers, notes, ended, computed)
                continue
            if myst and myst["name"] == "math":      # a display formula: this site's $$ ... $$ {#label}
                index = _math_directive(out, numbers, index, (char, length), pending, notes)
                pending = ""
                continue
            if myst and myst["name"] in CODE:   # code shown: a {code-block} in its language, as MyST shows it;
                name, title = myst["name"], myst["title"].split()      # any other (a code cell here) said
                options, after = _options(out, index + 1)
                if name in SHOWN_CODE:
                    language = title[0] if title else ""
                    dropped(name, options, {"name", "class"}, number, notes)
                else:
                    notes.append((number, f"the MyST directive {{{name}}} is not supported here: it shows as "
                                          "a block of code"))
                    language = "python" if name == "code-cell" else ""
                out[index] = ""             # (the fence opens below its options, which are no code)
                out[after - 1] = f"{fence['indent']}{fence['fence']}{language}"
                codes[after - 1] = True
                index = after
                continue
            if myst:                # another directive (an exercise, tabs, a figure): its content is prose
                index = _myst(out, index, number, myst, (char, length), closers, notes, ended, computed)
                continue
            codes[index] = inside[index]        # (a fence that opens code; one in raw HTML is none)
            index += 1
            continue
        if opens[index]:                # a list item that opens with code, an indented block (as written)
            codes[index] = True
            index += 1
            continue
        colons = COLONS.match(line)
        if colons and _bare_class(colons["rest"].strip()):          # Pandoc's `::: aside`: `::: {.aside}`
            colons = COLONS.match(f"{colons['fence']} {{.{colons['rest'].strip()}}}")
        if colons and colons["rest"].startswith("{"):
            if len(colons["indent"]) >= 2 and ".callout-" in colons["rest"]:
                _in_list_item(f"the callout {colons['rest'].split()[0]}", number, notes)
            index = _colon_fence(out, index, number, colons, closers, notes, ended, computed)
            continue
        if colons and not colons["rest"]:
            if closers and closers[-1][0] == ":" and len(colons["fence"]) >= closers[-1][1]:
                out[index] = _close(closers.pop(), index, ended)
            elif own:               # (this site's `::: note`, closed as Pandoc closes its div `::: note`)
                out[index] = "::: end"
                own.pop()
            else:
                notes.append((number, f"'{colons['fence']}' closes nothing (no ':::{{...}}' is open above it): left out"))
                out[index] = ""
            index += 1
            continue
        if colons and colons["rest"].split()[0] in OWN_CONTAINERS:      # this site's block, which `::: end` closes
            own.append(index)
        elif colons and colons["rest"].strip() == "end" and own:
            own.pop()
        found = ALERT.match(line)
        if found:
            kind = found["kind"].lower()
            if kind in CALLOUTS:
                if len(line) - len(line.lstrip(" ")) >= 2:
                    _in_list_item(f"the alert [!{found['kind']}]", number, notes)
                out[index], alert = directive(kind, found["title"].strip(), None, number, notes), True
            else:
                notes.append((number, f"[!{found['kind']}] is not a GitHub alert this site knows: it shows as a quote "
                                      f"(the alerts are {', '.join('[!' + k.upper() + ']' for k in CALLOUTS)})"))
            index += 1
            continue
        if target := TARGET.match(line):
            out[index] = ""
            following = next((k for k in range(index + 1, len(out)) if out[k].strip()), None)
            heading = HEADING.match(out[following]) if following is not None else None
            labelled = following is not None and (MYST_LABELLED.match(out[following]) or MATH_OPEN.match(out[following])
                                                  or re.match(r"^ {0,3}(`{3,}|~{3,}|:{3,})\{math\}", out[following]))
            if heading and "{#" not in out[following]:        # the heading's anchor, which [](#label) refers to
                out[following] = out[following].rstrip().rstrip("#").rstrip() + f" {{#{target['label']}}}"
            elif labelled:
                pending = target["label"]
            else:
                notes.append((number, f"the MyST target ({target['label']})= stands above no heading or formula: left "
                                      "out (a heading's anchor is {#name} at its end)"))
            index += 1
            continue
        if (after := ams_environment(out, index, pending, number, notes)) is not None:
            index, pending = after, ""
            continue
        if MATH_OPEN.match(line) or (pending and MYST_LABELLED.match(line)):
            index = display_math(out, numbers, index, pending, notes)
            pending = ""
            continue
        if MYST_LABELLED.match(line):
            found = MYST_LABELLED.match(line)
            out[index] = f"{found['math']} {{#{found['label']}}}"
        elif (labelled := labelled_line(line)) is not None:
            out[index] = labelled
        out[index] = inline_markup(out[index], number, notes, codes[index], computed, named, indexed, headings)
        index += 1
    if left_open is not None:       # (as CommonMark reads it: the code runs to the page's end)
        notes.append((given_numbers[left_open[0]], f"the code fence opened here is never closed: the rest of the page "
                                                   f"shows as code (close it with a line {left_open[1].strip()})"))
    if alert:
        closers.append(("", 0, "::: end", 0))
    for char, length, callout, line in reversed(closers):     # as CommonMark runs a fence to the end
        if line:
            notes.append((line, f"the fence opened here is never closed: it runs to the page's end (close it with a "
                                f"line {char * length})"))
        if callout:
            out.append("::: end")
            numbers.append(numbers[-1] + 1 if numbers else start + 1)
            codes.append(False)
    if any("\n" in line for line in out):        # (a line that became two: a solution's own exercise)
        split = [(part, number, code) for line, number, code in zip(out, numbers, codes) for part in line.split("\n")]
        out, numbers, codes = [p[0] for p in split], [p[1] for p in split], [p[2] for p in split]
    return out, numbers, codes


def _code_lines(lines: list[str]) -> tuple[list[bool], list[bool]]:
    """Whether each line is code, and whether it opens a block of code (markup.code_blocks, MyST's reading);
    a line a rewrite made of several (a glossary's, a list-table's) is code if one of them is."""
    owner = [k for k, line in enumerate(lines) for _ in line.split("\n")]
    inside, opens = [False] * len(lines), [False] * len(lines)
    for first, end in code_blocks([part for line in lines for part in line.split("\n")], CODE):
        for physical in range(first, end):
            inside[owner[physical]] = True
        opens[owner[first]] = opens[owner[first]] or first == 0 or owner[first - 1] != owner[first]
    return inside, opens


def _unnest(out: list[str], index: int, nested: re.Match, notes: list, number: int) -> None:
    """A MyST directive indented under a list item, its lines to its closing fence moved to the margin:
    shown after the list, said (a directive is not nested in a list item here)."""
    width, fence = len(nested["indent"]), nested["fence"]
    end = next((k for k in range(index + 1, len(out)) if re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", out[k])),
               len(out) - 1)
    for k in range(index, end + 1):
        indent = len(out[k]) - len(out[k].lstrip(" "))
        out[k] = out[k][min(indent, width):]
    _in_list_item(f"the directive {nested['info'].split()[0]}", number, notes)


def _in_list_item(what: str, number: int, notes: list) -> None:
    notes.append((number, f"{what} is indented under a list item: shown after the list, at the margin (a callout "
                          "is not nested in a list item here)"))


def _unquote(out: list[str], index: int, quoted: re.Match, notes: list, number: int) -> None:
    """A directive (or div) inside a quote: the quote's lines, from the first, without their `>`, said (a
    callout is not nested in a quote here)."""
    first = index
    while first > 0 and re.match(r"^ {0,3}>", out[first - 1]):
        first -= 1
    end = index
    while end < len(out) and re.match(r"^ {0,3}>", out[end]):
        out[end] = QUOTED.sub("", out[end], count=1)
        end += 1
    for k in range(first, index):
        out[k] = QUOTED.sub("", out[k], count=1)
    notes.append((number, f"the directive {quoted['info'].split()[0]} stands in a quote: the quote's content shows "
                          "without the quote (a directive is not nested in a quote here)"))


def _bare_class(rest: str) -> bool:
    """Whether `::: rest` is Pandoc's div of one bare class (`::: callout-note`, `::: column-margin`), not this
    site's block (whose kinds are words, one aside: list-table)."""
    return rest in BARE_DIVS or (re.fullmatch(r"[A-Za-z][\w]*(?:-[\w]+)+", rest) is not None and rest != "list-table")


def _defined(lines: list[str]) -> tuple[set[str], set[str]]:
    """The labels MyST defines in `lines`: its targets, and the :name: or :label: of a directive; and
    apart, the names of {index} entries (places in the book's index: this site has none)."""
    named, indexed, directive_name = set(), set(), ""
    for line in (line for line, code in zip(lines, in_code(lines, CODE)) if not code):     # (an example's: none)
        if (fence := FENCE.match(line) or COLONS.match(line)) and (
                myst := MYST.match(fence.groupdict().get("info") or fence.groupdict().get("rest") or "")):
            directive_name = myst["name"]
        for m in DEFINED.finditer(line):
            (indexed if m["option"] and directive_name == "index" else named).add(m["label"] or m["option"])
    return named, indexed


def _options(out: list[str], index: int) -> tuple[dict, int]:
    """A MyST directive's options below its opening line (`:key: value` lines, or a `---` YAML block),
    blanked: what they say (a label's name as label_name reads it), and the index of the first line after them."""
    options: dict[str, str] = {}
    if index < len(out) and out[index].strip() == "---":
        end = next((k for k in range(index + 1, len(out)) if out[k].strip() == "---"), None)
        if end is not None:
            for k in range(index, end + 1):
                key, _, value = out[k].partition(":")
                if k not in (index, end) and key.strip():
                    options[key.strip()] = value.strip()
                out[k] = ""
            return options, end + 1
    while index < len(out) and (option := OPTION.match(out[index])):
        options[option["key"]] = option["value"].strip()
        out[index] = ""
        index += 1
    return {key: label_name(value) if key in ("name", "label") else value for key, value in options.items()}, index


def _close(closer: tuple, index: int, ended: list) -> str:
    """The line that closes a directive's fence here (an exercise's end is remembered: see _exercise)."""
    if closer[2] == EXERCISE_END:
        ended[0] = index
        return "::: end"
    return closer[2]


def _myst(out, index, number, myst, fence, closers, notes, ended=None, computed=True) -> int:
    """A MyST directive in a fence of backticks or tildes: a callout, an exercise, or said and shown as
    its content."""
    name = myst["name"].lower()         # (docutils' directive names know no case: {Note} is {note})
    kind = MYST_KINDS.get(name)
    options, after = _options(out, index + 1)
    if name in EXERCISES and ended is not None:
        exercise(out, index, number, name, myst["title"].strip(), options, fence, closers, ended, notes)
        return after
    if name == "list-table":
        done = list_table(out, index, after, myst["title"].strip(), options, fence, number, notes)
        if done is not None:
            return done
        notes.append((number, "this {list-table} is not a list of rows ('* - cell' with '  - cell' below it for each "
                              "other cell): it shows as the lists it is"))
        out[index] = ""
        closers.append((*fence, "", number))
        return after
    if name in ("figure", "image", "table", "glue", "glue:figure"):    # (a figure myst-nb's glue saved: labs/glue.py)
        return captioned(out, index, after, name, myst["title"].strip(), options, fence, closers, number, notes,
                         computed)
    if name in ("tab-set", "tab-item", "tabbed"):     # sphinx-design's tabs (sphinx-panels' {tabbed}): this site's
        dropped(name, options, {"sync", "selected", "class", "name", "sync-group", "new-group", "class-label",
                                "class-content"}, number, notes)
        out[index] = "" if name == "tab-set" else directive("tab", myst["title"].strip(), None, number, notes)
        closers.append((*fence, "" if name == "tab-set" else "::: end", number))
        return after
    if name == "tableofcontents":   # Jupyter Book's list of the book's pages: the course's (site.yaml's sequence)
        out[index] = "::: materials"
        closers.append((*fence, "", number))
        return after
    if name in MARGINS:             # {margin} [title], {sidebar} Title: this site's margin note
        dropped(name, options, {"class", "name"}, number, notes)
        out[index] = directive("margin", myst["title"].strip(), None, number, notes)
        closers.append((*fence, "::: end", number))
        return after
    if name.startswith("prf:") and name[4:] in STATEMENTS:        # sphinx-proof: this site's statement
        dropped(name, options, {"label", "class", "nonumber"}, number, notes)
        fold = "closed" if "dropdown" in options.get("class", "").split() else None
        out[index] = directive(name[4:], myst["title"].strip(), fold, number, notes, options.get("label", ""))
        closers.append((*fence, "::: end", number))
        return after
    if name in ("index", "bibliography", "glossary"):
        if name == "index":         # an entry of the book's index: never shown where it stands
            notes.append((number, "the MyST directive {index} is not supported here (this site has no index page): "
                                  "left out"))
        if name == "bibliography" and ("all" in options or options.get("filter", "").strip() == "all"):
            notes.append((number, "{bibliography} :all: lists every entry here when the page's front matter says "
                                  "`nocite: \"@*\"` (as Quarto's does): add that line"))
        out[index] = ""
        closers.append((*fence, "", number))
        end = closing(out, after, fence)
        if name == "glossary":
            glossary(out, after, end, "sorted" in options, number, notes)
        else:                       # (the list of what a page cites is at its end, always: citations.py)
            out[after:end] = [""] * (end - after)
        return after
    if name in QUOTES:              # docutils' quotations: a quote, its attribution (`-- Name`) its last line
        dropped(name, options, {"class", "name"}, number, notes)
        out[index] = ""
        end = closing(out, after, fence)
        out[after:end] = [f"> {line}".rstrip() for line in out[after:end]]
        closers.append((*fence, "", number))
        return after
    if name in ("include", "literalinclude"):
        notes.append((number, f"the MyST directive {{{name}}} is not supported here: the file it names "
                              f"({myst['title'].strip()}) is left out; paste its text in the page"))
        out[index] = ""
        closers.append((*fence, "", number))
        return after
    if kind is None:        # (in a colon fence: its content is Markdown; its argument, a title, in bold above it)
        title = myst["title"].strip()
        notes.append((number, f"the MyST directive {{{name}}} is not supported here: "
                              + ("its title and content show as prose " if title else "its content shows as prose ")
                              + f"(callouts are {', '.join('{' + k + '}' for k in CALLOUTS)})"))
        out[index] = f"**{title}**" if title else ""
        closers.append((*fence, "", number))
        return after
    out[index] = _callout(name, kind, myst["title"].strip(), options, number, notes)
    closers.append((*fence, "::: end", number))
    return after


def _colon_fence(out, index, number, colons, closers, notes, ended=None, computed=True) -> int:
    """`:::{name} ...` (MyST) or `::: {.class ...}` (Quarto): a callout, or said and shown as its content."""
    rest, fence = colons["rest"], (":", len(colons["fence"]))
    myst = MYST.match(rest)
    if myst:
        return _myst(out, index, number, myst, fence, closers, notes, ended, computed)
    quarto = QUARTO.match(rest)
    attrs = attributes(quarto["attrs"]) if quarto else {}
    callout = QUARTO_CALLOUT.search(quarto["attrs"]) if quarto else None
    classes = {word[1:] for word in quarto["attrs"].split() if word.startswith(".")} if quarto else set()
    if "panel-tabset" in classes and tabset(out, index, number, notes):
        out[index] = ""
        closers.append((*fence, "::: end", number))
        return index + 1
    if MARGINS & classes:
        out[index] = directive("margin", attrs.get("title", ""), None, number, notes)      # .column-margin, .aside
        closers.append((*fence, "::: end", number))
        return index + 1
    shown = shown_here(classes, attrs) if quarto and callout is None else None
    if shown is not None:           # a slide's fragment, content for HTML or not: as Quarto's HTML shows it
        if shown:
            out[index] = ""
            closers.append((*fence, "", number))
            return index + 1
        end = div_end(out, index)
        out[index:end + 1] = [""] * (min(end + 1, len(out)) - index)
        return end + 1
    if callout is None or callout["kind"] not in CALLOUTS:
        notes.append((number, f"the div ::: {rest} is not supported here: its content shows as prose"
                              + (" (Quarto's callouts are .callout-" + ", .callout-".join(CALLOUTS) + ")"
                                 if callout else "")))
        out[index] = ""
        closers.append((*fence, "", number))
        return index + 1
    title = attrs.get("title", "")
    if not title:                   # Quarto's other way: a heading as the callout's first line
        first = next((k for k in range(index + 1, len(out)) if out[k].strip()), None)
        heading = HEADING.match(out[first]) if first is not None else None
        if heading:
            title, out[first] = heading["title"], ""
    collapse = attrs.get("collapse")
    out[index] = directive(callout["kind"], title, {"true": "closed", "false": "open"}.get(collapse), number, notes)
    closers.append((*fence, "::: end", number))
    return index + 1


def _callout(name: str, kind: str, title: str, options: dict, line: int, notes: list) -> str:
    """This site's opening line of the MyST admonition `name`."""
    classes = options.get("class", "").split()
    kind = next((MYST_KINDS[c] for c in classes if c in CALLOUTS), kind)
    fold = "closed" if name == "dropdown" or "dropdown" in classes else None
    if "open" in options and fold:
        fold = "open"
    dropped(name, options, MYST_OPTIONS, line, notes)
    return directive(kind, title, fold, line, notes)


def _math_directive(out, numbers, index, fence, label: str, notes: list) -> int:
    """MyST's ```{math} with its :label: (or a (label)= above it): one line `$$ ... $$ {#label}`."""
    options, first = _options(out, index + 1)
    end = closing(out, first, fence)
    if end == len(out):
        notes.append((numbers[index], f"the fence opened here is never closed: close it with a line {fence[0] * fence[1]}"))
    dropped("math", options, {"label", "name", "nowrap", "class"}, numbers[index], notes)
    tex = " ".join(part.strip() for part in out[first:end] if part.strip())
    return joined(out, index, min(end, len(out) - 1), tex, options.get("label") or options.get("name") or label,
                   numbers[index], notes)
