"""An author's mistake is reported as the author's: which file, what is wrong, what to do; exit 1,
no traceback, nothing published. And nothing from outside the project is ever published."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from support import REPO, edit, own_copy, run_build, tiny_site, tree_bytes


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """The tiny site, built once for the module (its lab cache shared): each test breaks a copy."""
    base = tmp_path_factory.mktemp("good")
    root, out, cache = tiny_site(base / "site"), base / "dist", base / "cache"
    assert run_build(root, out, cache).returncode == 0
    return root, out, cache


@pytest.fixture()
def built(tmp_path, good):
    """A copy of the tiny site and of its output: a mistake must leave that output as it is."""
    root, out = tmp_path / "site", tmp_path / "dist"
    shutil.copytree(good[0], root)
    shutil.copytree(good[1], out)
    return root, out, good[2]


def fails(built, *lines: str, args=()) -> str:
    root, out, cache = built
    before = tree_bytes(out)
    result = run_build(root, out, cache, *args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    for line in lines:
        assert line in result.stderr.splitlines(), f"missing: {line}\n--- printed:\n{result.stderr}"
    assert tree_bytes(out) == before
    return result.stderr


# -- symlinks ------------------------------------------------------------------

@pytest.mark.parametrize("where", ["static/env.txt", "content/passwd.md", "templates/partials/x.html"])
def test_a_symlink_out_of_the_project_is_refused(built, where):
    root = built[0]
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / where).symlink_to("/etc/passwd")
    fails(built, f"error: {where}: a symlink to /etc/passwd, outside the project: the build publishes only the "
                 "project's own files; copy the file into the project instead")


@pytest.mark.parametrize("target, where", [(".env", "content/leak.svg"), (".git/config", "content/leak.png"),
                                           (".env", "content/data/notes.txt")])
def test_a_symlink_to_a_hidden_file_of_the_project_is_refused(built, target, where):
    """A CI checkout's .git/config holds the job's token; .env the teacher's keys: never published."""
    root = built[0]
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    (root / target).write_text("TOKEN=secret-4716\n", encoding="utf-8")
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / where).symlink_to(root / target)
    fails(built, f"error: {where}: a symlink to {target}, a hidden file or folder ({target.split('/')[0]}), "
                 "which is never a source of the course: remove the link")


@pytest.mark.parametrize("name", ["leak.svg", "leak.png", "clip.mp4"])
def test_a_file_beside_the_pages_named_as_an_image_is_published_only_if_it_is_one(built, name):
    root = built[0]
    (root / f"content/{name}").write_text("TOKEN=secret-4717\n", encoding="utf-8")
    suffix = name.rsplit(".", 1)[1]
    said = fails(built, f"error: content/{name}: is named as a {suffix} file but its bytes are not one: only "
                        "images, videos and sounds are published beside pages; rename or remove it")
    assert "secret" not in said


def test_a_dangling_symlink_is_named(built):
    root = built[0]
    (root / "static/logo.png").symlink_to("../images/missing.png")
    fails(built, "error: static/logo.png: a symlink to '../images/missing.png', which does not exist: remove it, "
                 "or point it at a file inside the project")


def test_a_symlink_inside_the_project_is_fine(built):
    root, out, cache = built
    (root / "static/icon.js").symlink_to(root / "static/literals.js")
    assert run_build(root, out, cache).returncode == 0


def test_a_lab_that_writes_a_symlink_is_refused(built):
    edit(built[0] / "compute/tiny.py", "print('saved')", "print('saved')\nimport os\nos.symlink('/etc/passwd', out / 'secret.txt')")
    fails(built, "error: compute/tiny.py: lab tiny wrote a symlink out/secret.txt -> /etc/passwd: a lab's outputs "
                 "must be files it wrote itself")


# -- encodings -------------------------------------------------------------------

@pytest.mark.parametrize("path,line", [("site.yaml", 2), ("content/index.md", 2), ("templates/page.html", 6),
                                       ("compute/tiny.py", 1)])
