"""Phase 5, its assets: static/ published into assets/, every file named by its hash, and the math
font the site's formulas need (sitegen/render/mathfont.py), referenced from the stylesheet."""
from __future__ import annotations

import posixpath
import re
import time
from typing import TYPE_CHECKING

from ..core.errors import BuildError, Problem
from ..pages.highlight import pygments_css
from .mathfont import font_face_css, formula_characters, subset
from ..core.sources import decode, read_bytes, source_path
from ..core.stored import sha256_of

if TYPE_CHECKING:
    from ..project.config import SiteConfig
    from ..pages.page import Page
    from ..core.memo import Memo

# A module specifier that names a file of static/: in `import ... from`, `export ... from`, a bare
# `import "..."` and a dynamic `import("...")`. Any other string naming a relative .js file is
# something the build cannot rewrite, and an error (MODULE_LIKE).
JS_IMPORT = re.compile(r"""(\b(?:from|import)\s*\(?\s*)(["'])(\.{1,2}/[\w./-]+\.js)\2""")
MODULE_LIKE = re.compile(r"""(["'`])(\.{1,2}/[\w./-]+\.js)\1""")
PAGE_SCRIPTS = ("copy.js", "search.js", "progress.js")       # every page loads these (static/)
PREVIEW_SCRIPTS = ("live-reload.js",)           # and preview builds this one


def hashed_name(name: str, data: bytes) -> str:
    """style.css -> style.<10 hex digits of its SHA-256>.css: a name that changes with the bytes."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.{sha256_of(data)[:10]}.{ext}"


def _imports(rel: str, code: str) -> dict[str, str]:
    """The modules of static/ a module imports: specifier -> its path in static/; a relative .js
    named any other way than an import is an error naming its line (it would be published
    pointing at a file that does not exist: only imports are renamed to the hashed names)."""
    found = {}
    at = {m.start(2): m for m in JS_IMPORT.finditer(code)}
    for m in MODULE_LIKE.finditer(code):
        if m.start(1) not in at:
            line = code.count("\n", 0, m.start()) + 1
            raise BuildError(Problem(f"static/{rel}", line, f"names {m.group(2)} outside an import: the build "
                                     "renames modules to their hashed names only in `import ... from`, "
                                     "`export ... from`, `import \"...\"` and `import(\"...\")`"))
        found[m.group(2)] = posixpath.normpath(posixpath.join(posixpath.dirname(rel), m.group(2)))
    return found


def publish_assets(cfg: SiteConfig, pages: list[Page], memo: Memo, out, preview: bool,
                   snapshot: dict[str, str], solutions: str = "folded") -> dict[str, str]:
    """static/ into `out` under assets/, with the math font the formulas need; every file named by
    its hash, since _headers caches all of assets/ for a year as immutable (an un-hashed
    syllabus.pdf would stay stale that long).
    CSS is minified; scripts are served as written: rjsmin, which does not parse
    JavaScript, dropped a space inside a nested template literal, and Pages compresses
    with Brotli anyway. Returns each static file's published path. The files are static/'s in the
    build's `snapshot`, read as it hashed them."""
    import rcssmin
    published, pending = {}, {}
    font_css = ""
    if chars := formula_characters(pages, memo, solutions):       # the math font, if any formula
        font = subset(chars, memo)
        name = hashed_name("math.woff", font)
        out.add("assets/" + name, font, "sitegen/render/fonts/stix-two-math.woff")
        font_css = font_face_css(name)
    for source in sorted(rel for rel in snapshot if rel.startswith("static/")):
        rel = source[len("static/"):]
        if rel in PREVIEW_SCRIPTS and not preview:
            continue
        data = read_bytes(source_path(cfg.root, source), source, snapshot)
        if rel.endswith(".js"):
            pending[rel] = decode(data, f"static/{rel}")
            continue
        if rel == "style.css":
            data += (pygments_css(memo) + font_css).encode()
        if rel.endswith(".css"):
            data = rcssmin.cssmin(decode(data, f"static/{rel}")).encode()
        target = "assets/" + hashed_name(rel, data)
        out.add(target, data, f"static/{rel}")
        published[rel] = target
    # An ES module's name is its hash, so a module is named after the modules it imports.
    imports = {rel: _imports(rel, code) for rel, code in pending.items()}
    while pending:
        ready = [rel for rel in pending if all(dep in published for dep in imports[rel].values())]
        if not ready:
            rel = next(iter(pending))
            missing = sorted({dep for dep in imports[rel].values() if dep not in pending and dep not in published})
            raise BuildError(Problem(f"static/{rel}", 0, f"imports static/{missing[0]}, which static/ lacks"
                                     if missing else "modules import each other, or a module imports itself"))
        for rel in ready:
            folder = posixpath.dirname(published.get(rel, "assets/" + rel))

            def renamed(m, rel=rel, folder=folder):
                target = published[imports[rel][m.group(3)]]
                return f"{m.group(1)}{m.group(2)}./{posixpath.relpath(target, folder)}{m.group(2)}"
            code = JS_IMPORT.sub(renamed, pending.pop(rel))
            target = "assets/" + hashed_name(rel, code.encode())
            out.add(target, code.encode(), f"static/{rel}")
            published[rel] = target
    if preview:
        out.add(*build_id())
    return published


def build_id() -> tuple[str, bytes]:
    """A preview's file that changes with every build, which its pages poll to reload (live-reload.js)."""
    return "__build-id.txt", f"{time.time_ns()}\n".encode()

