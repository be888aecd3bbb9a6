"""Full-text search built with the site: Pagefind, run on the rendered pages.

Pagefind's extended binary (from PyPI, with Chinese word segmentation)
indexes the pages that carry `data-pagefind-body` into `pagefind/`. It runs
as its own process while the build finishes rendering and checking, and its
result is remembered on the pages' HTML, so a build that changed no page
reuses it. Pagefind's ready-made UI files are left out: the site has its own
small search box (static/search.js).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from base64 import b64decode, b64encode
from pathlib import Path

from .errors import BuildError, Problem
from .memo import Memo

UI_FILES = ("pagefind-ui", "pagefind-modular-ui", "pagefind-component-ui", "pagefind-highlight")


def _binary() -> str:
    try:
        from pagefind_bin_extended import get_executable
    except ImportError as exc:
        raise BuildError(Problem("requirements.txt", 0, "Pagefind is not installed: "
                                                        "pip install -r requirements.txt")) from exc
    return str(get_executable())


class SearchIndex:
    def __init__(self, memo: Memo):
        self.memo = memo
        self.process: subprocess.Popen | None = None
        self.folder: Path | None = None
        self.files: dict[str, bytes] | None = None
        self.key: tuple = ()

    def start(self, pages: dict[str, bytes]) -> "SearchIndex":
        """Begin indexing these pages (output path -> HTML) in the background."""
        self.key = tuple(sorted(pages.items()))
        cached = self.memo.peek("search", self.key)
        if cached is not None:
            self.files = {path: b64decode(data) for path, data in json.loads(cached).items()}
            return self
        self.folder = Path(tempfile.mkdtemp(prefix="sitegen-search-"))
        for path, html in pages.items():
            (self.folder / "site" / path).parent.mkdir(parents=True, exist_ok=True)
            (self.folder / "site" / path).write_bytes(html)
        self.process = subprocess.Popen(
            [_binary(), "--site", str(self.folder / "site"), "--output-path", str(self.folder / "pagefind")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return self

    def finish(self) -> dict[str, bytes]:
        """The index as output files under pagefind/."""
        if self.files is not None:
            return self.files
        try:
            output, _ = self.process.communicate(timeout=300)
            if self.process.returncode != 0:
                raise BuildError(Problem("pagefind", 0, "search indexing failed:\n"
                                         + output.decode("utf-8", "replace")[-2000:]))
            root = self.folder / "pagefind"
            self.files = {f"pagefind/{p.relative_to(root).as_posix()}": p.read_bytes()
                          for p in sorted(root.rglob("*")) if p.is_file() and not p.name.startswith(UI_FILES)}
            self.memo.put("search", self.key, json.dumps(
                {path: b64encode(data).decode("ascii") for path, data in self.files.items()}).encode())
            return self.files
        finally:
            self.close()

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