def test_text_that_is_not_utf8_names_the_file_and_line(built, path, line):
    file = own_copy(built[0], path)          # (a template: the course's own copy of the theme's)
    text = file.read_text(encoding="utf-8").splitlines(keepends=True)
    text.insert(line - 1, "# café\n" if path.endswith((".py", ".yaml")) else "café\n")
    file.write_bytes("".join(text).encode("latin-1", "replace"))
    stderr = fails(built)
    assert f"{path}:" in stderr and "not UTF-8 text" in stderr and "save the file as UTF-8" in stderr, stderr
    assert any(f"{path}:{n}: not UTF-8 text" in stderr for n in range(1, line + 2)), stderr


@pytest.mark.parametrize("path", ["site.yaml", "content/index.md", "templates/page.html", "compute/tiny.py"])
def test_a_byte_order_mark_is_accepted(built, path):
    root, out, cache = built
    file = own_copy(root, path)
    file.write_bytes(b"\xef\xbb\xbf" + file.read_bytes())
    result = run_build(root, out, cache)
    assert result.returncode == 0, result.stderr
    assert "\ufeff" not in (out / "index.html").read_text(encoding="utf-8")


# -- sizes, depth, YAML bombs ------------------------------------------------------

def test_a_yaml_alias_bomb_fails_in_under_a_second(built):
    root = built[0]
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    (root / "site.yaml").write_text((root / "site.yaml").read_text(encoding="utf-8") + "\n".join(lines) + "\n",
                                    encoding="utf-8")
    started = time.monotonic()
    stderr = fails(built)
    assert time.monotonic() - started < 5         # the whole build process; the parse itself is milliseconds
    assert "site.yaml:" in stderr and "aliases (*name) stand for more than 100000 values" in stderr, stderr


def test_deeply_nested_input_is_read_to_the_depth_a_parser_takes_and_the_page_built(built):
    """Emphasis, quotes and lists inside each other thousands of levels deep: CommonMark's parser reads
    them to the depth it takes (markdown-it's maxNesting) and the rest as text; the page is built."""
    root = built[0]
    with open(root / "content/index.md", "a", encoding="utf-8") as page:
        page.write("\n\n" + "*" * 5000 + "深" + "*" * 5000 + "\n\n" + ">" * 5000 + " 引\n\n"
                   + "".join("  " * k + "- 层\n" for k in range(400)))
    result = run_build(root, built[1], built[2])
    assert result.returncode == 0, result.stderr
    assert "深" in (built[1] / "index.html").read_text(encoding="utf-8")


def test_a_huge_source_file_is_named(built):
    root = built[0]
    with open(root / "content/index.md", "a", encoding="utf-8") as page:
        page.write("很长的一段。" * 600_000)
    stderr = fails(built)
    assert "content/index.md: 10 MiB is far too large for a source file (at most 8 MiB)" in stderr


# -- what labs write -----------------------------------------------------------------

def test_a_lab_writing_invalid_json_is_named(built):
    edit(built[0] / "compute/tiny.py", "(out / 'results.json').write_text(json.dumps(",
         "(out / 'results.json').write_text('{not json' + json.dumps(")
    stderr = fails(built)
    assert "error: compute/tiny.py: lab tiny wrote a results.json that is not valid JSON (" in stderr


# -- the machine: full disk, read-only folder, missing packages ---------------------

def _private_mount(script: str, tmp_path) -> subprocess.CompletedProcess:
    """Run `script` in a mount namespace of its own (as an unprivileged user namespace allows)."""
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("this kernel allows no user and mount namespace (unshare -rm)")
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1790000000"}
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env,
                          timeout=300, cwd=tmp_path)


@pytest.mark.parametrize("mount,advice", [
    ("size=64k", "No space left on device: the disk is full: free some space and build again"),
    ("ro", "Read-only file system: the file system is read-only: build into a writable folder (--out, --cache)")])
