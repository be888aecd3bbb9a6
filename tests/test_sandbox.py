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
           "(labs may write only in their own working folder, where they run, and read only the course's folder, " \
           "Python and its packages: site.yaml's `lab_access: read:` lists a folder they also need)" in result.stderr
    assert (root / "content/index.md").read_bytes() == page


def test_without_confinement_the_build_still_finds_the_changed_source(tmp_path, monkeypatch):
    """Where the kernel offers no sandbox (macOS, old Linux), the check after the labs names the file."""
    from pathlib import Path

    from sitegen.core.errors import BuildError
    from sitegen.commands.pipeline import build
    # The lab host is a program of its own: it starts as on a machine without Landlock (its confine()
    # confines nothing), by a sitecustomize module Python runs at its start.
    (tmp_path / "nolandlock").mkdir()
    (tmp_path / "nolandlock/sitecustomize.py").write_text(
        f"import sys\nsys.path.insert(0, {str(Path(sandbox.__file__).parents[2])!r})\n"
        "from sitegen.labs import sandbox\nsandbox.confine = lambda *args, **kwargs: sandbox.Confinement()\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "nolandlock"))
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


# A notebook from the internet that looks for what it can take: each attempt prints "denied NAME" or
# what it got (and the test then finds the secret in the published site).
PROBE = """import os, socket
def attempt(name, how):
    try:
        got = how()
    except (OSError, ValueError) as exc:
        print('denied', name, type(exc).__name__)
    else:
        print('got', name, got)
def read(path):
    return open(path, 'rb').read()
attempt('passwd', lambda: read('/etc/passwd'))
attempt('git', lambda: read({git!r}))
attempt('env', lambda: read({env!r}))
attempt('home', lambda: read({home!r}))
attempt('cache', lambda: os.listdir({cache!r}))
attempt('own-environ', lambda: read('/proc/self/environ') if b'secret-47' in read('/proc/self/environ') else int('no'))
attempt('host-environ', lambda: read(f'/proc/{{os.getppid()}}/environ'))
attempt('init-environ', lambda: read('/proc/1/environ'))
attempt('tcp', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'probe'))
attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'probe', ('127.0.0.1', {port})))
attempt('signal', lambda: os.kill(os.getppid(), 0))
attempt('kernel-log', lambda: os.read(os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK), 200))
attempt('devices', lambda: os.listdir('/dev'))
"""
ATTEMPTS = ("passwd", "git", "env", "home", "cache", "own-environ", "host-environ", "init-environ", "tcp", "udp", "signal",
            "kernel-log", "devices")


class _Listener:
    """A local server on a TCP and a UDP port: what anything sent it."""

    def __init__(self):
        import socket
        import threading
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(0.2)
        self.heard: list[bytes] = []
        self.tcp.settimeout(0.2)
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        import socket
        while self.running:
            for server in (self.tcp, self.udp):
                try:
                    if server is self.tcp:
                        connection, _ = server.accept()
                        with connection:
                            connection.settimeout(1)
                            self.heard.append(connection.recv(100) or b"(connected)")
                            connection.sendall(b"ok")
                    else:
                        self.heard.append(server.recv(100))
                except (socket.timeout, OSError):
                    pass

    def close(self):
        self.running = False
        self.thread.join()
        self.tcp.close()
        self.udp.close()


def _hostile_course(tmp_path):
    from support import write_notebook
    root = tiny_site(tmp_path / "site")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[http]\n\textraheader = AUTHORIZATION: basic ghs_secret4712\n")
    (root / ".env").write_text("CLOUDFLARE_API_TOKEN=cf-secret-4711\n")
    home = tmp_path / "teacher-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_ed25519").write_text("ssh-secret-4713\n")
    return root, home, write_notebook


def _build_with_secrets(root, tmp_path, home):
    import os
    import subprocess
    import sys

    from support import REPO, EPOCH
    env = {**os.environ, "CLOUDFLARE_API_TOKEN": "cf-secret-4711", "HOME": str(home), "SOURCE_DATE_EPOCH": EPOCH}
    return subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(tmp_path / "dist"),
                           "--cache", str(tmp_path / "cache")], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.skipif(sandbox.abi_version() < 6, reason="this kernel's Landlock confines no reads, scopes or ports (Linux 6.12+)")
