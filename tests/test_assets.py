"""Assets as published: scripts mean what their source says, and only hash-named files are cached
as immutable."""
from __future__ import annotations

import hashlib
import re

from sitegen.core.sources import THEME
from support import CASES, run_build, tiny_site


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
    sources = sorted([*(THEME / "static").glob("*.js"), CASES / "_base/static/literals.js"])
    assert {p.stem for p in sources} - {"live-reload"} <= set(served)
    for source in sources:
        if source.stem not in served:
            continue                                     # live-reload.js: preview builds only
        ours = js_literals(source.read_text(encoding="utf-8"))
        theirs = js_literals(served[source.stem].read_text(encoding="utf-8"))
        rename = re.compile(r"^\./[\w-]+\.[0-9a-f]{10}\.js$")   # an import's specifier names the hashed module
        assert [s for s in theirs if not rename.match(s)] == [s for s in ours if not re.match(r"^\./[\w-]+\.js$", s)]
    assert "`token ${i} ${fmt(v)}`" in served["literals"].read_text(encoding="utf-8")     # the fixture's own


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


def _publish(tmp_path, modules: dict[str, str]) -> dict:
    """static/ of these modules, published: output path -> text."""
    from types import SimpleNamespace

    from sitegen.render.assets import publish_assets
    from sitegen.core.memo import Memo
    from sitegen.render.render import Outputs
    snapshot = {}
    for rel, code in modules.items():
        (tmp_path / "static" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "static" / rel).write_text(code, encoding="utf-8")
        snapshot[f"static/{rel}"] = hashlib.sha256(code.encode()).hexdigest()
    out = Outputs()
    publish_assets(SimpleNamespace(root=tmp_path), [], Memo(None), out, False, snapshot)
    return {path: data.decode() for path, data in out.items()}


def test_every_form_of_module_specifier_is_renamed_to_the_hashed_module(tmp_path):
    published = _publish(tmp_path, {
        "util.js": "export const one = 1;\n",
        "lib/deep.js": 'import { one } from "../util.js";\nexport const two = one + 1;\n',
        "main.js": ('import { one } from "./util.js";\nimport "./lib/deep.js";\n'
                    "export { two } from './lib/deep.js';\nconst later = await import(\"./util.js\");\n"),
    })
    names = {path.rsplit("/", 1)[-1].split(".")[0]: path for path in published}
    main = published[names["main"]]
    util, deep = names["util"][len("assets/"):], names["deep"][len("assets/"):]
    assert f'from "./{util}"' in main and f'import "./{deep}"' in main
    assert f"from './{deep}'" in main and f'import("./{util}")' in main
    assert f'from "./../{util}"' in published[names["deep"]]
    assert not re.search(r"""["']\.{1,2}/[\w/]+\.js["']""", main)       # nothing left pointing at a source name


def test_a_module_named_outside_an_import_or_missing_is_an_error_naming_its_line(tmp_path):
    from sitegen.core.errors import BuildError
    import pytest
    with pytest.raises(BuildError) as failed:
        _publish(tmp_path / "a", {"w.js": "// worker\nnew Worker('./worker.js');\n", "worker.js": ""})
    assert str(failed.value.problems[0]).startswith("static/w.js:2: names ./worker.js outside an import")
    with pytest.raises(BuildError) as failed:
        _publish(tmp_path / "b", {"m.js": 'import "./gone.js";\n'})
    assert str(failed.value.problems[0]) == "static/m.js: imports static/gone.js, which static/ lacks"
