"""An SVG a lab wrote, made inert before it is published.

On the page an SVG is shown as an image, so nothing in it runs; but a student
who downloads it and opens it in a browser opens a document: its <script>, an
onload= handler, a <foreignObject> holding HTML, a javascript: link or an
animation that sets one would run there. What a chart needs (shapes, text,
gradients, links to its own parts by #id, embedded PNG data) is kept; the rest
is taken out. An SVG with none of it (Matplotlib's) keeps its bytes.
"""
from __future__ import annotations

import re

RISKY = re.compile(rb"<\s*(script|foreignobject|iframe|embed|object|handler|listener|set|animate)|\son[a-z]+\s*=|"
                   rb"javascript:|href\s*=\s*(?![\"']?(#|data:image/(png|jpeg|gif|webp);))", re.I)
DROPPED = {"script", "foreignobject", "iframe", "embed", "object", "handler", "listener"}
ANIMATES = {"set", "animate", "animatetransform", "animatemotion"}
NAMESPACES = {"": "http://www.w3.org/2000/svg", "xlink": "http://www.w3.org/1999/xlink"}


def inert_svg(data: bytes) -> bytes:
    """`data` without what would run or load when the SVG is opened as a document; ValueError when it
    is not XML that can be read."""
    if not RISKY.search(data):
        return data
    import xml.etree.ElementTree as ET
    for prefix, uri in NAMESPACES.items():
        ET.register_namespace(prefix, uri)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"it is not an SVG that can be read ({exc})") from None
    for parent in root.iter():
        for child in list(parent):
            name = _local(child.tag)
            attribute = child.get("attributeName", "").strip().lower()
            if name in DROPPED or (name in ANIMATES and attribute in ("href", "xlink:href")):
                parent.remove(child)
        for key, value in list(parent.attrib.items()):
            name = _local(key)
            if name.startswith("on") or (name == "href" and not _own(value)):
                del parent.attrib[key]
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].lower()


def _own(url: str) -> bool:
    """A link to a part of the same SVG, or an embedded picture."""
    url = url.strip()
    return url.startswith("#") or re.match(r"data:image/(png|jpeg|gif|webp);", url) is not None
