"""What one HTML file says on its own, read as a browser that runs scripts reads it: by html5lib, the
WHATWG parsing algorithm in Python, with scripting on (so <noscript>'s content is text, as it is to
Chromium; SVG and MathML as foreign content; comments, raw text and attributes as the standard ends
them), whatever the quoting, letter case or character references: its ids, its links into the site,
what the site's policy forbids in it (inline scripts and styles, event handlers, `javascript:` and
`data:` navigations in any spelling, anything loaded from another site) and what deserves a warning.

The render asks it of raw HTML an author wrote (`refused`: shown as its source, never the page lost);
the check (publish/htmlcheck.py) of every file the build writes.
"""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from urllib.parse import unquote, urljoin, urlsplit

from ..core.memo import Memo
from ..core.stored import Stored, bytes_of, sha256_of
from ..pages.bookparts import URL_SCHEMES


# Attributes whose value a browser follows or loads, on any element (SVG's among them).
URL_ATTRIBUTES = {"href", "src", "xlink:href", "action", "formaction", "data", "poster", "background", "ping"}
# Elements that make a browser load or send something, and the attributes that say where. The
# pages may load only the site's own files: nothing from another origin (a filtered network, a
# student's privacy), and no redirect elsewhere. `background` is any element's (<table>, <body>).
LOADS = {"script": ("src",), "iframe": ("src",), "frame": ("src",), "img": ("src", "srcset"),
         "link": ("href", "imagesrcset"), "object": ("data",), "embed": ("src",), "form": ("action",), "base": ("href",),
         "video": ("src", "poster"), "audio": ("src",), "source": ("src", "srcset"), "track": ("src",),
         "input": ("src", "formaction"), "button": ("formaction",), "a": ("ping",), "area": ("ping",),
         "image": ("href", "xlink:href"), "use": ("href", "xlink:href"), "feimage": ("href", "xlink:href")}
ANIMATES = {"set", "animate", "animatetransform", "animatemotion"}      # SVG's, which may set any attribute
NOT_LOADED = {"canonical", "alternate", "author", "license", "help", "prev", "next", "me"}   # <link rel=...>
NAVIGATES = ("href", "xlink:href", "action", "formaction", "src", "data")   # where javascript: would run
# What a browser drops from a URL before reading its scheme: leading and trailing C0 controls and
# spaces, and every tab and newline inside it (the URL standard).
URL_NOISE = re.compile(r"[\t\n\r]")
HEADINGS = {f"h{level}": level for level in range(2, 7)}
CSP = "which the site's Content-Security-Policy blocks: move it to static/ and load it by URL"


def _scheme(url: str) -> str:
    cleaned = URL_NOISE.sub("", url.strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11"
                                          "\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
    scheme, colon, _ = cleaned.partition(":")
    return scheme.lower() if colon and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme) else ""


XLINK = "http://www.w3.org/1999/xlink"
PREFIXES = {XLINK: "xlink:", "http://www.w3.org/XML/1998/namespace": "xml:", "http://www.w3.org/2000/xmlns/": "xmlns:"}
# Where what one parser reads as text another may read as markup: the text of an element that is raw
# text in HTML, whose end a parser finds by its own rules, in HTML or inside SVG and MathML (where
# browsers and the standard have disagreed over which it is: Chromium ends SVG at `</p>`, html5lib
# does not), an attribute's value and a comment. Such text that would hold a tag is read again, as a
# fragment, for what the policy forbids.
RAW_TEXT = {"style", "noembed", "noframes", "xmp", "iframe", "textarea", "title", "plaintext", "noscript"}
MARKUP = re.compile(r"<[A-Za-z/!?]")


