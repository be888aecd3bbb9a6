"""What a cell showed, as the page shows it: Jupyter's choice of representation, made safe.

Each output of a cell (labipython.py keeps them as nbformat does) is shown in the richest form the
page can show safely, in JupyterLab's order: HTML (a DataFrame, a styled table) reduced to a
safe subset by nh3 (no script, event handler, style, or image from another site: what the site's
Content-Security-Policy forbids or a page must not load; a page embedded from another site, as a
YouTube video, is a link to it); Markdown and LaTeX through the site's
own Markdown and MathML; PNG, JPEG, GIF and SVG as images (an SVG is loaded as an image, so
nothing in it runs); text as text. A widget or a script has no static form: its text is shown,
with a note saying so. Streams and errors are shown as they came, stderr apart.
"""
from __future__ import annotations

import re

from markupsafe import Markup

from ..labs.labipython import RICH

INTERACTIVE = ("application/vnd.jupyter.widget-view+json", "application/javascript")
TAGS = {"a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd",
        "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5",
        "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "rp", "rt", "ruby", "s", "samp",
        "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time",
        "tr", "u", "ul", "var", "wbr", "video", "audio", "source"}
ATTRIBUTES = {"a": {"href"}, "img": {"src", "alt", "width", "height"}, "ol": {"start"},
              "video": {"src", "controls", "width", "height", "loop"}, "audio": {"src", "controls", "loop"},
              "source": {"src", "type"},
              "td": {"colspan", "rowspan", "headers"}, "th": {"colspan", "rowspan", "scope", "headers"},
              "col": {"span"}, "colgroup": {"span"}, "time": {"datetime"}}
DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$")
UNSOURCED_IMAGE = re.compile(r'<img(?![^>]* src=")[^>]*>')
UNDESCRIBED_IMAGE = re.compile(r'<img(?![^>]* alt=")[^>]*>')
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# An embedded page from another site (IPython's YouTubeVideo, IFrame): a page embeds nothing from elsewhere,
# so it is shown as a link to it (nh3 then cleans the link as any other).
EMBED = re.compile(r"""<iframe\b[^>]*?\bsrc\s*=\s*["']?(?P<src>https?://[^"'\s>]+)[^>]*>""", re.I)


def safe_html(text: str, local=lambda name: None, classes: bool = False) -> str:
    """Rich HTML from a notebook reduced to what a page may hold (see the module's text). `local(name)`:
    the address of a file the lab wrote (an animation.mp4 a <video> plays), or None. `classes`: keep
    class= (the site's own Markdown marks code that way)."""
    import nh3

    def keep(tag: str, attribute: str, value: str) -> str | None:
        if attribute == "src" and tag in ("img", "video", "audio", "source"):
            if tag == "img" and DATA_IMAGE.match(value):
                return value
            return local(value)                                     # nothing loaded from elsewhere
        if tag == "a" and attribute == "href" and value.strip().lower().startswith(("javascript:", "data:")):
            return None
        return value
    text = EMBED.sub(lambda found: f'<a href="{found["src"]}">{found["src"]}</a>', text)
    cleaned = nh3.clean(text, tags=TAGS, attributes={**ATTRIBUTES, "*": {"class"}} if classes else ATTRIBUTES,
                        attribute_filter=keep, strip_comments=True,
                        url_schemes={"http", "https", "mailto", "data"}, link_rel="noopener noreferrer")
    # nh3 writes every tag one way (html5ever's serializer): an image whose source it dropped goes
    # altogether, and one without words gets an empty alt (it is the output's picture, not prose).
    cleaned = UNSOURCED_IMAGE.sub("", cleaned)
    return UNDESCRIBED_IMAGE.sub(lambda m: m.group(0)[:-1] + ' alt="">', cleaned)


def choose(data: dict) -> str | None:
    """The representation the page shows, in JupyterLab's order of preference."""
    return next((mime for mime in RICH if mime in data), "text/plain" if "text/plain" in data else None)


def render_outputs(outputs, show_figure, show_file, markdown, latex, words: dict, local=lambda name: None) -> list[Markup]:
    """Each output as HTML. `show_figure(name)`: a figure the cell drew; `show_file(name, mime)`: an
    image it displayed; `markdown(text)`, `latex(text)`: the site's Markdown and math, as HTML;
    `local(name)`: the address of a file the lab wrote, which its HTML may show."""
    shown = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            css = "cell-stderr" if out.get("name") == "stderr" else "cell-stdout"
            label = words["cell_stderr"] if out.get("name") == "stderr" else words["cell_stdout"]
            shown.append(Markup('<pre tabindex="0" class="{}" aria-label="{}"><code>{}</code></pre>').format(
                css, label, ANSI.sub("", out.get("text", ""))))
        elif kind == "error":
            text = "\n".join(ANSI.sub("", line) for line in out.get("traceback", ())) or \
                f"{out.get('ename')}: {out.get('evalue')}"
            shown.append(Markup('<pre tabindex="0" class="cell-error" aria-label="{}"><code>{}</code></pre>').format(
                words["cell_error"], text))
        elif "data" in out:
            data = out["data"]
            if "figure" in data:
                shown.append(show_figure(data["figure"]))
                continue
            note = Markup('<p class="output-note">{}</p>').format(words["output_interactive"]) \
                if any(mime in data for mime in INTERACTIVE) else Markup("")
            mime = choose(data)
            value = data.get(mime)
            if mime is None:
                html = Markup("")
            elif isinstance(value, dict) and "file" in value:
                html = show_file(value["file"], mime)
            elif mime == "text/html":
                html = Markup('<div class="output-html" tabindex="0">{}</div>').format(Markup(safe_html(value, local)))
            elif mime == "text/markdown":
                html = Markup('<div class="output-markdown">{}</div>').format(markdown(value))
            elif mime == "text/latex":
                html = Markup('<div class="output-markdown">{}</div>').format(latex(value))
            else:
                css = "cell-value" if kind == "execute_result" else "cell-display"
                html = Markup('<pre tabindex="0" class="{}" aria-label="{}"><code>{}</code></pre>').format(
                    css, words["cell_value"], value)
            shown.append(note + html)
    return shown


def latex_text(text: str) -> tuple[str, bool]:
    """A text/latex output's formula and whether it is shown as a display: `$$x$$`, `\\[x\\]`,
    `$x$` (SymPy's `$\\displaystyle x$` is a display), or an environment as it is."""
    text = text.strip()
    for start, end in (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)")):
        if text.startswith(start) and text.endswith(end) and len(text) > len(start) + len(end) - 1:
            inner = text[len(start): len(text) - len(end)].strip()
            display = start in ("$$", "\\[") or inner.startswith("\\displaystyle")
            return inner.removeprefix("\\displaystyle").strip(), display
    return text, True

