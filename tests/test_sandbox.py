"""A lab cannot change the project: confined by the kernel where it can be, and always checked."""
from __future__ import annotations

import pytest

from support import edit, run_build, tiny_site

from sitegen.labs import sandbox

WRITE_CONTENT = "# %% save\nopen('../../../../../site/content/index.md', 'a').write('injected')\n"


@pytest.mark.skipif(sandbox.abi_version() < 1, reason="this kernel has no Landlock (Linux 5.13+)")
def test_a_lab_writing_into_content_fails_and_the_file_is_unchanged(tmp_path):
    root = tiny_site(tmp_path / "site")
    # From its working folder (cache/labs/tiny/.tmp-*/work): five folders up, then site/content/index.md.
    edit(root / "compute/tiny.py", "# %% save\n", WRITE_CONTENT)
    page = (root / "content/index.md").read_bytes()
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "lab tiny failed: PermissionError: [Errno 13] Permission denied: '../../../../../site/content/index.md' " \
           "(labs may write only in their own working folder, where they run)" in result.stderr
    assert (root / "content/index.md").read_bytes() == page


def test_without_confinement_the_build_still_finds_the_changed_source(tmp_path, monkeypatch):
    """Where the kernel offers no sandbox (macOS, old Linux), the check after the labs names the file."""
    from sitegen.core.errors import BuildError
    from sitegen.commands.pipeline import build
    monkeypatch.setattr(sandbox, "confine", lambda writable: False)    # labs fork from this process
    root = tiny_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "# %% save\n", WRITE_CONTENT)
    with pytest.raises(BuildError) as caught:
        build(root, tmp_path / "dist", cache=tmp_path / "cache")
    assert [str(p) for p in caught.value.problems] == [
        "content/index.md: changed while lab tiny ran: a lab may write only in its own working folder "
        "(if you edited the file meanwhile, build again)"]
    assert not (tmp_path / "dist").exists()


@pytest.mark.skipif(sandbox.abi_version() < 1, reason="this kernel has no Landlock (Linux 5.13+)")
def test_a_lab_may_still_write_its_outputs_and_temporary_files(tmp_path):
    root = tiny_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "# %% save\n", "# %% save\nimport tempfile\n"
         "with tempfile.NamedTemporaryFile() as scratch:\n    scratch.write(b'ok')\n")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0, result.stderr


def test_a_notebook_sees_none_of_the_build_s_secrets_nor_the_teacher_s_home(tmp_path):
    """A notebook from elsewhere prints every variable it can see and the token a CI job holds: none of the
    build's secrets reaches the page, the downloads or anything else published."""
    import json
    import os
    import subprocess
    import sys

    from support import REPO, EPOCH
    root = tiny_site(tmp_path / "site")
    cell = {"cell_type": "code", "id": "steal", "metadata": {}, "execution_count": None, "outputs": [], "source":
            "import os, pathlib\nprint(sorted(os.environ))\nprint(os.environ.get('CLOUDFLARE_API_TOKEN'))\n"
            "print(os.environ['HOME'], pathlib.Path.home())\nleak = dict(os.environ)"}
    (root / "content/steal.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "markdown", "id": "t", "metadata": {}, "source": "# 偷看"}, cell],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    secrets = {"CLOUDFLARE_API_TOKEN": "cf-secret-4711", "GITHUB_TOKEN": "ghs_secret4712",
               "AWS_SECRET_ACCESS_KEY": "aws-secret-4713", "MY_COURSE_SETTING": "setting-4714",
               "OPENAI_API_KEY": "sk-secret-4715"}
    env = {**os.environ, **secrets, "HOME": str(tmp_path / "teacher-home"), "SOURCE_DATE_EPOCH": EPOCH}
    done = subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(tmp_path / "dist"),
                           "--cache", str(tmp_path / "cache")], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    published = b"".join(p.read_bytes() for p in (tmp_path / "dist").rglob("*") if p.is_file())
    for name, value in secrets.items():
        assert value.encode() not in published, name
    assert str(tmp_path / "teacher-home").encode() not in published
    import html
    import re
    page = html.unescape((tmp_path / "dist/steal.html").read_text(encoding="utf-8"))
    seen = re.search(r"\[('[A-Z_0-9]+'(, )?)+\]", page)[0]                 # what it printed of os.environ
    assert "'PATH'" in seen and "'HOME'" in seen and not [name for name in secrets if f"'{name}'" in seen]


@pytest.mark.parametrize("start", [
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True).pid",
    "subprocess.Popen(['setsid', sys.executable, '-c', 'import time; time.sleep(120)']).pid",
])
def test_everything_a_notebook_starts_ends_with_it_whatever_session_it_made(tmp_path, start):
    """A child in a session of its own outlived the lab and held the build's output pipe: `build.py | cat`
    never ended. Now the build's pipe closes as the build ends, and the child is gone."""
    import json
    import os
    import subprocess
    import sys
    import time

    from support import REPO, EPOCH
    root = tiny_site(tmp_path / "site")
    source = f"import subprocess, sys, time\npid = {start}\ntime.sleep(0.5)"
    (root / "content/escape.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "markdown", "id": "t", "metadata": {}, "source": "# 逃逸"},
                  {"cell_type": "code", "id": "c", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": source}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(tmp_path / "dist"),
                           "--cache", str(tmp_path / "cache")], capture_output=True, text=True, timeout=100,
                          env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH})
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60                   # (the pipe closed with the build, not the sleeper)
    pid = json.loads((tmp_path / "dist/escape/results.json").read_text())["pid"]
    for _ in range(50):
        if not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z":
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        raise AssertionError(f"process {pid}, started by the notebook, outlived its lab")
