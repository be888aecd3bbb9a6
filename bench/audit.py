"""Audit the built site with Lighthouse (npm, pinned 12.2.3) in Debian's Chromium.

    python bench/audit.py

Builds the site into a temporary folder (with its base URL set to the local
server, so canonical links point where the pages are served), serves it with
Cloudflare's emulator, and runs Lighthouse on every page, mobile and desktop.
Prints the four category scores and the bytes each page loads. Goals:
performance >= 98, accessibility, best practices and SEO 100; lab page <= 300 KB.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
LIGHTHOUSE = REPO / "tools/node_modules/lighthouse/cli/index.js"
CHROME_FLAGS = ("--headless=new --no-sandbox --disable-gpu --no-first-run --disable-sync "
                "--disable-background-networking --disable-component-update")
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")


def lighthouse(url: str, form: str) -> dict:
    command = ["node", str(LIGHTHOUSE), url, "--output=json", "--output-path=stdout", "--quiet",
               f"--chrome-flags={CHROME_FLAGS}", f"--only-categories={','.join(CATEGORIES)}"]
    if form == "desktop":
        command.append("--preset=desktop")
    result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "CHROME_PATH": "/usr/bin/chromium"})
    if result.returncode != 0:
        sys.exit(f"lighthouse failed on {url}:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout)


def failing(report: dict) -> list[str]:
    """The audits that cost points, for the note under the table."""
    out = []
    for category in CATEGORIES:
        for ref in report["categories"][category]["auditRefs"]:
            audit = report["audits"][ref["id"]]
            if ref["weight"] and audit.get("score") is not None and audit["score"] < 1:
                out.append(f"{category}: {ref['id']} ({audit['score']})")
    return out


def main() -> int:
    from sitegen.commands.pipeline import build
    from sitegen.commands.serve import serving
    sys.path.insert(0, str(REPO / "tests"))
    from support import free_port

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="audit-") as tmp:
        tmp = Path(tmp)
        build(REPO, tmp / "dist", cache=REPO / ".cache", base_url=f"http://127.0.0.1:{port}")
        pages = sorted(p.relative_to(tmp / "dist").as_posix() for p in (tmp / "dist").rglob("*.html")
                       if p.name != "404.html")
        with serving(REPO, tmp / "dist", port, tmp / "state"):
            rows, notes = [], []
            for page in pages:
                path = page[: -len("index.html")] if page.endswith("index.html") else page[: -len(".html")]
                for form in ("mobile", "desktop"):
                    report = lighthouse(f"http://127.0.0.1:{port}/{path}", form)
                    scores = [round(report["categories"][c]["score"] * 100) for c in CATEGORIES]
                    weight = report["audits"]["total-byte-weight"]["numericValue"]
                    rows.append((f"/{path}", form, *scores, weight))
                    notes += [f"/{path} {form}: {f}" for f in failing(report)]
    print(f"| {'page':<55} | form    | perf | a11y | best | seo | bytes loaded |")
    print(f"|{'-' * 57}|---------|-----:|-----:|-----:|----:|-------------:|")
    for page, form, perf, a11y, best, seo, weight in rows:
        print(f"| {page:<55} | {form:<7} | {perf:>4} | {a11y:>4} | {best:>4} | {seo:>3} | {weight / 1024:>9.0f} KiB |")
    print("\nGoals: performance >= 98, accessibility 100, best practices 100, SEO 100; lab page <= 300 KB.")
    print("\n".join(["Audits below full marks:", *notes]) if notes else "Every audit at full marks.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
