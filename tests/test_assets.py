"""Assets as published: scripts mean what their source says, and only hash-named files are cached
as immutable."""
from __future__ import annotations

import hashlib
import re

from support import REPO, run_build, tiny_site


def js_literals(code: str) -> list[str]:
    """The string and template literals of a script, in order (a template's text parts, each
    `${...}` substitution scanned as code), skipping comments and regular expression literals."""
    found, i, n = [], 0, len(code)
    stack: list[int] = []            # open `${` of templates, as brace depths
    depth = 0
    last = ""                        # last significant character: decides whether / starts a regex

    def template(i: int) -> int:     # scan template text from i (after ` or }); returns index after it
        start = i
        while i < n:
            if code[i] == "\\":
                i += 2
            elif code[i] == "`":
                found.append(code[start:i])
                return i + 1
            elif code.startswith("${", i):
                found.append(code[start:i])
                stack.append(depth)
                return i + 2
            else:
                i += 1
        raise AssertionError("unterminated template literal")

    while i < n:
        c = code[i]
        if code.startswith("//", i):
            i = code.find("\n", i) if "\n" in code[i:] else n
        elif code.startswith("/*", i):
            i = code.index("*/", i) + 2
        elif c in "'\"":
            j = i + 1
            while code[j] != c:
                j += 2 if code[j] == "\\" else 1
            found.append(code[i + 1:j])
            i, last = j + 1, "a"
        elif c == "`":
            i, last = template(i + 1), "a"
        elif c == "/" and (last == "" or last in "(,=:[!&|?{};+-*%<>~^"):
            j, in_class = i + 1, False
            while in_class or code[j] != "/":
                if code[j] == "\\":
                    j += 1
                elif code[j] in "[]":
                    in_class = code[j] == "["
                j += 1
            i, last = j + 1, "a"
        elif c == "{":
            depth, i, last = depth + 1, i + 1, c
        elif c == "}":
            if stack and stack[-1] == depth:
                stack.pop()
                i, last = template(i + 1), "a"
            else:
                depth, i, last = depth - 1, i + 1, c
        else:
            if not c.isspace():
                last = c
            i += 1
    return found


def test_the_literal_scanner_sees_nested_templates_comments_and_regexes():
    code = ("// a 'comment'\nconst a = `token ${i} ${`x ${y} z`}`; /* \"no\" */ const r = /[/'\"]/g;\n"
            "const s = 'it\\'s' + \"q\";")
    assert js_literals(code) == ["token ", " ", "x ", " z", "", "it\\'s", "q"]


def test_every_served_script_keeps_every_string_and_template_literal_of_its_source(tiny_built):
    served = {p.name.split(".")[0]: p for p in (tiny_built / "assets").glob("*.js")}
    sources = sorted((REPO / "static").glob("*.js"))
    assert {p.stem for p in sources} - {"live-reload"} <= set(served)
    for source in sources:
        if source.stem not in served:
            continue                                     # live-reload.js: preview builds only
        ours = js_literals(source.read_text(encoding="utf-8"))
        theirs = js_literals(served[source.stem].read_text(encoding="utf-8"))
        rename = re.compile(r"^\./[\w-]+\.[0-9a-f]{10}\.js$")   # an import's specifier names the hashed module
        assert [s for s in theirs if not rename.match(s)] == [s for s in ours if not re.match(r"^\./[\w-]+\.js$", s)]
    assert "`token ${i} ${fmt(v)}`" in served["explorer"].read_text(encoding="utf-8")


def test_only_hash_named_files_are_cached_as_immutable(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "static/syllabus.pdf").write_bytes(b"%PDF-1.4 syllabus, first version")
    assert run_build(root, tmp_path / "dist", tmp_path / "cache").returncode == 0
    dist = tmp_path / "dist"
    assets = sorted(p for p in (dist / "assets").rglob("*") if p.is_file())
    assert any(p.name.startswith("syllabus.") for p in assets) and not (dist / "assets/syllabus.pdf").exists()
    for path in assets:                                   # every name carries the hash of its bytes
        stem, digest, ext = path.name.rsplit(".", 2)
        assert digest == hashlib.sha256(path.read_bytes()).hexdigest()[:10], path.name
    headers = (dist / "_headers").read_text(encoding="utf-8")
    immutable = [block.splitlines()[0] for block in headers.split("\n\n") if "immutable" in block]
    assert immutable == ["/assets/*"]
    assert "/*\n" in headers and "Cache-Control: public, max-age=0, must-revalidate" in headers
