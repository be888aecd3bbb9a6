"""The lab host (sitegen/labs/labhost.py) trusts nothing a lab sends it. Under serve a lab's process holds
a control socket to the host, and each checkpoint a socket of its own (checkpoint.py): code a notebook
runs can write anything on either, as the harness's own messages or as garbage. The host, which is not
confined as the lab is, must never run what it reads (no pickle), nor act on a process the lab names
that is not the lab's own (a checkpoint must be the child of the run that registers it, a resumed run
the child of its checkpoint), and a message it cannot read ends that channel, not the build."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support import EPOCH, edit, tiny_site

from sitegen.commands.pipeline import build
from sitegen.labs.resume import KeptLabs

LAB = """# A lab whose first cell writes __ATTACK__ to every socket it holds.

# %% setup
import json
from pathlib import Path
out = Path('out')
out.mkdir(exist_ok=True)
x = [1.0, 2.0]

# %% attack
__CODE__

# %% save
(out / 'results.json').write_text(json.dumps({'x': x, 'total': sum(x)}))
print('saved')
"""

SOCKETS = """import os, socket, stat
def sockets():
    found = []
    for name in os.listdir('/proc/self/fd'):
        try:
            if stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                found.append(socket.socket(fileno=os.dup(int(name))))
        except OSError:
            pass
    return found
"""

# The attack: a length and a pickle whose __reduce__ runs a command, on the control socket.
PICKLE = SOCKETS + """import pickle, struct
class Evil:
    def __reduce__(self):
        return (os.system, ('touch __MARKER__',))
data = pickle.dumps(Evil())
for sock in sockets():
    try:
        sock.sendall(struct.pack('=Q', len(data)) + data)
    except OSError:
        pass
"""

# A checkpoint registered in the harness's own format, naming a process that is no child of the lab.
FORGED = SOCKETS + """from sitegen.labs import checkpoint
victim = int(open(Path(__file__).parent / 'victim.txt').read())
ours, theirs = socket.socketpair()
for sock in sockets():
    try:
        checkpoint.tell(sock, checkpoint.CHECKPOINT, 1, victim, (ours.fileno(),))
    except OSError:
        pass
"""

# The same through a checkpoint: a hook run in each fork of the lab (the checkpoint among them) writes
# a pickle and a forged answer (the pid of a resumed run) on every socket it holds.
AT_FORK = SOCKETS + """import pickle, struct
from sitegen.labs import checkpoint
victim = int(open(Path(__file__).parent / 'victim.txt').read())
class Evil:
    def __reduce__(self):
        return (os.system, ('touch __MARKER__',))
def hook():
    data = pickle.dumps(Evil())
    for sock in sockets():
        for message in (struct.pack('=Q', len(data)) + data,):
            try:
                sock.sendall(message)
                checkpoint.tell(sock, checkpoint.STARTED, 0, victim)
            except OSError:
                pass
os.register_at_fork(after_in_child=hook)
"""


# Bytes on the pipe the host hears the run's end on (its results.json final, or the run over).
PIPE = """import os, stat
for name in os.listdir('/proc/self/fd'):
    try:
        if stat.S_ISFIFO(os.fstat(int(name)).st_mode):
            os.write(int(name), b'ckpt' + os.urandom(20))
    except OSError:
        pass
"""


# A checkpoint registered, then the channel shut before the host's answer (the host must not lose the
# socket it took); the same child registered twice; a thousand cells that are none of the lab's.
SHUT = SOCKETS + """from sitegen.labs import checkpoint
import gc
kid = os.fork()
if kid == 0:
    os.closerange(3, 65536)
    import time
    time.sleep(60)
    os._exit(0)
control = [o for o in gc.get_objects() if isinstance(o, checkpoint.Checkpointer)][0].reporting.control
for cell in [1, 1] + list(range(100, 1100)):
    a, b = socket.socketpair()
    try:
        checkpoint.tell(control, checkpoint.CHECKPOINT, cell, kid, (a.fileno(),))
    except OSError:
        break
    if cell == 1:
        control.shutdown(socket.SHUT_RDWR)