def _tokens(text: str, fragment: bool = False):
    """What a browser that runs scripts builds of `text`, in document order: ("start", tag,
    [(name, value)]) with names lower-cased and foreign attributes prefixed (xlink:href), ("end",
    tag, None) (none for a void element), ("text", data, None), and ("suspect", text, None) for text
    that another reading could take for markup (MARKUP, in an attribute, a comment or the text of an
    element named as HTML's raw text elements, RAW_TEXT). A <noscript>'s text follows its end, read as a page without scripts
    would read it (a fragment)."""
    import html5lib                     # (lazily: 70 ms to import, and a build that checks no page needs none)
    from html5lib import treewalkers
    parse = html5lib.parseFragment if fragment else html5lib.parse
    tree = parse(text, treebuilder="etree", namespaceHTMLElements=False, scripting=not fragment)
    noscript: list[str] | None = None
    open_: list[str] = []               # the elements the text is inside
    for token in treewalkers.getTreeWalker("etree")(tree):
        kind = token["type"]
        if kind in ("StartTag", "EmptyTag"):
            name = token["name"].lower()
            attrs = [(PREFIXES.get(space, "") + attribute.lower(), value)
                     for (space, attribute), value in token["data"].items()]
            yield "start", name, attrs
            for _, value in attrs:
                if MARKUP.search(value):
                    yield "suspect", value, None
            if kind == "StartTag":
                open_.append(name)
            if kind == "StartTag" and name == "noscript" and token["namespace"] is None and not fragment:
                noscript = []
        elif kind == "EndTag":
            name = token["name"].lower()
            yield "end", name, None
            if open_ and open_[-1] == name:
                open_.pop()
            if name == "noscript" and noscript is not None:
                yield from _tokens("".join(noscript), fragment=True)
                noscript = None
        elif kind in ("Characters", "SpaceCharacters"):
            if noscript is not None:
                noscript.append(token["data"])
                continue
            yield "text", token["data"], None
            if open_ and open_[-1] in RAW_TEXT and MARKUP.search(token["data"]):
                yield "suspect", token["data"], None
        elif kind == "Comment" and MARKUP.search(token["data"]):
            yield "suspect", token["data"], None


def _tag_text(tag: str, attrs: list) -> str:
    """A start tag as a page's source would write it (what a message quotes, and looks for)."""
    return f"<{tag}" + "".join(f' {name}="{html.escape(value, quote=True)}"' for name, value in attrs) + ">"


def refused(fragment: str, base_url: str) -> str | None:
    """What the site's policy refuses in a fragment of raw HTML an author wrote (an inline <style> or
    <script>, an <iframe> or <img> that loads from another site...), said as the check says it; None if
    nothing. The page shows such a fragment as its source (render/markdown.py), and the check warns."""
    if (unclosed := UNCLOSED.search(fragment)) and not re.search(rf"</{unclosed[1]}\s*>", fragment, re.I):
        return f"an unclosed <{unclosed[1].lower()}>, whose text would run to the page's end"
    reader = _Reader("page.html", base_url)
    reader.feed(fragment, suspect=1)                # as a fragment of the page
    reader.feed(f"<svg>{fragment}</svg>", suspect=1)    # as SVG's, where <image href> loads
    if not reader.errors:                           # as a document, where <body background> loads
        reader.feed(fragment)
    return reader.errors[0][1].removeprefix("page.html has ") if reader.errors else None


# Elements whose text runs to their end tag: one left open in a fragment holds the rest of the page as its text
UNCLOSED = re.compile(r"<(textarea|title|xmp|plaintext|noembed|noframes|noscript)\b", re.I)


REFUSED = "html-source"       # the class of raw HTML shown as its source (render/markdown.py), said as a warning


