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
import shlex

CALLOUTS = ("note", "tip", "important", "warning", "caution")      # the kinds of callout, as GitHub's alerts name them
# MyST's admonitions (docutils' names) as the kind of callout they look most like.
MYST_KINDS = {**{kind: kind for kind in CALLOUTS}, "hint": "tip", "seealso": "note", "attention": "important",
              "danger": "caution", "error": "caution", "admonition": "note", "dropdown": "note"}
# MyST's directives whose content is code, not Markdown: shown as a block of code when not supported.
CODE = {"code-cell", "code-block", "code", "sourcecode", "literalinclude", "ipython", "raw", "math", "mermaid", "graphviz"}
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
MYST_OPTIONS = {"class", "open", "name"}     # what a callout's options may say; `name`: kept for references

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MYST = re.compile(r"^\{(?P<name>[A-Za-z][\w:-]*)\}\s*(?P<title>.*)$")
COLONS = re.compile(r"^(?P<indent> {0,3})(?P<fence>:{3,})\s*(?P<rest>.*)$")
QUARTO = re.compile(r"^\{(?P<attrs>[^}]*)\}\s*$")
QUARTO_CALLOUT = re.compile(r"(?:^|\s)\.callout-(?P<kind>[a-z]+)(?=\s|$)")
ALERT = re.compile(r"^ {0,3}>\s*\[!(?P<kind>[A-Za-z]+)\][+-]?\s*(?P<title>.*)$")
OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")
HEADING = re.compile(r"^\s*#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
TARGET = re.compile(r"^ {0,3}\((?P<label>[^()\s]+)\)=\s*$")     # MyST's `(label)=` above a heading
# A MyST role ({cite}`key`, {ref}`label`) in prose: {math} is this site's $...$; the others are not supported yet.
ROLE = re.compile(r"(?<![\w`{])\{(?P<name>[a-z][\w:-]*)\}`(?P<text>[^`]+)`")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<[^<>]+>$")       # {ref}`the text shown <label>`


def directive(kind: str, title: str, fold: str | None, line: int, notes: list) -> str:
    """This site's line opening a callout (a role in its title read as in prose)."""
    title = ROLE.sub(lambda role: _role(role, line, notes), title)
    words = [f"::: {kind}"] + ([f"title={shlex.quote(title)}"] if title else []) + ([f"fold={fold}"] if fold else [])
    return " ".join(words)


def translate(lines: list[str], start: int, notes: list) -> tuple[list[str], list[int], list[bool]]:
    """`lines` (a page's body, its first at file line `start` + 1) with other tools' callouts written in
    this site's syntax; the file's line number of each line (a GitHub alert's end is a line of its
    own, which the file lacks: it takes the number of the line after it); and whether each is code
    (a fenced block's, its fences included: read here once, as CommonMark reads fences, for
    content.py too). What is not supported is said in `notes` as (line, message)."""
    out = list(lines)
    numbers = list(range(start + 1, start + 1 + len(lines)))
    codes = [False] * len(lines)
    closers: list[tuple[str, int, bool, int]] = []  # open fences of directives: (char, length, a callout?, line)
    code: tuple[str, int] | None = None         # an open code fence: what closes it
    alert = False
    index = 0
    while index < len(out):
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
            else:
                out[index] = "::: end"
            index += 1
            continue
        fence = FENCE.match(line)
        if code is not None:
            if fence and fence["fence"][0] == code[0] and len(fence["fence"]) >= code[1] and not fence["info"].strip():
                code = None
            codes[index] = True
            index += 1
            continue
        if fence:
            char, length, info = fence["fence"][0], len(fence["fence"]), fence["info"].strip()
            if closers and closers[-1][0] == char and length >= closers[-1][1] and not info:
                out[index] = "::: end" if closers.pop()[2] else ""
                index += 1
                continue
            myst = MYST.match(info)
            if myst and myst["name"] in MYST_KINDS:
                index = _myst(out, index, number, myst, (char, length), closers, notes)
                continue
            if myst and myst["name"] in CODE:   # a code cell of a MyST notebook, a math block: shown as code
                notes.append((number, f"the MyST directive {{{myst['name']}}} is not supported here: it shows as "
                                      "a block of code"))
                language = "python" if myst["name"] in ("code-cell", "code-block", "code") else ""
                out[index] = f"{fence['indent']}{fence['fence']}{language}"
                _, after = _options(out, index + 1)
                code = (char, length)
                codes[index:after] = [True] * (after - index)
                index = after
                continue
            if myst:                # another directive (an exercise, tabs, a margin, a figure): its content is prose
                index = _myst(out, index, number, myst, (char, length), closers, notes)
                continue
            code = (char, length)
            codes[index] = True
            index += 1
            continue
        colons = COLONS.match(line)
        if colons and colons["rest"].startswith("{"):
            index = _colon_fence(out, index, number, colons, closers, notes)
            continue
        if colons and not colons["rest"]:
            if closers and closers[-1][0] == ":" and len(colons["fence"]) >= closers[-1][1]:
                out[index] = "::: end" if closers.pop()[2] else ""
            else:
                notes.append((number, f"'{colons['fence']}' closes nothing (no ':::{{...}}' is open above it): left out"))
                out[index] = ""
            index += 1
            continue
        found = ALERT.match(line)
        if found:
            kind = found["kind"].lower()
            if kind in CALLOUTS:
                out[index], alert = directive(kind, found["title"].strip(), None, number, notes), True
            else:
                notes.append((number, f"[!{found['kind']}] is not a GitHub alert this site knows: it shows as a quote "
                                      f"(the alerts are {', '.join('[!' + k.upper() + ']' for k in CALLOUTS)})"))
            index += 1
            continue
        if target := TARGET.match(line):
            notes.append((number, f"the MyST target ({target['label']})= is not supported here: left out "
                                  "(a heading's anchor is {#name} at its end)"))
            out[index] = ""
        if ROLE.search(line):
            out[index] = ROLE.sub(lambda role: _role(role, number, notes), line)
        index += 1
    if alert:
        closers.append(("", 0, True, 0))
    for char, length, callout, line in reversed(closers):     # as CommonMark runs a fence to the end
        if line:
            notes.append((line, f"the fence opened here is never closed: it runs to the page's end (close it with a "
                                f"line {char * length})"))
        if callout:
            out.append("::: end")
            numbers.append(numbers[-1] + 1 if numbers else start + 1)
            codes.append(False)
    return out, numbers, codes


def _options(out: list[str], index: int) -> tuple[dict, int]:
    """A MyST directive's options below its opening line (`:key: value` lines, or a `---` YAML block),
    blanked: what they say, and the index of the first line after them."""
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
    return options, index


def _myst(out, index, number, myst, fence, closers, notes) -> int:
    """A MyST directive in a fence of backticks or tildes: a callout, or said and shown as its content."""
    name = myst["name"]
    kind = MYST_KINDS.get(name)
    options, after = _options(out, index + 1)
    if kind is None:        # (in a colon fence: its content is Markdown)
        notes.append((number, f"the MyST directive {{{name}}} is not supported here: its content shows as prose "
                              f"(callouts are {', '.join('{' + k + '}' for k in CALLOUTS)})"))
        out[index] = ""
        closers.append((*fence, False, number))
        return after
    out[index] = _callout(name, kind, myst["title"].strip(), options, number, notes)
    closers.append((*fence, True, number))
    return after


def _colon_fence(out, index, number, colons, closers, notes) -> int:
    """`:::{name} ...` (MyST) or `::: {.class ...}` (Quarto): a callout, or said and shown as its content."""
    rest, fence = colons["rest"], (":", len(colons["fence"]))
    myst = MYST.match(rest)
    if myst:
        return _myst(out, index, number, myst, fence, closers, notes)
    quarto = QUARTO.match(rest)
    attrs = _attributes(quarto["attrs"]) if quarto else {}
    callout = QUARTO_CALLOUT.search(quarto["attrs"]) if quarto else None
    if callout is None or callout["kind"] not in CALLOUTS:
        notes.append((number, f"the div ::: {rest} is not supported here: its content shows as prose"
                              + (" (Quarto's callouts are .callout-" + ", .callout-".join(CALLOUTS) + ")"
                                 if callout else "")))
        out[index] = ""
        closers.append((*fence, False, number))
        return index + 1
    title = attrs.get("title", "")
    if not title:                   # Quarto's other way: a heading as the callout's first line
        first = next((k for k in range(index + 1, len(out)) if out[k].strip()), None)
        heading = HEADING.match(out[first]) if first is not None else None
        if heading:
            title, out[first] = heading["title"], ""
    collapse = attrs.get("collapse")
    out[index] = directive(callout["kind"], title, {"true": "closed", "false": "open"}.get(collapse), number, notes)
    closers.append((*fence, True, number))
    return index + 1


def _callout(name: str, kind: str, title: str, options: dict, line: int, notes: list) -> str:
    """This site's opening line of the MyST admonition `name`."""
    classes = options.get("class", "").split()
    kind = next((MYST_KINDS[c] for c in classes if c in CALLOUTS), kind)
    fold = "closed" if name == "dropdown" or "dropdown" in classes else None
    if "open" in options and fold:
        fold = "open"
    unknown = sorted(options.keys() - MYST_OPTIONS)
    if unknown:
        notes.append((line, f"{{{name}}}: option{'s' if len(unknown) > 1 else ''} {', '.join(':' + k + ':' for k in unknown)} "
                            f"not supported here (left out)"))
    return directive(kind, title, fold, line, notes)


def _attributes(text: str) -> dict[str, str]:
    """key="value" pairs of a Quarto div's attributes."""
    try:
        words = shlex.split(text)
    except ValueError:
        return {}
    return dict(word.split("=", 1) for word in words if "=" in word)


def _role(role: re.Match, line: int, notes: list) -> str:
    """A MyST role as this site writes it: {math} as $...$; another one said in `notes` and shown as its
    text (`text <label>`: the text), never with its {name}."""
    text = role["text"]
    if role["name"] == "math":
        return f"${text}$"
    explicit = EXPLICIT.match(text)
    notes.append((line, f"the MyST role {{{role['name']}}} is not supported here: "
                        + (f"shown as its text '{explicit['text']}'" if explicit else f"shown as `{text}`")))
    return explicit["text"] if explicit else f"`{text}`"


# -- a notebook's code cell: what it shows of itself -----------------------------------------------
# Jupyter Book's cell tags and Quarto's `#|` options, as this site's `::: cell` options: code shown,
# folded (a reader opens it) or hidden; output shown, collapsed or hidden; or no block at all (the
# cell still runs: what it computes is the page's). What they do not say is shown.
TAGS = {"hide-input": {"code": "folded"}, "remove-input": {"code": "hidden"}, "hide-output": {"output": "collapsed"},
        "remove-output": {"output": "hidden"}, "hide-cell": {"code": "folded", "output": "collapsed"},
        "remove-cell": None}
QUARTO_OPTIONS = {("echo", "false"): {"code": "hidden"}, ("echo", "true"): {}, ("output", "false"): {"output": "hidden"},
                  ("output", "true"): {}, ("include", "false"): None, ("include", "true"): {},
                  ("code-fold", "true"): {"code": "folded"}, ("code-fold", "false"): {}, ("code-fold", "show"): {}}
CELL_OPTION = re.compile(r"^#\|\s*(?P<key>[\w-]+)\s*:\s*(?P<value>.*?)\s*$")


def cell_options(text: str) -> tuple[list[tuple[str, str]], str]:
    """A code cell's Quarto options (its leading `#| key: value` lines), and its code without them."""
    lines = text.split("\n")
    count = next((k for k, line in enumerate(lines) if not line.startswith("#|")), len(lines))
    found = [(m["key"], m["value"].strip("'\"").lower()) for line in lines[:count] if (m := CELL_OPTION.match(line))]
    return found, "\n".join(lines[count:])


def cell_visibility(tags: tuple[str, ...], text: str, line: int, notes: list) -> dict[str, str] | None:
    """What a notebook's code cell shows, from its tags and `#|` options: `::: cell` options, or None
    when it shows nothing (its block is left out). What is not supported is said in `notes`."""
    shown: dict[str, str] = {}
    for tag in tags:
        if tag in TAGS:
            if TAGS[tag] is None:
                return None
            shown.update(TAGS[tag])
    options, _ = cell_options(text)
    for key, value in options:
        if (key, value) in QUARTO_OPTIONS:
            if QUARTO_OPTIONS[key, value] is None:
                return None
            shown.update(QUARTO_OPTIONS[key, value])
        else:
            notes.append((line, f"the cell option #| {key}: {value} is not supported here: left out (supported: "
                                "echo, output, include, code-fold)"))
    if shown.get("code") == "hidden" and shown.get("output") == "hidden":
        return None
    return shown