def test_a_full_disk_or_read_only_folder_names_the_folder_and_says_what_to_do(built, tmp_path, mount, advice):
    root, out, cache = built
    (root / "static/padding.bin").write_bytes(os.urandom(256 * 1024))    # more than 64k, whatever static/ holds
    (tmp_path / "small").mkdir()
    result = _private_mount(f"mount -t tmpfs -o {mount} tmpfs small && {sys.executable} {REPO / 'build.py'} "
                            f"--root {root} --out small/dist --cache {cache}", tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert advice in result.stderr and "small" in result.stderr.split(advice)[0], result.stderr


@pytest.mark.parametrize("command,module,package", [("build", "yaml", "PyYAML"), ("serve", "watchfiles", "watchfiles")])
def test_a_missing_package_is_named_with_the_install_command(tmp_path, command, module, package):
    root = tiny_site(tmp_path / "site")
    shadow = tmp_path / "shadow"                  # a folder on the path that hides the package
    shadow.mkdir()
    (shadow / f"{module}.py").write_text(f"raise ModuleNotFoundError('No module named ' + {module!r}, name={module!r})\n",
                                         encoding="utf-8")
    result = subprocess.run([sys.executable, str(REPO / "build.py"), command, "--root", str(root), "--out",
                             str(tmp_path / "dist")], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(shadow)})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert (f"error: the Python package {package} (module '{module}') is not installed: run `pip install -r "
            "requirements.txt` in the project's virtualenv (see README.md)") in result.stderr


def test_a_source_is_read_again_only_when_its_state_changed(tmp_path):
    """The snapshot hashes a file whose state (size, times, inode) is as the last one recorded
    only if that state had settled; a rewrite shows in its ctime even with its mtime set back."""
    import hashlib

    from sitegen.core.sources import take_snapshot, source_files
    from sitegen.core.stored import SETTLED_NS
    page = tmp_path / "content/a.md"
    page.parent.mkdir()
    page.write_text("---\ntitle: 甲\n---\n一。\n", encoding="utf-8")
    files = source_files(tmp_path)
    assert "content/a.md" not in take_snapshot(files)[1]         # just written: no state trusted yet
    time.sleep(SETTLED_NS / 1e9)
    hashes, states = take_snapshot(files)
    assert hashes["content/a.md"] == hashlib.sha256(page.read_bytes()).hexdigest()
    forged = {"content/a.md": ["f" * 64, *states["content/a.md"][1:]]}
    assert take_snapshot(files, forged)[0]["content/a.md"] == "f" * 64           # not read: the state says so
    before = os.stat(page)
    page.write_text("---\ntitle: 乙\n---\n二。\n", encoding="utf-8")        # same size, and same mtime:
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert take_snapshot(files, forged)[0]["content/a.md"] == hashlib.sha256(page.read_bytes()).hexdigest()


# -- the theme -----------------------------------------------------------------------

def test_a_course_s_own_template_or_static_file_replaces_the_theme_s_and_removing_it_restores_the_theme(built):
    root, out, cache = built
    first = tree_bytes(out)
    edit(own_copy(root, "templates/page.html"), "</footer>", "<p>本课程自己的页脚</p></footer>")
    (root / "static/style.css").write_text("body { color: #123; }\n", encoding="utf-8")
    assert run_build(root, out, cache).returncode == 0
    css = [p for p in (out / "assets").glob("style.*.css")]
    assert "本课程自己的页脚" in (out / "index.html").read_text(encoding="utf-8")
    assert len(css) == 1 and css[0].read_text(encoding="utf-8").startswith("body{color:#123}pre{")   # (and the highlighting)
    (root / "templates/page.html").unlink()
    (root / "static/style.css").unlink()
    assert run_build(root, out, cache).returncode == 0
    assert tree_bytes(out) == first                              # the theme's again, byte for byte


def test_a_picture_in_another_picture_s_format_is_published_with_a_warning(built):
    """Real repositories hold a PNG named .jpg (jrjohansson's lectures): browsers show it by its bytes."""
    root, out, cache = built
    png = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360"
                        "6060f80f0000010100005a4d6e4b0000000049454e44ae426082")
    (root / "content/screenshot.jpg").write_bytes(png)
    result = run_build(root, out, cache)
    assert result.returncode == 0, result.stderr
    assert "warning: content/screenshot.jpg: it is a PNG image named .jpg: browsers show it; rename it to .png" \
        in result.stderr
    assert (out / "screenshot.jpg").read_bytes() == png
