"""_headers for Cloudflare Pages: its rules do not grow with the course (Pages reads at most 100)."""
import re

from sitegen.render.deploy import headers_file


def rules(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("/")]


def pages_pattern(rule: str) -> re.Pattern:
    """A rule as Pages matches it: `*` is anything, `:name` one path segment (its rules engine)."""
    pattern = "(?P<splat>.*)".join(re.escape(part) for part in rule.split("*"))
    return re.compile("^" + re.sub(r":([A-Za-z]\w*)", r"(?P<\1>[^/]+)", pattern) + "$")


def test_downloads_take_a_fixed_number_of_rules_whatever_the_number_of_labs():
    files = {f"labs/materials/lab{n:03d}/tensors.npz": b"" for n in range(300)}
    files |= {f"labs/materials/lab{n:03d}.ipynb": b"" for n in range(300)}
    files |= {"top.ipynb": b"", "index.html": b""}
    text = headers_file(files).decode()
    assert len(rules(text)) == 5, rules(text)     # /*, /assets/*, and .ipynb at two depths, .npz at one
    blocks = {block.splitlines()[0]: block for block in text.split("\n\n")}
    for path in files:
        if path.endswith((".ipynb", ".npz")):
            matching = [rule for rule in blocks if rule != "/*" and pages_pattern(rule).match("/" + path)]
            assert len(matching) == 1, (path, matching)
            captured = pages_pattern(matching[0]).match("/" + path).groupdict()
            disposition = next(line for line in blocks[matching[0]].splitlines() if "Content-Disposition" in line)
            for name, value in captured.items():          # Pages fills each :name of a value in
                disposition = disposition.replace(f":{name}", value)
            assert disposition.endswith(f'filename="{path.rsplit("/", 1)[-1]}"'), (path, disposition)