class _Reader:
    """One page's ids, links into the site, problems and warnings, as a browser would parse it."""

    def __init__(self, path: str, base_url: str):
        base = urlsplit(base_url)
        self.path, self.host, self.here = path, base.netloc, f"{base.scheme}://{base.netloc}/{path}"
        self.ids, self.links, self.errors, self.warnings = set(), [], [], []
        self.heading: list | None = None     # [level, text parts] of the heading being read
        self.anchor = 0                       # depth inside a heading's own permalink
        self.ended: tuple[int, str] | None = None    # a heading just closed, nothing after it yet
        self.inside = ""                      # where an element read again (SUSPECT) was found
        self.page = path.endswith(".html")    # one of the site's pages, under its policy whole (else: script)
        self.refused: list | None = None      # [tag, text] of raw HTML shown as its source (REFUSED)

    def feed(self, text: str, suspect: int = 0) -> None:
        """Read `text`; `suspect`: how deep inside text read again (SUSPECT), for the policy alone."""
        for kind, name, attrs in _tokens(text, fragment=bool(suspect)):
            if kind == "suspect":
                if suspect < 2:         # (text inside text inside text: enough)
                    self.inside = f" in text that a browser may read as markup ({name[:60]!r})"
                    self.feed(name, suspect + 1)
                    self.inside = ""
            elif suspect:
                if kind == "start":
                    self._forbidden(name, attrs)
            elif kind == "start":
                self._element(name, attrs)
            elif kind == "end":
                self.handle_endtag(name)
            else:
                self.handle_data(name)

    def _forbidden(self, tag, attrs) -> None:
        """What the policy forbids of an element found in text that another reading may take for markup."""
        attributes = {}
        for name, value in attrs:
            attributes.setdefault(name, value or "")
        self._blocked(tag, attributes, _tag_text(tag, attrs))
        self._loads(tag, attributes)

    # -- elements ------------------------------------------------------------
    def _element(self, tag, attrs):
        attributes = {}
        for name, value in attrs:
            attributes.setdefault(name, value or "")
        raw = _tag_text(tag, attrs)
        level = HEADINGS.get(tag)
        self._after_heading(level)
        if self.heading is not None and tag == "a" and "heading-anchor" in attributes.get("class", "").split():
            self.anchor += 1
        if level:
            self.heading = [level, []]
        if "id" in attributes:
            if attributes["id"] in self.ids:        # (a link to it finds the first: the author's label, or ours)
                self.warnings.append((f'id="{attributes["id"]}"', f"{self.path}: the id '{attributes['id']}' is given "
                                      "twice (a link to it goes to the first): rename the label, or the heading"))
            self.ids.add(attributes["id"])
        self._blocked(tag, attributes, raw)
        self._loads(tag, attributes)
        for name, value in attributes.items():      # (in the page's order)
            if name in URL_ATTRIBUTES:
                self._link(name, value)
        if REFUSED in attributes.get("class", "").split():      # (said when its text is read: handle_endtag)
            self.refused = [tag, []]
        if tag == "img" and not attributes.get("alt", "").strip():
            self.warnings.append((raw[:30], f"{self.path}: an image without alt text: {raw[:80]}"))
        if (tag == "a" and _scheme(attributes.get("href", "")) in ("http", "https")
                and urlsplit(attributes["href"].strip()).netloc != self.host and "rel" not in attributes):
            self.warnings.append((raw[9:40], f"{self.path}: external link without rel "
                                             f"(add rel=\"noopener\"): {raw[:80]}"))
        if tag == "a" and (scheme := _scheme(attributes.get("href", ""))) and scheme not in URL_SCHEMES:
            self.warnings.append((raw[:40], f"{self.path}: a link no browser opens ({scheme}: is the scheme of no web "
                                            f"address): {raw[:80]}: link a page of the site, or an address"))

    def handle_endtag(self, tag):
        if self.refused is not None and tag == self.refused[0]:
            source = "".join(self.refused[1])
            first = source.strip().splitlines()[0][:60] if source.strip() else ""
            needle = max(re.split(r"[/#\"'\\]", first), key=len)     # (what finds its line, in a notebook's JSON too)
            if (why := refused(source, self.here)) is not None:     # (else the end tag of one: said at its start)
                self.warnings.append((needle, f"{self.path}: raw HTML with {why}; the page shows that HTML as its source"))
            self.refused = None
        if self.heading is not None and tag == "a" and self.anchor:
            self.anchor -= 1
        elif self.heading is not None and tag == f"h{self.heading[0]}":
            title = re.sub(r"\s+", " ", "".join(self.heading[1])).strip()
            self.ended, self.heading = (self.heading[0], title), None
        elif tag == "article":
            self._after_heading(0)
        else:
            self._after_heading(None)

    def handle_data(self, data):
        if self.refused is not None:
            self.refused[1].append(data)
        if self.heading is not None and not self.anchor:
            self.heading[1].append(data)
        if data.strip():
            self._after_heading(None)

    def _after_heading(self, level: int | None) -> None:
        """What comes next after a heading: another of its level or higher (or the article's end,
        level 0) means its section is empty; anything else, that it is not."""
        if self.ended is not None:
            if level is not None and level <= self.ended[0]:
                title = self.ended[1]
                self.warnings.append((title, f"{self.path}: section '{title}' is empty"))
            self.ended = None

    # -- what the policy forbids and what loads ------------------------------------
    def _blocked(self, tag, attributes, raw) -> None:
        if tag == "meta" and attributes.get("http-equiv", "").strip().lower() == "refresh":
            self.errors.append((attributes.get("content", "http-equiv"), f"{self.path} has <meta http-equiv=\"refresh\">"
                                f"{self.inside}, which sends readers to another address: link to it instead"))
        found = []                  # (what, the text that finds it in the page's source)
        if tag.rsplit(":", 1)[-1] == "script" and "src" not in attributes:        # (XHTML's <x:script> too)
            found.append(("an inline <script>", "<script"))
        if tag == "style" and self.page:          # (a file a lab wrote may style itself: it runs no script)
            found.append(("an inline <style>", "<style"))
        if "style" in attributes and self.page:
            found.append(("a style= attribute", "style="))
        if handlers := [name for name in attributes if name.startswith("on")]:
            found.append(("an on...= event handler", handlers[0]))
        if tag == "iframe" and "srcdoc" in attributes:
            found.append(("an <iframe srcdoc>", "srcdoc"))
        if tag in ANIMATES and attributes.get("attributename", "").strip().lower() in ("href", "xlink:href"):
            found.append(("an SVG animation of a link, which can make it a javascript: link", raw[:12]))
        for name in NAVIGATES:
            if name not in attributes:
                continue
            scheme = _scheme(attributes[name])
            if scheme in ("javascript", "vbscript"):
                found.append(("a javascript: link", raw[:12]))
            elif scheme == "data" and not (name == "src" and tag in ("img", "source", "video", "audio")):
                found.append(("a data: link, which browsers refuse to open or run", raw[:12]))
        for what, needle in found:
            self.errors.append((needle, f"{self.path} has {what}{self.inside}, " + (
                CSP if "data:" not in what else "whatever the policy: link to a file of the site instead")))

    def _loads(self, tag, attributes) -> None:
        if tag == "link" and attributes.get("rel") and set(attributes["rel"].lower().split()) <= NOT_LOADED:
            return
        for attribute in LOADS.get(tag, ()) + ("background",):
            value = attributes.get(attribute, "").strip()
            urls = [part.strip().split()[0] for part in value.split(",") if part.strip()] \
                if attribute.endswith("srcset") else [value]
            for url in filter(None, urls):
                target = urlsplit(urljoin(self.here, url))
                if target.scheme == "data" and tag in ("img", "source", "video") or \
                        (target.scheme in ("http", "https") and target.netloc == self.host):
                    continue
                if target.scheme in ("javascript", "data"):
                    continue            # said by _blocked
                self.errors.append((url, f"{self.path} has <{tag} {attribute}=\"{url}\">{self.inside}, which loads from "
                                         f"{target.scheme}://{target.netloc}: pages may load only the site's own "
                                         "files (put it in static/ or a lab's outputs)"))

    def _link(self, name: str, value: str) -> None:
        target = urlsplit(urljoin(self.here, value.strip()))
        if target.netloc == self.host and target.scheme in ("http", "https"):
            needle = value.split("#", 1)[1] if "#" in value else value.rsplit("/", 1)[-1]
            self.links.append((name, value, unquote(target.path), unquote(target.fragment), needle))

    def close(self):
        self._after_heading(0)