os.kill(kid, 9)
os.waitpid(kid, 0)
"""


@pytest.fixture()
def victim():
    """A process of the build's user in a group of its own, which no lab may have the host end."""
    process = subprocess.Popen(["sleep", "120"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


@pytest.mark.parametrize("attack", ["pickle", "forged", "at-fork", "pipe", "shut"])
def test_what_a_lab_writes_on_the_host_s_sockets_is_never_run_nor_obeyed(tmp_path, monkeypatch, victim, attack):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    marker = tmp_path / "pwned"
    code = {"pickle": PICKLE, "forged": FORGED, "at-fork": AT_FORK, "pipe": PIPE, "shut": SHUT}[attack].replace("__MARKER__", str(marker))
    root = tiny_site(tmp_path / "site")
    (root / "compute/tiny.py").write_text(LAB.replace("__CODE__", code).replace("__ATTACK__", attack), encoding="utf-8")
    (root / "compute/victim.txt").write_text(str(victim.pid), encoding="utf-8")
    kept = KeptLabs(tmp_path / "cache")
    try:
        prints = ["print('saved')", "print('saved', 1)", "print('saved', 2)"]
        for n, said in enumerate(prints):   # a first run, then edits that resume it from its checkpoints
            if n:
                edit(root / "compute/tiny.py", prints[n - 1], said)
            try:
                build(root, tmp_path / "dist", cache=tmp_path / "cache", kept=kept)
            except Exception:       # noqa: BLE001 - the lab may fail: what it did not do is what is tested
                pass
        host = kept.host.process.pid if kept.host is not None and kept.host.alive() else None
        if host is not None:        # (a few descriptors a lab: not one per record it sent)
            assert len(os.listdir(f"/proc/{host}/fd")) < 64, os.listdir(f"/proc/{host}/fd")
        edit(root / "compute/tiny.py", code, "x = [x[0], x[1] * 2]")       # the attack gone: the host still serves
        (root / "content/index.md").write_text("---\ntitle: 首页\nlab: tiny\n---\n总和是 {{ total }}。\n", encoding="utf-8")
        assert build(root, tmp_path / "dist", cache=tmp_path / "cache", kept=kept).computed == ("tiny",)
        assert "总和是 5.0000。" in (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    finally:
        kept.close()
    assert not marker.exists(), "the host unpickled what a lab sent, and ran its command"
    assert victim.poll() is None, "the host ended a process a lab named"


# A one-off build. The lab writes a result of its own and tells the host it is over, then goes on: it
# swaps a folder of its own for a link to the course's, as the build stores what it wrote (which moved
# every file by its path: the course's .env went into the site).
STEAL = """import gc, json, os, time
from sitegen.labs.checkpoint import Reporting
from sitegen.labs.runs import LabResult, LabRun
report = [o for o in gc.get_objects() if isinstance(o, Reporting)][0]
run = [o for o in gc.get_objects() if isinstance(o, LabRun)][0]
os.makedirs('out/aaa')
for i in range(3000):
    open(f'out/aaa/f{i:05}.txt', 'w').write('x')
os.makedirs('out/zzz')
open('out/zzz/.env', 'w').write('decoy')
json.dump({'x': [1.0], 'total': 1.0}, open('out/results.json', 'w'))
done = LabResult(cells=[{'name': c.name, 'stdout': '', 'figures': [], 'value': None, 'error': None} for c in run.cells])
open(report.result + '.tmp', 'w').write(done.to_json())
os.replace(report.result + '.tmp', report.result)
os.write(report.announce_fd, b'i')
os.write(report.announce_fd, b'x')
for _ in range(200000):
    if not os.path.exists('out/aaa/f01000.txt'):
        break
os.rename('out/zzz', 'out/zzz-old')
os.symlink(run.watch[0], 'out/zzz')
time.sleep(20)
"""
# Its result file a pipe, and a pipe among what it read: the build reads both.
HANG = """import gc, os, time
from sitegen.labs.checkpoint import Reporting
from sitegen.labs.labreads import Recorder
os.mkfifo('trap')
for recorder in [o for o in gc.get_objects() if isinstance(o, Recorder)]:
    recorder.reads[os.path.abspath('trap')] = 'x'
report = [o for o in gc.get_objects() if isinstance(o, Reporting)][0]
if __ATTACK__ == 'result':
    os.mkfifo(report.result)
    os.close(report.announce_fd)
    report.announce_fd = None
    time.sleep(30)
"""


# What the build reads once the lab says its results.json is final (results.early.json, in its folder):
# a pipe there, or a link to a file the lab may not read itself (and the build may).
EARLY = """import gc, os, pathlib, time
from sitegen.labs.checkpoint import Reporting
staging = pathlib.Path(os.environ["TMPDIR"]).parent
report = [o for o in gc.get_objects() if isinstance(o, Reporting)][0]
if __ATTACK__ == 'early-pipe':
    os.mkfifo(staging / 'results.early.json')
else:
    os.symlink(pathlib.Path(__file__).resolve().parents[2] / 'outside.json', staging / 'results.early.json')
os.write(report.announce_fd, b'i')
time.sleep(2)
"""


@pytest.mark.parametrize("attack", ["steal", "result", "reads", "early-pipe", "early-link"])
def test_a_lab_that_says_it_is_over_and_goes_on_neither_moves_a_file_of_the_course_nor_hangs_the_build(
        tmp_path, attack):
    from support import run_build
    code = {"steal": STEAL}.get(attack) or (EARLY if attack.startswith("early") else HANG).replace(
        "__ATTACK__", repr(attack))
    root = tiny_site(tmp_path / "site")
    (tmp_path / "outside.json").write_text('{"token": "sk-live-SECRET"}', encoding="utf-8")    # (no lab may read it)
    (root / "compute/tiny.py").write_text(LAB.replace("__CODE__", code).replace("__ATTACK__", attack), encoding="utf-8")
    (root / ".env").write_text("API_TOKEN=sk-live-SECRET", encoding="utf-8")
    if attack == "early-link":              # (a reader of the lab, which publishes what it was given)
        with open(root / "site.yaml", "a", encoding="utf-8") as config:
            config.write("  - id: reader\n    title: R\n    script: compute/reader.py\n    images: reader/images\n"
                         "    downloads: reader/materials\n    page: reader.md\n    inputs: [tiny]\n")
        (root / "content/reader.md").write_text("---\ntitle: R\nlab: reader\n---\nR.\n", encoding="utf-8")
        (root / "compute/reader.py").write_text("# %% save\nimport shutil\nshutil.copy('inputs/tiny/results.json', "
                                                "'results.json')\n", encoding="utf-8")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--jobs", "2", timeout=120)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert (root / ".env").read_text(encoding="utf-8") == "API_TOKEN=sk-live-SECRET"
    for folder in (tmp_path / "dist", tmp_path / "cache"):
        assert not [p for p in folder.rglob("*") if p.is_file() and b"sk-live-SECRET" in p.read_bytes()]


def test_a_lab_that_puts_a_link_in_place_of_its_folder_under_serve_leaves_the_next_builds_whole(tmp_path, monkeypatch):
    """Under serve a lab may write beside its folder: it renames it and leaves a link in its place. The
    build read what it wrote through the folder itself; the next builds remove the link, not what it names."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    root = tiny_site(tmp_path / "site")
    (root / "compute/tiny.py").write_text(LAB.replace("__CODE__", "import os, pathlib\nstaging = pathlib.Path("
                                          "os.environ['TMPDIR']).parent\nos.rename(staging, staging.parent / 'old')\n"
                                          "os.symlink(os.path.dirname(os.path.dirname(__file__)), staging)"), encoding="utf-8")
    kept = KeptLabs(tmp_path / "cache")
    try:
        for said in ("saved", "saved again"):
            edit(root / "compute/tiny.py", "print('saved')" if said == "saved again" else "print('saved')\n",
                 f"print('{said}')" if said == "saved again" else "print('saved')\n")
            try:
                build(root, tmp_path / "dist", cache=tmp_path / "cache", kept=kept)
            except Exception as exc:    # noqa: BLE001 - its pages may not build; no internal error
                assert "symbolic link" not in str(exc) and type(exc).__name__ in ("BuildError", "LabFailure"), exc
    finally:
        kept.close()
    assert (root / "compute/tiny.py").is_file() and (root / "content/index.md").is_file()
