"""A lab's cache keys (sitegen/labs/labkeys.py): change one thing it follows from, see its key change;
change nothing, and nothing is parsed or hashed again."""
from __future__ import annotations

import pytest

from support import edit, tiny_site


def _key(root):
    from sitegen.labs.labkeys import lab_key
    from sitegen.project.config import load_config
    cfg = load_config(root)
    return lab_key(cfg, cfg.labs[0])


def _harness_files():
    from sitegen.core.memo import GENERATOR
    from sitegen.labs.labkeys import harness_files
    return harness_files(GENERATOR)


def test_the_harness_is_the_labs_package_and_what_itgenerator_imports():
    from support import generator_imports          # (the import graph, read by Python's own parser)
    files = _harness_files()
    assert {"labs/labrun.py", "labs/labipython.py", "project/cells.py", "project/nbsource.py", "core/sources.py"} <= set(files)
    assert not [f for f in files if f.startswith(("pages/", "render/", "publish/", "commands/"))]
    graph, closure = generator_imports(), set()
    todo = [module for module in graph if module.startswith("labs/")]
    while todo:
        if (module := todo.pop()) not in closure:
            closure.add(module)
            todo += graph.get(module, ())
    assert {f[:-3] for f in files} - {"labs/__init__"} == closure - {"labs/__init__"}


@pytest.mark.parametrize("harness", ["labs/compute.py", "labs/labrun.py", "labs/labbackend.py", "project/cells.py",
                                     "core/sources.py"])
def test_the_lab_key_follows_each_file_of_the_harness(tmp_path, monkeypatch, harness):
    import shutil

    from sitegen.core import memo
    from sitegen.labs import labkeys
    root = tiny_site(tmp_path / "site")
    before = _key(root)
    copy = tmp_path / "sitegen"
    shutil.copytree(memo.GENERATOR, copy)
    (copy / harness).write_text((copy / harness).read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    monkeypatch.setattr(labkeys, "GENERATOR", copy)
    assert _key(root) != before


@pytest.mark.parametrize("package", ["python", "numpy", "matplotlib", "pillow"])
def test_the_lab_key_follows_each_version_labs_run_with(tmp_path, monkeypatch, package):
    from sitegen.core import memo
    root = tiny_site(tmp_path / "site")
    before = _key(root)
    real = memo._environment()
    monkeypatch.setattr(memo, "_environment", lambda: tuple((k, "0.0.1" if k == package else v) for k, v in real))
    assert _key(root) != before


def test_the_cache_key_follows_project_modules_imported_anywhere_in_a_lab(tmp_path):
    from sitegen.labs.labkeys import _local_imports
    from sitegen.core.memo import Memo
    (tmp_path / "helpers").mkdir()
    for name in ("top.py", "in_function.py", "in_try.py", "in_match.py", "helpers/__init__.py", "helpers/deep.py"):
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    lab = tmp_path / "lab.py"
    lab.write_text("import numpy, top\n"
                   "def f():\n    import in_function\n"
                   "try:\n    pass\nexcept ImportError:\n    from helpers import deep\nfinally:\n    import in_try\n"
                   "match 1:\n    case 1:\n        import in_match\n", encoding="utf-8")
    found: set = set()
    _local_imports(lab, tmp_path, found, Memo(None))
    assert {p.relative_to(tmp_path).as_posix() for p in found} == {
        "lab.py", "top.py", "in_function.py", "in_try.py", "in_match.py", "helpers/__init__.py", "helpers/deep.py"}



def test_an_unchanged_lab_script_is_not_parsed_again_for_its_key(tmp_path, monkeypatch):
    """A lab's key follows the modules it imports; what it imports is remembered under the script's
    hash, so a build after a prose edit parses no lab script; an edited script is parsed again."""
    import ast

    from sitegen.labs import labkeys
    from sitegen.project.config import load_config
    from sitegen.core.memo import Memo
    root = tiny_site(tmp_path / "site")
    (root / "compute/helper.py").write_text("FACTOR = 2\n", encoding="utf-8")
    edit(root / "compute/tiny.py", "import json\n", "import json\nimport helper\n")
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(labkeys.ast, "parse", lambda data, *a, **k: parsed.append(data) or real_parse(data, *a, **k))
    cfg, memo = load_config(root), Memo(tmp_path / "memo")
    lab = cfg.lab("tiny")
    first = labkeys.source_key(cfg, lab, memo=memo)
    assert len(parsed) == 2                                 # the script and the project module it imports
    assert labkeys.source_key(cfg, lab, memo=Memo(tmp_path / "memo")) == first and len(parsed) == 2
    (root / "compute/helper.py").write_text("FACTOR = 3\n", encoding="utf-8")
    assert labkeys.source_key(cfg, lab, memo=Memo(tmp_path / "memo")) != first      # the module's bytes count
    assert len(parsed) == 3                                 # and only the changed one is parsed