class _EveryTag(HTMLParser):
    """A second reading, for what the policy forbids only: every start tag as a tokenizer finds it,
    wherever a tree builder would put it or drop it. A browser's parsing moves on (Chromium builds the
    elements inside a <select>, which html5lib, written to an older standard, drops): what either
    reading finds is refused."""

    def __init__(self, reader: _Reader):
        super().__init__(convert_charrefs=True)
        self.reader = reader

    def handle_starttag(self, tag, attrs):
        self.reader._forbidden(tag, [(name, value or "") for name, value in attrs])

    handle_startendtag = handle_starttag

    def handle_pi(self, data):
        if data.lstrip().lower().startswith("xml-stylesheet"):
            self.reader.errors.append(("xml-stylesheet", f"{self.reader.path} has <?{data.strip()[:60]}>, which "
                                       "has a browser make a page of it by a stylesheet, which this check never "
                                       "reads: publish the page itself"))


def read_html(path: str, data: bytes | Stored, base_url: str, memo: Memo | None, sha: str | None = None) -> dict:
    """What one HTML file says on its own: its ids, its links into the site (each with the path and
    #fragment it asks for), and its problems, with the text that finds each in its source. With a
    memo, remembered under the file's SHA-256 (`sha`, when the caller has it)."""
    if memo is not None:
        return memo.value("html-check", (path, base_url, sha or sha256_of(data)),
                             lambda: read_html(path, data, base_url, None))
    reader, text = _Reader(path, base_url), bytes_of(data).decode("utf-8")
    reader.feed(text)
    reader.close()
    tags = _EveryTag(reader)
    tags.feed(text)
    tags.close()
    errors = list(dict.fromkeys(reader.errors))         # (what both readings found, once)
    return {"ids": reader.ids, "links": reader.links, "errors": errors, "warnings": reader.warnings}


