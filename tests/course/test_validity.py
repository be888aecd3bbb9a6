"""Valid HTML and CSS: the Nu Html Checker (npm vnu-jar, run with Java) over all of dist/."""
from __future__ import annotations

import json
import subprocess


def test_nu_checker_finds_no_errors_in_html_or_css(site, vnu):
    files = sorted(str(p) for p in site.rglob("*") if p.suffix in (".html", ".css"))
    assert len(files) >= 8
    result = subprocess.run([*vnu, "--errors-only", "--format", "json", "--also-check-css",
                             *files], capture_output=True, text=True, timeout=300)
    messages = json.loads(result.stderr or "{}").get("messages", [])
    errors = [f"{m.get('url', '').rsplit('/dist/', 1)[-1]}:{m.get('lastLine')}: {m.get('message')}"
              for m in messages if m.get("type") == "error"]
    assert errors == [], "\n".join(errors[:20])
    assert result.returncode == 0
