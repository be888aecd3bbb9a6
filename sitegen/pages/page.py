"""A page as the build holds it: its source, where it is published, its front matter and its blocks.

The types every phase that reads pages shares (content.py makes them, blocks.py, prose.py and the
renderer read them), apart so that none of those imports another for its types.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import NamedTuple


class Block(NamedTuple):
    kind: str                      # prose, cell, table or downloads
    line: int                      # first line in the page's source file
    text: str = ""                 # prose only: its Markdown
    args: tuple[str, ...] = ()
    options: dict = {}             # (never changed: one dict for all that give none)



@dataclass(frozen=True)
class Page:
    source: str                    # e.g. content/course/lab09.md
    output: str                    # e.g. course/lab11.html (front matter `url`, else the source's path)
    meta: dict
    blocks: tuple[Block, ...]
    meta_line: int = 1
    digest: str = ""               # SHA-256 of the source file's bytes: what the page's memos are keyed on
    notes: tuple = ()              # (line, message): what the author should know, said as a warning
    kinds: tuple = ()              # the kinds of its blocks, sorted: known without unpickling them
    title_label: tuple = ()        # (label, line) of its title, when its first heading was it: `# Title {#label}`

    # A page's blocks are most of its bytes, and a build after an edit reads few pages' blocks (the
    # others' checks and HTML are remembered): pickled, they are kept as bytes, unpickled on first use.
    def __reduce__(self):
        state = dict(self.__dict__)
        packed = state.pop(_PACKED, None)
        if "blocks" in state or packed is None:
            packed = pickle.dumps(state.get("blocks"), protocol=pickle.HIGHEST_PROTOCOL)
        state.pop("blocks", None)
        return _unpickled_page, (state, packed)

    def __getattr__(self, name: str):
        if name != "blocks" or _PACKED not in self.__dict__:
            raise AttributeError(name)
        blocks = pickle.loads(self.__dict__[_PACKED])
        object.__setattr__(self, "blocks", blocks)
        return blocks

    @property
    def title(self) -> str:
        return self.meta["title"]

    @property
    def lab(self) -> str | None:
        return self.meta.get("lab")

    @property
    def aliases(self) -> list[str]:
        """Old addresses that redirect here (front matter `aliases`)."""
        return list(self.meta.get("aliases", []))

    @property
    def content_path(self) -> str:
        """Path inside content/, as site.yaml names pages."""
        return self.source[len("content/"):]


_PACKED = "_packed_blocks"


def _unpickled_page(state: dict, packed: bytes) -> Page:
    page = object.__new__(Page)
    page.__dict__.update(state, **{_PACKED: packed})
    return page
