"""The checkpoint's parts that need no lab: its messages, and what it keeps of the lab's folder."""
from __future__ import annotations

import os
import socket

from sitegen.labs.checkpoint import CHECKPOINT, Checkpointer, Reporting, heard, receive_run, send_run, tell


def test_a_message_larger_than_a_socket_buffer_arrives_whole_with_its_file_descriptors():
    ours, theirs = socket.socketpair()
    read, write = os.pipe()
    cells = [("cell", "x = 1\n" * 50_000, n) for n in range(20)]        # several MB
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            send_run(theirs, (cells, "result.json"), (write,))
        finally:
            os._exit(0)
    theirs.close()
    os.close(write)
    message, fds = receive_run(ours, 2)
    os.waitpid(pid, 0)
    assert message == (cells, "result.json") and len(fds) == 1
    os.write(fds[0], b"x")               # the descriptor is the pipe's write end
    assert os.read(read, 1) == b"x"
    os.close(fds[0])
    assert receive_run(ours) == (None, [])   # the other end is closed: end of file, not an error
    ours.close()
    os.close(read)


def test_a_record_is_read_whole_and_anything_else_is_none_with_its_descriptors_closed():
    """What the host reads of a lab (labhost.py): a record as tell writes it, or None for a part of one
    or the end of file; a descriptor sent with what is no record is closed, not kept."""
    ours, theirs = socket.socketpair()
    read, write = os.pipe()
    tell(theirs, CHECKPOINT, 3, 12345, (write,))
    kind, cell, value, fds = heard(ours, 1)
    assert (kind, cell, value, len(fds)) == (CHECKPOINT, 3, 12345, 1)
    os.close(fds[0])
    socket.send_fds(theirs, [b"ckpt\x00"], [write])          # five bytes of a record, and a descriptor
    before = len(os.listdir("/proc/self/fd"))
    assert heard(ours, 1) is None
    assert len(os.listdir("/proc/self/fd")) == before       # (the one received was closed, not kept)
    theirs.close()
    assert heard(ours) is None
    for fd in (read, write):
        os.close(fd)
    ours.close()


def test_what_the_lab_wrote_is_kept_and_laid_again_in_a_folder_laid_out_anew(tmp_path):
    staging = tmp_path / "run"
    (staging / "work/inputs/a").mkdir(parents=True)
    (staging / "work/inputs/a/results.json").write_text("{}")           # laid by the build
    (staging / "work/old.txt").write_text("the build's")
    points = Checkpointer(Reporting(str(staging / "run.json"), None, None), staging, str(tmp_path), None, 0)
    (staging / "work/out").mkdir()
    (staging / "work/out/figure.png").write_bytes(b"\x89PNG...")
    (staging / "work/empty").mkdir()
    (staging / "work/old.txt").unlink()
    written = points._written()
    assert written == ({"work/out/figure.png": b"\x89PNG..."}, ["work/empty", "work/out"], ["work/old.txt"])
    # The build lays the folder out anew for the resumed run: its inputs (maybe new ones), no more.
    import shutil
    shutil.rmtree(staging)
    (staging / "work/inputs/a").mkdir(parents=True)
    (staging / "work/inputs/a/results.json").write_text('{"new": 1}')
    (staging / "work/old.txt").write_text("the build's")
    here = os.getcwd()
    try:
        points._lay(*written, here=str(staging / "work"))
        assert os.getcwd() == str(staging / "work")
    finally:
        os.chdir(here)
    assert sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*")) == [
        "work", "work/empty", "work/inputs", "work/inputs/a", "work/inputs/a/results.json", "work/out",
        "work/out/figure.png"]
    assert (staging / "work/inputs/a/results.json").read_text() == '{"new": 1}'     # the build's, as laid now
