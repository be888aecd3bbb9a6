"""The cache folder, declared once: where it is, and what the build and serve keep in it.

    .cache/                 ROOT/.cache, or the folder --cache names
      lock                  held by the build that is running (lock.py)
      last-build.pickle     what the last build that succeeded read and wrote (pipeline.py)
      last-build.stamp      what a no-change build compares, without importing the rest (stamp.py)
      labs/<id>/<key>/      each lab's entry: what its run made (artifacts.py, compute.py)
      memo/                 remembered steps, their pack and their records (memo.py, incremental.py)
      live/<id>/            serve's: each lab's folder for its runs and checkpoints (resume.py)
      wrangler/             serve's: the Pages emulator's own state (serve.py)

Nothing else is written there, and nothing outside it but the output folder.
"""
from __future__ import annotations

from pathlib import Path

DEFAULT = ".cache"
LOCK = "lock"
STATE = "last-build.pickle"
STAMP = "last-build.stamp"
LABS, MEMO, LIVE, WRANGLER = "labs", "memo", "live", "wrangler"
FOLDERS = (LABS, MEMO, LIVE, WRANGLER)      # the cache's own folders: never a link to somewhere else


def cache_folder(root: Path | str, cache: Path | str | None = None) -> Path:
    """The cache folder of the course in `root`: `cache` when given (--cache), else ROOT/.cache."""
    return Path(cache) if cache else Path(root) / DEFAULT
