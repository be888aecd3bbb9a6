"""On a file system with whole-second times (ext4 with 128-byte inodes, as HFS+, FAT and many
network shares), two same-size edits in one second leave the same size, times and inode: the build
must still see the second. Made real: a loop-mounted ext4 image (root, as CI has)."""
from __future__ import annotations

import subprocess
import time

import pytest

from support import EPOCH, coarse_mount, edit, require, tiny_site, tree_bytes

pytestmark = pytest.mark.slow


@pytest.fixture
def coarse(tmp_path):
    mount = coarse_mount(tmp_path)
    require(mount is not None, "a loop-mounted ext4 (root, mkfs.ext4, a loop device)", "run as root with e2fsprogs")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_second_same_size_edit_in_the_same_second_is_published(coarse, tmp_path, monkeypatch):
    from sitegen.commands.pipeline import build
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root = tiny_site(coarse / "site")
    out, cache = coarse / "dist", coarse / "cache"
    build(root, out, cache=cache)
    page = root / "content/index.md"
    assert page.stat().st_mtime_ns % 1_000_000_000 == 0              # whole seconds indeed
    for attempt in range(5):
        time.sleep(1 - time.time() % 1 + 0.01)                       # at the start of a second
        start = int(time.time())
        edit(page, "总和是", "合计是")
        time.sleep(0.15)                                              # fine stamps would have settled
        build(root, out, cache=cache)
        edit(page, "合计是", "总计是")                                 # same size, same second
        if int(time.time()) == start:
            break
        edit(page, "总计是", "总和是")
    else:
        pytest.skip("the builds took over a second each time")
    build(root, out, cache=cache)
    assert "总计是" in (out / "index.html").read_text(encoding="utf-8")
    build(root, tmp_path / "clean", cache=tmp_path / "clean-cache")
    assert tree_bytes(out) == tree_bytes(tmp_path / "clean")
