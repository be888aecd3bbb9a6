"""One build at a time: concurrent builds of one project never publish a partial site."""
from __future__ import annotations

import pytest

import os
import random
import subprocess
import time

from support import EPOCH, build_command, run_build, tiny_site, tree_bytes


@pytest.mark.slow
def test_concurrent_builds_at_random_offsets_always_leave_a_whole_site(tmp_path):
    root, out, cache = tiny_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    page = root / "content/index.md"
    base = page.read_text(encoding="utf-8")
    assert run_build(root, out, cache).returncode == 0      # the lab is computed once; builds then render
    complete = {path for path in tree_bytes(out)}
    assert {"_headers", "404.html", "index.html", "search.json"} <= complete
    rng = random.Random(20260918)
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    for attempt in range(24):
        page.write_text(base + f"\n第 {attempt} 次修改。\n", encoding="utf-8")   # so neither build is a no-op
        first = subprocess.Popen(build_command(root, out, cache), env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.0, 0.05))
        second = subprocess.Popen(build_command(root, out, cache), env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        results = [p.communicate(timeout=120) + (p.returncode,) for p in (first, second)]
        for stdout, stderr, code in results:
            assert code == 0 and "Traceback" not in stderr, stderr
        assert set(tree_bytes(out)) == complete, f"attempt {attempt}: a partial site"
        assert f"第 {attempt} 次修改。" in (out / "index.html").read_text(encoding="utf-8")
    # Beside the output only the site before it, kept for the next build to bring up to date.
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dist.sitegen-spare", "cache", "dist", "site"]


@pytest.mark.slow
def test_a_second_build_waits_and_says_for_whom(tmp_path):
    from sitegen.core.lock import one_build
    root, out, cache = tiny_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    with one_build(out, cache):                   # this test process is "the other build"
        waiting = subprocess.Popen(build_command(root, out, cache), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH})
        time.sleep(1.5)
        assert waiting.poll() is None             # it waits
        assert not out.exists()
    stdout, stderr = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, stderr
    assert f"waiting: another build of this project is running (pid {os.getpid()}) with the cache" in stderr
    assert (out / "index.html").is_file()
