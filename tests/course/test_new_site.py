"""A course started with `python build.py new site` holds nothing of this one (Lecture 02): no word of
its site.yaml (title, project, labs, pages, widgets) in any file the new course has."""
from __future__ import annotations

import subprocess
import sys

from support import REPO


def test_a_new_site_mentions_nothing_of_lecture_02(tmp_path):
    from sitegen.project.config import load_config
    cfg = load_config(REPO)
    words = {cfg.title, cfg.title.split(" · ")[0], cfg.project, "Lecture 02", "Lecture02", "LAB 09", "LAB09",
             *(lab.id for lab in cfg.labs), *(lab.title for lab in cfg.labs),
             *(lab.widget["script"] for lab in cfg.labs if lab.widget), *(item.title for item in cfg.nav
                                                                        if item.title not in ("导读", "延伸阅读"))}
    assert len(words) >= 10
    made = subprocess.run([sys.executable, str(REPO / "build.py"), "new", "site", str(tmp_path / "mine")],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    found = [(p.name, word) for p in sorted((tmp_path / "mine").rglob("*")) if p.is_file()
             for word in sorted(words) if word.lower() in p.read_text(encoding="utf-8").lower()]
    assert found == []
