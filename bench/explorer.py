"""Benchmark the live explorer in Debian's Chromium: one full recompute and re-render.

    python bench/explorer.py [--updates 500]

Builds the site, serves it with Cloudflare's emulator, opens the lab page and
edits pixel [3,3] `--updates` times from inside the page (no test-harness
round trip per update). Each update is timed by the explorer itself
(performance.measure "explorer-update": encoder forward pass + every view
updated); the DOM's layout is forced after each so that rendering is counted.
Goals: under 2 ms per update; the explorer's scripts under 15 KB minified.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=500)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from support import CHROMIUM, CHROMIUM_ARGS, free_port
    from sitegen.commands.pipeline import build
    from sitegen.commands.serve import serving

    with tempfile.TemporaryDirectory(prefix="bench-explorer-") as tmp:
        dist = Path(tmp) / "dist"
        build(REPO, dist, cache=REPO / ".cache")
        sizes = {p.name: p.stat().st_size for p in (dist / "assets").glob("*.js")
                 if p.name.startswith(("explorer.", "encoder."))}
        port = free_port()
        with serving(REPO, dist, port, Path(tmp) / "state"), sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/course/lab11")
            page.locator("#explorer-lab09").wait_for(state="visible")
            durations = page.evaluate("""(n) => {
                const input = document.querySelector("#explorer-lab09-p33");
                performance.clearMeasures("explorer-update");
                const wall = [];
                for (let i = 0; i < n; i++) {
                    input.value = String((i % 10) / 10);
                    const start = performance.now();
                    input.dispatchEvent(new Event("input", { bubbles: true }));
                    document.body.offsetHeight;           // force layout: count the re-render
                    wall.push(performance.now() - start);
                }
                return { update: performance.getEntriesByName("explorer-update").map((e) => e.duration), wall };
            }""", args.updates)
            browser.close()

    def row(name, values):
        values = sorted(values)
        return (f"| {name:<46} | {statistics.median(values):8.3f} ms | "
                f"{values[int(0.95 * (len(values) - 1))]:8.3f} ms | {len(values):>6} |")
    print(f"Explorer in Chromium {args.updates} updates (pixel [3,3] edited from inside the page)\n")
    print("| measure                                        |   median   |    p95     | runs   |")
    print("|------------------------------------------------|-----------:|-----------:|-------:|")
    print(row("recompute + update every view (explorer's own)", durations["update"]))
    print(row("input event to layout done (wall)", durations["wall"]))
    total = sum(sizes.values())
    print(f"\nscripts: {', '.join(f'{k} {v} B' for k, v in sorted(sizes.items()))}; "
          f"total {total / 1024:.1f} KiB minified (goal < 15 KB); goal per update < 2 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
