"""A notebook page's download with what its run read: one zip, so that a student's rerun finds its files.

A notebook reads `houses.csv` beside it, `../data/points.txt` above it, imports `helper.py`: the build
recorded each read (labs/labreads.py). The archive holds the notebook (as its page's download has it)
and each of those files at the path it was read from, relative to the lowest folder that holds them
all, so that the notebook, opened where it was unpacked, reads them as it did in the build. Only the
course's sources go in (the build's snapshot; labreads.project_files_read): never a hidden file or
one under a hidden folder.
The bytes are fixed for fixed inputs: entries sorted, dated 1980-01-01, no extra fields.
"""
from __future__ import annotations

import io
import posixpath
import zipfile

from ..core.sources import read_bytes
from ..labs.labreads import project_files_read

EPOCH = (1980, 1, 1, 0, 0, 0)


def notebook_archive(root, notebook: str, data: bytes, reads: dict, snapshot: dict[str, str]) -> bytes:
    """The zip of the notebook (`notebook`: its path in the project; `data`: its download's bytes) and
    the files its run read (project_files_read), each at its path relative to the lowest folder
    holding them all."""
    paths = [notebook, *project_files_read(reads, notebook, snapshot)]
    top = posixpath.commonpath([posixpath.dirname(p) or "." for p in paths])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for rel in sorted(paths, key=lambda p: posixpath.relpath(p, top)):
            entry = zipfile.ZipInfo(posixpath.relpath(rel, top), date_time=EPOCH)
            entry.compress_type, entry.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            archive.writestr(entry, data if rel == notebook else read_bytes(root / rel, rel, snapshot))
    return buffer.getvalue()
