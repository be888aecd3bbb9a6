"""The project's own files: walked, read as text, and snapshotted.

Every source the build reads is found here, so what an author got wrong in a
file is reported naming that file: text that is not UTF-8 (a byte-order mark
is accepted), a file too large to be a source, a symlink that points nowhere
or out of the project (whose target would otherwise be published: a link to
/proc/self/environ would put the builder's tokens on the site).

The snapshot (each source's hash) is the build's fingerprint of its inputs,
and, taken again after the labs ran, proves that no lab changed a source.
"""
from __future__ import annotations

import os
from pathlib import Path

from .errors import BuildError, Collector, Problem, SourcesChanged
from .stored import file_state, settled_before, settled_since, sha256_of

# (requirements.txt: a notebook page notes what its code imports that the file does not list)
SOURCES = ("site.yaml", "requirements.txt", "content", "compute", "templates", "static", "frozen")
PAGE_FILES = (".md", ".ipynb", ".qmd")      # what a page's source in content/ may be: Markdown, a notebook, Quarto's
# The default theme: what a course's templates/ and static/ lack is the generator's, file by file (a
# course's templates/page.html replaces the theme's, as MkDocs' custom_dir does).
THEME = Path(__file__).resolve().parent.parent / "theme"
THEMED = ("templates", "static")
SKIPPED = {"__pycache__", ".ipynb_checkpoints"}
MAX_TEXT_BYTES = 8 * 2**20      # a page, template, script or site.yaml larger than this is a mistake


def decode(data: bytes, rel: str) -> str:
    """UTF-8 text (with or without a byte-order mark), or a Problem naming the line of the first bad byte."""
    if len(data) > MAX_TEXT_BYTES:
        raise BuildError(Problem(rel, 0, f"{len(data) / 2**20:.0f} MiB is far too large for a source file "
                                         f"(at most {MAX_TEXT_BYTES // 2**20} MiB): split it, or keep data "
                                         "in the lab's outputs"))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BuildError(Problem(rel, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x}, {exc.reason}): "
                                            "save the file as UTF-8")) from None


def read_bytes(path: Path | str, rel: str, snapshot: dict[str, str] | None = None) -> bytes:
    """An author's file; a failure to read it names `rel`. With the build's `snapshot`,
    the bytes are what it hashed, or the file changed since the build began (SourcesChanged): a
    phase never renders, nor remembers under the snapshot's hash, text the snapshot did not see."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise BuildError(Problem(rel, 0, f"cannot read: {exc.strerror or exc}")) from None
    if snapshot is not None and rel in snapshot and sha256_of(data) != snapshot[rel]:
        raise SourcesChanged([rel])
    return data


def read_text(path: Path | str, rel: str, snapshot: dict[str, str] | None = None) -> str:
    """An author's text file, decoded; any failure names `rel` (`snapshot`: see read_bytes)."""
    return decode(read_bytes(path, rel, snapshot), rel)


def check_link(path: Path, root: Path, rel: str, problems: Collector) -> bool:
    """True for a symlink that stays inside the project; adds a Problem for any other."""
    target = os.readlink(path)
    resolved = path.resolve()
    if not resolved.exists():
        problems.add(rel, 0, f"a symlink to {target!r}, which does not exist: remove it, or point it at a "
                             "file inside the project")
        return False
    if resolved != root and root not in resolved.parents:
        problems.add(rel, 0, f"a symlink to {resolved}, outside the project: the build publishes only the "
                             "project's own files; copy the file into the project instead")
        return False
    hidden = [part for part in resolved.relative_to(root).parts if part.startswith(".")]
    if hidden:              # .env, .git/config (a CI checkout's token): never a course's source
        problems.add(rel, 0, f"a symlink to {resolved.relative_to(root).as_posix()}, a hidden file or folder "
                             f"({hidden[0]}), which is never a source of the course: remove the link")
        return False
    return True


def source_files(root: Path) -> dict[str, str]:
    """Every source file (relative POSIX path -> path), symlinks checked, all problems at once; and the
    theme's files that the course's templates/ and static/ lack (source_path)."""
    problems = Collector()
    files: dict[str, str] = {}

    def visit(path: str, rel: str, linked: bool, walk: bool, is_file) -> None:
        if linked and not check_link(Path(path), root, rel, problems):
            return
        if is_file():
            files[rel] = path
        elif walk and os.path.isdir(path):
            # a linked folder is not walked (as pathlib's rglob, which the phases use, does not)
            with os.scandir(path) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    if entry.name not in SKIPPED:      # (scandir knows what each entry is: no stat)
                        linked = entry.is_symlink()
                        visit(entry.path, f"{rel}/{entry.name}", linked, not linked, entry.is_file)

    for name in SOURCES:
        if os.path.lexists(path := root / name):
            visit(str(path), name, path.is_symlink(), True, path.is_file)
    problems.raise_if_any()
    for name in THEMED:
        for path in sorted((THEME / name).rglob("*")):
            rel = path.relative_to(THEME).as_posix()
            if path.is_file() and rel not in files and not set(path.parts) & SKIPPED:
                files[rel] = str(path)
    return files


def source_path(root: Path, rel: str) -> Path:
    """Where source `rel` is read from: the course's own file, else the theme's (templates/, static/)."""
    path = root / rel
    if rel.split("/", 1)[0] in THEMED and not os.path.lexists(path) and (THEME / rel).is_file():
        return THEME / rel
    return path


def take_snapshot(files: dict[str, str], known: dict[str, list] | None = None) -> tuple[dict[str, str], dict[str, list]]:
    """Each source's SHA-256, by relative path (`files` as source_files gives them), and each one's
    [SHA-256, *file_state] for the next snapshot (`known`): a file whose state is as recorded there
    is not read again (stored.py says why that is safe; only settled states are recorded)."""
    known, before = known or {}, settled_before()
    snapshot, states = {}, {}
    for rel, path in files.items():
        try:
            state = list(file_state(path))
            record = known.get(rel)
            if record is not None and record[1:] == state:
                snapshot[rel] = record[0]
            else:
                with open(path, "rb") as handle:
                    snapshot[rel] = sha256_of(handle.read())
        except OSError as exc:
            raise BuildError(Problem(rel, 0, f"cannot read: {exc.strerror or exc}")) from None
        if settled_since(state[2], before):      # a later write would show
            states[rel] = [snapshot[rel], *state]
    return snapshot, states


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Sources added, removed or changed between two snapshots."""
    return sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))