def test_a_notebook_from_the_internet_reads_no_secret_file_environment_or_network(tmp_path):
    """It reads the project's .git/config (a CI checkout's token), .env, the teacher's SSH key, the
    build's environment through /proc, and sends to a server on this machine: every attempt is refused,
    the server hears nothing, and no secret is published."""
    root, home, write_notebook = _hostile_course(tmp_path)
    listener = _Listener()
    try:
        write_notebook(root / "content/probe.ipynb", "探测", PROBE.format(
            git=str(root / ".git/config"), env=str(root / ".env"), home=str(home / ".ssh/id_ed25519"),
            cache=str(tmp_path / "cache"), port=listener.port))
        done = _build_with_secrets(root, tmp_path, home)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    import html
    page = html.unescape((tmp_path / "dist/probe.html").read_text(encoding="utf-8"))
    assert [name for name in ATTEMPTS if f"denied {name} " not in page] == [], page[page.find("denied"):][:2000]
    assert listener.heard == []
    published = b"".join(p.read_bytes() for p in (tmp_path / "dist").rglob("*") if p.is_file())
    for secret in (b"cf-secret-4711", b"ghs_secret4712", b"ssh-secret-4713", b"root:x:0"):
        assert secret not in published
    assert "note: labs ran unconfined" not in done.stderr


@pytest.mark.skipif(sandbox.abi_version() < 1, reason="this kernel has no Landlock (Linux 5.13+)")
def test_what_a_notebook_leaves_in_dev_shm_ends_with_it_and_multiprocessing_still_works(tmp_path):
    """/dev/shm was the machine's: a file a notebook left there outlived the build. Now each lab has its
    own, empty, gone when it ends; it neither sees the build's files there nor leaves one, and
    multiprocessing's semaphores (which live there) still work. /dev/null and /dev/urandom still do."""
    import os
    import uuid

    from support import write_notebook
    root = tiny_site(tmp_path / "site")
    mark = uuid.uuid4().hex
    (host := __import__("pathlib").Path(f"/dev/shm/build-{mark}")).write_text("the build's")
    try:
        write_notebook(root / "content/shm.ipynb", "共享内存", f"""import multiprocessing, os
lock = multiprocessing.Lock()
with lock:
    open('/dev/shm/left-{mark}', 'w').write('left')
print('seen', sorted(os.listdir('/dev/shm')))
open('/dev/null', 'w').write('x')
print('random', len(open('/dev/urandom', 'rb').read(8)))""")
        result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    finally:
        host.unlink()
    assert result.returncode == 0, result.stderr
    import html
    page = html.unescape((tmp_path / "dist/shm.html").read_text(encoding="utf-8"))
    assert f"seen ['left-{mark}']" in page and "random 8" in page
    assert not os.path.exists(f"/dev/shm/left-{mark}")
    assert "/dev/shm" not in result.stderr


@pytest.mark.skipif(sandbox.abi_version() < 6, reason="this kernel's Landlock confines no reads, scopes or ports (Linux 6.12+)")
def test_what_site_yaml_lets_labs_reach_they_reach_and_every_build_says_so(tmp_path):
    """A course that needs a dataset outside its folder, the network and a variable declares them in
    site.yaml's lab_access: the lab gets each, and the build names each exception."""
    root, home, write_notebook = _hostile_course(tmp_path)
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets/points.csv").write_text("1,2\n")
    edit(root / "site.yaml", "labs:", f"lab_access:\n  read: [{tmp_path / 'datasets'}]\n  network: true\n"
                                      "  environment: [CLOUDFLARE_API_TOKEN]\nlabs:")
    listener = _Listener()
    try:
        write_notebook(root / "content/probe.ipynb", "声明", "import os, socket\n"
                       f"print('data', open({str(tmp_path / 'datasets/points.csv')!r}).read().strip())\n"
                       f"connection = socket.create_connection(('127.0.0.1', {listener.port}), timeout=5)\n"
                       "connection.sendall(b'hello')\nprint('answer', connection.recv(2))\n"
                       "print('token', os.environ['CLOUDFLARE_API_TOKEN'][-4:])")
        done = _build_with_secrets(root, tmp_path, home)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "dist/probe.html").read_text(encoding="utf-8")
    assert "data 1,2" in page and "token 4711" in page and "answer b&#39;ok&#39;" in page and listener.heard == [b"hello"]
    assert (f"note: labs may read {tmp_path / 'datasets'} and reach the network and see the environment variable "
            "CLOUDFLARE_API_TOKEN (site.yaml lab_access)") in done.stderr


