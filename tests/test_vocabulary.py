"""Vocabulary is data: a lab with its own axes, download types and words builds with no change to
sitegen/ or templates/; what the vocabulary gets wrong is named in site.yaml."""
from __future__ import annotations

import hashlib

from support import REPO, edit, run_build, tiny_site

from sitegen.project.config import DEFAULT_VOCABULARY


def _tree_digest(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def test_a_lab_with_its_own_axes_downloads_and_words_needs_no_change_to_the_generator(tmp_path):
    generator = _tree_digest(REPO / "sitegen")
    root = tiny_site(tmp_path / "site")
    edit(root / "site.yaml", "labs:\n", "vocabulary:\n  axes:\n    time: 时间步 {}\n    feature: 特征 {}\n"
         "  downloads:\n    dat: 原始采样数据\n  words:\n    home: 课程首页\n\nlabs:\n")
    edit(root / "site.yaml", "    page: index.md\n", "    page: index.md\n    describe:\n      notes.txt: 实验记录\n")
    edit(root / "compute/tiny.py", "print('saved')", "(out / 'notes.txt').write_text('记录')\n"
         "(out / 'samples.dat').write_bytes(b'1 2 3')\n(out / 'extra.bin').write_bytes(b'x')\nprint('saved')")
    edit(root / "content/index.md", '::: table x axes=row,column caption="x 的值"',
         '::: table x axes=time,feature caption="x 的值"')
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    assert "<th scope=\"row\">时间步 1</th>" in page and "<th scope=\"col\">特征 2</th>" in page
    assert ">notes.txt</a> <span class=\"download-note\">实验记录" in page              # the lab's own word
    assert ">samples.dat</a> <span class=\"download-note\">原始采样数据" in page       # the site's, by type
    assert ">extra.bin</a> <span class=\"download-note\">本次计算写出的文件" in page   # anything else
    assert ">results.json</a> <span class=\"download-note\">本次计算的结果（完整精度）及来源信息" in page
    assert "课程首页" in (tmp_path / "dist/404.html").read_text(encoding="utf-8")
    assert "随机种子" not in page                                   # the tiny lab names no seed
    assert _tree_digest(REPO / "sitegen") == generator


def test_the_generator_holds_no_interface_word_outside_its_vocabulary():
    """Every word of the interface is in sitegen/project/vocabulary.yaml: no Chinese is left in the strings of
    the generator's code (docstrings and comments aside) or in its templates (a lab's widget keeps
    its words in its own script)."""
    import ast
    import re
    chinese = re.compile(r"[\u4e00-\u9fff]")
    offenders = []
    for path in sorted((REPO / "sitegen").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        offenders += [f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                      if isinstance(node, ast.Constant) and isinstance(node.value, str)
                      and id(node) not in docstrings and chinese.search(node.value)]
    for path in sorted([*(REPO / "sitegen/theme/templates").rglob("*.html"), *(REPO / "sitegen/theme/static").rglob("*.js")]):
        if chinese.search(path.read_text(encoding="utf-8")):
            offenders.append(str(path.relative_to(REPO)))
    assert offenders == []
    assert "首页" in DEFAULT_VOCABULARY.read_text(encoding="utf-8")


def test_the_english_vocabulary_has_every_word_the_chinese_one_has_with_the_same_names_filled_in():
    import yaml
    from string import Formatter
    from sitegen.project.config import ENGLISH_VOCABULARY
    chinese, english = (yaml.safe_load(path.read_text(encoding="utf-8")) for path in (DEFAULT_VOCABULARY, ENGLISH_VOCABULARY))
    assert {part: set(words) for part, words in chinese.items()} == {part: set(words) for part, words in english.items()}

    def names(text: str) -> set:
        return {name for _, name, _, _ in Formatter().parse(text) if name is not None}
    assert [key for key in chinese["words"] if names(chinese["words"][key]) != names(english["words"][key])] == []
    assert [key for key in english["words"] if hasattr(dict, key)] == []      # (a template reads ctx.words.KEY)


def test_a_new_english_course_builds_strict_and_shows_no_chinese(tmp_path):
    """`new site --language en`: English starters and the English interface; nothing Chinese in any file
    it publishes, the copy button's and search's words included."""
    import re
    import subprocess
    import sys
    made = subprocess.run([sys.executable, str(REPO / "build.py"), "new", "site", str(tmp_path / "course"), "--language", "en",
                           "--title", "Linear models"], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    result = run_build(tmp_path / "course", tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    chinese = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
    published = {p.relative_to(tmp_path / "dist").as_posix(): p.read_text(encoding="utf-8", errors="replace")
                 for p in (tmp_path / "dist").rglob("*") if p.is_file() and p.suffix in (".html", ".json", ".ipynb", ".js")}
    assert [rel for rel, text in published.items() if chinese.search(text)] == []
    page = published["lab01.html"]
    assert '<html lang="en">' in page and 'data-copy="Copy"' in page and 'data-found="{n} pages found"' in page
    assert "Lab 1 · Five points to start with" in page and "Output · " in page
