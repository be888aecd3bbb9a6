"""Assets and downloads as published: scripts mean what their source says, only hash-named files
are cached as immutable, and a remembered notebook never outlives the computation it shows."""
from __future__ import annotations

import hashlib
import json
import re

from support import EPOCH, REPO, run_build, tiny_site


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


def test_a_recomputed_lab_gives_a_notebook_with_the_new_computation_time(tmp_path):
    root, out, cache = tiny_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    assert run_build(root, out, cache).returncode == 0
    first = json.loads((out / "materials/tiny.ipynb").read_text(encoding="utf-8"))["metadata"]["provenance"]
    import os
    import subprocess
    import sys
    later = str(int(EPOCH) + 86400)
    subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out), "--cache",
                    str(cache), "--no-cache"], check=True, capture_output=True,
                   env={**os.environ, "SOURCE_DATE_EPOCH": later})
    second = json.loads((out / "materials/tiny.ipynb").read_text(encoding="utf-8"))["metadata"]["provenance"]
    results = json.loads((out / "materials/results.json").read_text(encoding="utf-8"))["provenance"]
    assert first["computed_at"] != second["computed_at"] == results["computed_at"]


def test_a_figure_opens_at_full_size_and_its_narrow_variant_is_shown_on_phones(tmp_path):
    """A lab that also saves NAME.narrow.png (its panels stacked) gets it shown below 40rem; the figure
    links to its full-size PNG; a narrow variant without its figure is an error naming the lab."""
    import re

    from support import edit, run_build, tiny_site
    root = tiny_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "fig.savefig(out / 'line.png')",
         "fig.savefig(out / 'line.png')\nfig.set_size_inches(2, 4); fig.savefig(out / 'line.narrow.png')")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    assert re.search(r'<a class="figure-full" href="images/figure-01\.png"[^>]*><picture><source '
                     r'media="\(max-width: 40rem\)" srcset="images/figure-01\.narrow\.png" width="\d+" height="\d+">'
                     r'<img src="images/figure-01\.png"', page)
    assert (tmp_path / "dist/images/figure-01.narrow.png").is_file()
    assert not (tmp_path / "dist/images/figure-02.png").exists()           # not a figure of its own

    edit(root / "compute/tiny.py", "fig.savefig(out / 'line.png')\n", "")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1
    assert "site.yaml:7: lab tiny saved line.narrow.png, a narrow variant of line.png, which it did not save" \
        in result.stderr
