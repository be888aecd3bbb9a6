"""Jinja as the build sets it up: it reads templates/ as the author's files, fails on anything
undefined, and keeps its compiled templates as bytecode in the memo; a template error is reported at
its template and line. (Markdown is markdown.py's.)
"""
from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from ..core.sources import decode, read_bytes, source_path


class _TemplateFiles(jinja2.BaseLoader):
    """templates/ as the author's files (or the theme's: sources.source_path), as the build's `snapshot` (set for each build) saw
    them: read and checked against it (sources.read_bytes), and up to date while the snapshot's hash
    is the one read, whatever the file's time says (a copy that keeps times, `cp -p`, `rsync -a`, is
    still an edit). A byte-order mark is dropped; text that is not UTF-8 is reported naming the
    template and line."""

    def __init__(self, root: Path):
        self.root = root
        self.snapshot: dict[str, str] = {}

    def get_source(self, environment, template):
        rel = "templates/" + "/".join(jinja2.loaders.split_template_path(template))
        sha = self.snapshot.get(rel)
        if sha is None:
            raise jinja2.TemplateNotFound(template)
        path = source_path(self.root, rel)
        return decode(read_bytes(path, rel, self.snapshot), rel), str(path), lambda: self.snapshot.get(rel) == sha

    def list_templates(self):
        return sorted(rel[len("templates/"):] for rel in self.snapshot if rel.startswith("templates/"))


def template_environment(root: Path, memo_folder: Path | None, snapshot: dict[str, str]) -> jinja2.Environment:
    """The templates as the build's `snapshot` has them, compiled once per process (and as
    bytecode in the memo) and again when their text changed."""
    if memo_folder:                 # (each build: the memo may have been dropped since, by hand or by the build)
        (memo_folder / "jinja").mkdir(parents=True, exist_ok=True)
    env = _environment(root, memo_folder)
    env.loader.snapshot = snapshot
    return env


@functools.lru_cache(maxsize=None)
def _environment(root: Path, memo_folder: Path | None) -> jinja2.Environment:
    return jinja2.Environment(
        loader=_TemplateFiles(root), autoescape=True,
        bytecode_cache=jinja2.FileSystemBytecodeCache(str(memo_folder / "jinja")) if memo_folder else None,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def template_line(exc, fallback) -> tuple[str, int]:
    """Where in templates/ a rendering error happened (the template and line), else `fallback`."""
    import traceback
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename and "/templates/" in frame.filename:
            return frame.filename.split("/templates/", 1)[1], frame.lineno
    return fallback, 0
