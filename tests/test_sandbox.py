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
