"""Save -> reloaded page in `python build.py serve`, as an author sees it in a real browser.

    python bench/serveloop.py --saves 30           a prose edit of the course's guide
    python bench/serveloop.py --saves 30 --lab     a last-cell edit of a lab whose first cell takes 10 s

Copies the course into a temporary folder, runs `build.py serve` on it, opens a
page in Debian's Chromium (Playwright), then appends a new sentence to the page's
Markdown again and again. Each time, the latency is from just before the save to
the moment the reloaded page holding that sentence fired DOMContentLoaded (the
browser's own clock, read from the Navigation Timing entry, not Playwright's
polling). Prints the median and p95, and the rebuild times `serve` reported.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
READY = "() => performance.timeOrigin + performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"


def missing() -> str | None:
    """What this machine lacks to run it, or None."""
    if not Path(CHROMIUM).exists():
        return "Debian's chromium (apt-get install chromium)"
    if not (REPO / "tools/node_modules/.bin/wrangler").exists():
        return "the Pages emulator (npm ci --prefix tools --ignore-scripts)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright (pip install -r requirements-dev.txt)"
    return None


def free_port() -> int:
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_served(port: int, server: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and server.poll() is None:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    sys.exit("build.py serve did not start")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def add_sentence(source: Path, i: int) -> str:
    """A prose edit: a new sentence at the end of the page; the text to wait for."""
    marker = f"第{i}次保存{time.time_ns()}"
    source.write_text(source.read_text(encoding="utf-8") + f"\n{marker}。\n", encoding="utf-8")
    return marker


def measure(root: Path, page_source: str, url_path: str, saves: int, env: dict | None = None,
            save=add_sentence, serve_args: tuple[str, ...] = (), tree: Path = REPO) -> dict:
    """Run serve (the generator in `tree`) on the project at `root`; edit `page_source` `saves` times
    (`save(path, i)` edits it and says what the page then shows); latencies in seconds."""
    from playwright.sync_api import sync_playwright
    port = free_port()
    log_path = root / ".serve.log"
    with log_path.open("w") as log:
        server = subprocess.Popen([sys.executable, str(tree / "build.py"), "serve", "--root", str(root),
                                   "--port", str(port), *serve_args], stdout=log, stderr=subprocess.STDOUT, env=env)
    latencies = []
    try:
        wait_served(port, server)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/{url_path}")
            source = root / page_source
            for i in range(saves + 1):
                time.sleep(0.3)                     # an author saves now and then, not in a burst
                before = time.time() * 1000
                marker = save(source, i)
                page.get_by_text(marker).first.wait_for(timeout=60_000)
                if i:                               # the first also warms the browser's cache
                    latencies.append((page.evaluate(READY) - before) / 1000)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    log = log_path.read_text()
    rebuilds = [float(s) for s in re.findall(r"rebuilt in ([0-9.]+) s", log)]
    return {"latencies": latencies, "rebuilds": rebuilds[1:], "log": log}


def copy_course(target: Path) -> Path:
    sys.path.insert(0, str(REPO))
    from sitegen.core.sources import SOURCES
    target.mkdir(parents=True)
    for part in SOURCES:
        if (REPO / part).exists():
            (shutil.copytree if (REPO / part).is_dir() else shutil.copy2)(REPO / part, target / part)
    (target / "tools").mkdir()
    (target / "tools/node_modules").symlink_to(REPO / "tools/node_modules")
    return target


SLOW_START = 10       # seconds the slow lab's first cell takes


def slow_lab_course(target: Path, env: dict | None = None) -> tuple[Path, float]:
    """A new course (`new site`, nothing of Lecture 02) whose lab's first cell takes SLOW_START seconds,
    as one that loads data or trains a model; and that lab's own run, alone, in seconds."""
    subprocess.run([sys.executable, str(REPO / "build.py"), "new", "site", str(target)], check=True,
                   capture_output=True, env=env)
    script = target / "compute/lab01.py"
    text = script.read_text(encoding="utf-8")
    script.write_text(text.replace("# %% setup\n", f"# %% setup\nimport time\ntime.sleep({SLOW_START})"
                                   "   # stands for loading the data, or training a model\n", 1), encoding="utf-8")
    (target / "tools/node_modules").symlink_to(REPO / "tools/node_modules")
    alone = target.parent / "alone"
    alone.mkdir()
    start = time.perf_counter()
    subprocess.run([sys.executable, str(script)], cwd=alone, check=True, capture_output=True, env=env)
    return target, time.perf_counter() - start


def edit_last_cell(source: Path, i: int) -> str:
    """A last-cell edit: what the lab's last line prints changes; the page shows the new number."""
    text = source.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith('print("total ='))
    value = 7_000_003 * (i + 1)
    source.write_text(text.replace(line, f'print("total =", results["total"], "保存", {7_000_003} * {i + 1})'),
                      encoding="utf-8")
    return f"保存 {value}"


def measure_slow_lab(tmp: Path, saves: int, env: dict | None = None, serve_args: tuple[str, ...] = ()) -> dict:
    """serve on a course whose lab's first cell takes 10 s: each save of its last cell, to the page.
    `serve_args`: ("--checkpoint-memory", "0") for the baseline, every run from the first cell."""
    root, alone = slow_lab_course(tmp / "slow", env)
    found = measure(root, "compute/lab01.py", "lab01", saves, env, save=edit_last_cell, serve_args=serve_args)
    return {**found, "alone": alone, "resumed": len(re.findall(r"computed from cell", found["log"]))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--lab", action="store_true", help="edit a slow lab's last cell, not the guide")
    parser.add_argument("--baseline", type=int, default=3, metavar="SAVES",
                        help="--lab: saves measured with no checkpoint too (--checkpoint-memory 0), in the same run")
    args = parser.parse_args()
    if reason := missing():
        sys.exit(f"needs {reason}")
    with tempfile.TemporaryDirectory(prefix="serveloop-") as tmp:
        if args.lab:
            if args.baseline:
                (Path(tmp) / "base").mkdir()
                base = measure_slow_lab(Path(tmp) / "base", args.baseline, serve_args=("--checkpoint-memory", "0"))
                print(f"baseline, no checkpoint: save -> reloaded page over {len(base['latencies'])} saves: median "
                      f"{statistics.median(base['latencies']):.3f} s, max {max(base['latencies']):.3f} s "
                      f"({statistics.median(base['latencies']) / base['alone']:.2f}× the lab's own run)")
            found = measure_slow_lab(Path(tmp), args.saves)
        else:
            found = measure(copy_course(Path(tmp) / "site"), "content/course/guide.md", "course/guide", args.saves)
    lat, reb = found["latencies"], found["rebuilds"]
    print(f"save -> reloaded page over {len(lat)} saves: median {statistics.median(lat):.3f} s, "
          f"p95 {percentile(lat, 0.95):.3f} s, max {max(lat):.3f} s; "
          f"rebuild median {statistics.median(reb):.3f} s")
    if args.lab:
        print(f"the lab's own run, alone: {found['alone']:.2f} s; p95 ÷ that: "
              f"{percentile(lat, 0.95) / found['alone']:.3f}× (goal ≤ 0.1×); "
              f"{found['resumed']} of {len(reb) + 1} lab builds resumed at the edited cell")
    return 0


if __name__ == "__main__":
    sys.exit(main())
