"""docs/authoring.md's examples are a site: put together from its code blocks and built strictly."""
from __future__ import annotations

import json
import re

from support import REPO, run_build

GUIDE = REPO / "docs/authoring.md"
BLOCK = re.compile(r"^```\w+ file=(?P<path>\S+)\n(?P<body>.*?)^```$", re.M | re.S)


def guide_files() -> dict[str, str]:
    return {m["path"]: m["body"] for m in BLOCK.finditer(GUIDE.read_text(encoding="utf-8"))}


def test_the_guide_s_examples_build_strictly_as_one_site(tmp_path):
    files = guide_files()
    assert set(files) == {"compute/waves.py", "site.yaml", "content/waves.md", "content/index.md", "content/404.md"}
    root = tmp_path / "site"
    for path, body in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(body, encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "dist/waves.html").read_text(encoding="utf-8")
    results = json.loads((tmp_path / "dist/waves/materials/results.json").read_text(encoding="utf-8"))
    assert f"正弦的最大值是 {results['peak']:.4f}，保留两位是 {results['peak']:.2f}。" in page
    assert "<th scope=\"row\">采样 5</th>" in page and "<th scope=\"col\">波形 1</th>" in page
    assert ">notes.txt</a> <span class=\"download-note\">采样说明" in page
    assert 'src="waves/images/figure-01.png"' in page and "<math" in page
    assert f'data-answer="{results["peak"]!r}"' in page and '<details class="solution"' in page