def test_two_clean_builds_of_a_careless_notebook_give_the_same_page(tmp_path):
    """A notebook that prints a set of strings (whose order follows string hashing) and where it runs:
    two clean builds, each from an empty cache at the same place, publish the same bytes."""
    import shutil

    from support import write_notebook
    root = tiny_site(tmp_path / "site")
    write_notebook(root / "content/careless.ipynb", "随手", "import os\nprint({'alpha', 'beta', 'gamma', 'delta', "
                   "'epsilon', 'zeta', 'eta', 'theta'})\nprint(os.getcwd())")
    pages = []
    for out in ("one", "two"):
        shutil.rmtree(tmp_path / "cache", ignore_errors=True)
        result = run_build(root, tmp_path / out, tmp_path / "cache")
        assert result.returncode == 0, result.stderr
        pages.append((tmp_path / out / "careless.html").read_bytes())
    assert pages[0] == pages[1]


def test_a_notebook_s_markdown_latex_and_svg_outputs_are_reduced_as_its_html_is(tmp_path):
    """A cell displays Markdown holding raw HTML, LaTeX whose \\text holds a script, and an SVG that runs
    one when opened: the strict build passes, the page holds none of it, and the SVG published for
    download is inert."""
    from helpers import Elements
    from support import write_notebook
    root = tiny_site(tmp_path / "site")
    write_notebook(root / "content/shows.ipynb", "展示", "from IPython.display import display, Markdown, Latex, SVG\n"
                   "display(Markdown('**粗体** <img src=x onerror=go()> <script>go()</script> $a<b$'))\n"
                   "display(Latex(r'$\\text{<script>go()</script>} + \\href{javascript:go()}{x}$'))\n"
                   "display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\" onload=\"go()\">"
                   "<script>go()</script><rect width=\"10\" height=\"10\"/></svg>'))")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = Elements((tmp_path / "dist/shows.html").read_text(encoding="utf-8"))
    assert not [e for e in page.elements if any(name.startswith("on") or name in ("href", "style") and
                                                "javascript" in value for name, value in e[1].items())]
    assert not [e for e in page.find("script") if "src" not in e[1]]
    assert page.find("strong") and page.find("mtext")
    svgs = list((tmp_path / "dist/shows").glob("*.svg"))
    assert len(svgs) == 1 and b"script" not in svgs[0].read_bytes() and b"onload" not in svgs[0].read_bytes()


def test_a_notebook_that_allocates_past_its_memory_bound_is_named_with_the_bound(tmp_path):
    """Its front matter bounds it to 512 MiB; it asks for 4 GiB: the build fails naming the notebook's
    cell and the bound, and says where to raise it; the machine is not brought down."""
    import json
    root = tiny_site(tmp_path / "site")
    notebook = {"cells": [{"cell_type": "raw", "id": "fm", "metadata": {}, "source": "---\nmemory: 512\n---"},
                          {"cell_type": "markdown", "id": "t", "metadata": {}, "source": "# 太大"},
                          {"cell_type": "code", "id": "c", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": "import numpy as np\nhuge = np.ones(2**29)"}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (root / "content/huge.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "content/huge.ipynb" in result.stderr and "code cell 1" in result.stderr
    assert ("(the lab used more than 512 MiB, its memory bound: raise `memory:` (MiB) in the notebook's front "
            "matter if this machine has it)") in result.stderr, result.stderr


def test_a_notebook_that_prints_half_a_character_and_displays_malformed_bundles_builds(tmp_path):
    """A lone surrogate printed (an internal error while its run was stored), a display of HTML that is
    a number, plain text that is a list, Markdown that is None: the page shows U+FFFD and what it can."""
    from support import write_notebook
    root = tiny_site(tmp_path / "site")
    write_notebook(root / "content/odd.ipynb", "古怪", "from IPython.display import display\n"
                   "print('\\ud800 半个字')\n"
                   "display({'text/html': 5, 'text/plain': ['a']}, raw=True)\n"
                   "display({'text/markdown': None}, raw=True)")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 0 and "internal error" not in result.stderr, result.stderr
    assert "\ufffd 半个字" in (tmp_path / "dist/odd.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", [
    "import urllib.request\nurllib.request.urlopen('https://data.example.org/cpi.csv').read()",
    "import socket\nsocket.create_connection(('data.example.org', 443), timeout=5)",
])
def test_a_notebook_that_downloads_its_data_fails_naming_the_cell_and_the_fix(tmp_path, code):
    """QuantEcon's lectures read their datasets from the web: in a build, which gives labs no network,
    that fails at its cell, saying what to do rather than only "Temporary failure in name resolution"."""
    from support import write_notebook
    root = tiny_site(tmp_path / "site")
    write_notebook(root / "content/fetch.ipynb", "下载", code)
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "lab fetch failed: code cell 1: " in result.stderr, result.stderr
    assert "labs have no network in a build: save what it downloads beside the notebook" in result.stderr, result.stderr
