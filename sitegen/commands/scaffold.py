"""`python build.py new site DIR`, `new lab ID` and `new page PATH`: starting files that build at once.

The starters are data (sitegen/commands/starters/), commented for the teacher. Nothing existing is
overwritten; site.yaml gets the lab's entry appended to its `labs:` list, as text, so its
comments and order stay, and is read back: if it no longer loads, it is restored. NewFiles
is that discipline, for `import` too.
"""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

from ..project.config import ENGLISH_VOCABULARY, SLUG, load_config, vocabulary_file
from ..core.errors import BuildError, Problem

STARTERS = Path(__file__).with_name("starters")
PAGE_PATH = re.compile(r"^(?:[a-z0-9][a-z0-9_-]*/)*[a-z0-9][a-z0-9_-]*$")


def starter(rel: str, language: str) -> Path:
    """A starter file in the course's `language`: starters/en/ holds the English ones of those with
    prose (a language that is not Chinese gets them, as it gets the English interface)."""
    english = STARTERS / "en" / rel
    return english if vocabulary_file(language) == ENGLISH_VOCABULARY and english.is_file() else STARTERS / rel


def _fill(name: str, language: str, **values: str) -> str:
    text = starter(name, language).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"__{key.upper()}__", value)
    return text


class NewFiles:
    """Files written for the author, all or nothing: nothing existing is overwritten, site.yaml
    gets lab entries appended as text (its comments and order stay), and `undo()` removes
    what was written (and the folders made for it) and puts site.yaml back as it was."""

    def __init__(self, root: Path):
        self.root, self.made, self.folders, self.config = root, [], [], None
        self.replaced: dict[str, bytes] = {}        # rel -> what it held, put back by undo()

    def replace(self, rel: str, data: str | bytes) -> None:
        """Write over a file this tool wrote before (an import run again), keeping what it held for undo()."""
        path = self.root / rel
        if path.exists() and rel not in self.replaced:
            self.replaced[rel] = path.read_bytes()
        elif not path.exists():
            return self.create(rel, data)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        if rel not in self.made:
            self.made.append(rel)

    def create(self, rel: str, data: str | bytes) -> None:
        path = self.root / rel
        if path.exists():
            raise BuildError(Problem(rel, 0, "exists already: choose another name (nothing was written)"))
        missing = [p for p in reversed(path.parents) if not p.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        self.folders += missing
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        self.made.append(rel)

    def add_labs(self, entries: list[str]) -> None:
        config = self.root / "site.yaml"
        text = self.config = self.config if self.config is not None else config.read_text(encoding="utf-8")
        for entry in entries:
            text = _with_lab_entry(text, entry)
        config.write_text(text, encoding="utf-8")

    def undo(self) -> None:
        if self.config is not None:
            (self.root / "site.yaml").write_text(self.config, encoding="utf-8")
        for rel in reversed(self.made):
            if rel in self.replaced:
                (self.root / rel).write_bytes(self.replaced[rel])
            else:
                (self.root / rel).unlink(missing_ok=True)
        for folder in reversed(self.folders):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()


def lab_entry(lab_id: str, title: str, script: str, page: str, notebook: str, display: str = "") -> str:
    """A lab's entry in site.yaml, as text; `page` is its path in content/."""
    return (f"  - id: {lab_id}\n    title: {json.dumps(title, ensure_ascii=False)}\n    script: {script}\n"
            f"    images: {lab_id}/images\n    downloads: {lab_id}/materials\n"
            f"    notebook: {lab_id}/materials/{notebook}\n    page: {page}\n"
            + (f"    display: {display}\n" if display else "") + "    timeout: 600\n")


def page_path(path: str) -> str:
    """A page's path in content/ (as given on the command line), checked: `notes/week1`."""
    path = path.removeprefix("content/").removesuffix(".md")
    if not PAGE_PATH.match(path):
        raise BuildError(Problem(path, 0, "a page path is lowercase ASCII names joined by /, e.g. notes/week1"))
    return path


def new_page(root: Path, path: str) -> list[str]:
    """content/PATH.md, a page with a title and one section."""
    path = page_path(path)
    rel = f"content/{path}.md"
    # (quoted: a page named 404 has the title "404", text, not the number YAML would read)
    NewFiles(root).create(rel, _fill("page.md", load_config(root).language,
                                     title=json.dumps(path.rsplit("/", 1)[-1], ensure_ascii=False)))
    return [rel]


def _with_lab_entry(text: str, entry: str) -> str:
    """site.yaml's text with `entry` added at the end of its top-level `labs:` list (or a new one)."""
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if re.match(r"^labs:\s*\[\s*\]\s*(#.*)?$", line):          # `labs: []`: a block list from here
            lines[number] = "labs:\n"
        elif re.match(r"^labs:\s*\S", line) and not re.match(r"^labs:\s*#", line):
            raise BuildError(Problem("site.yaml", number + 1, "labs: is written on one line: write it as a list "
                                                              "of `- id: ...` entries, one per line, to add to it"))
    text = "".join(lines)
    start = next((i for i, line in enumerate(lines) if re.match(r"^labs:\s*(#.*)?$", line)), None)
    if start is None:
        return text.rstrip("\n") + "\n\nlabs:\n" + entry
    end = start + 1
    for i in range(start + 1, len(lines)):
        if lines[i].strip() and not lines[i].lstrip().startswith("#") and not lines[i][0].isspace():
            break                                   # the next top-level key
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            end = i + 1
    lines[end:end] = ["\n" if lines[end - 1].strip() else "", entry]
    return "".join(lines)


def check_new_lab(cfg, lab_id: str) -> None:
    if not SLUG.match(lab_id):
        raise BuildError(Problem("site.yaml", 0, f"a lab id is lowercase ASCII letters, digits and '-', not {lab_id!r}"))
    if cfg.lab(lab_id):
        raise BuildError(Problem("site.yaml", cfg.lab(lab_id).line, f"lab {lab_id!r} exists already"))
    module = lab_id.replace("-", "_")
    if module in sys.stdlib_module_names or importlib.util.find_spec(module) is not None:
        raise BuildError(Problem("site.yaml", 0, f"lab id {lab_id!r} would make compute/{module}.py, which every "
                                                 f"lab would import instead of the module {module!r} it means: "
                                                 f"choose another id (--id {lab_id}-lab)"))


def new_lab(root: Path, lab_id: str, page: str | None = None, title: str | None = None) -> list[str]:
    """compute/ID.py, its page, and its entry in site.yaml."""
    cfg = load_config(root)
    check_new_lab(cfg, lab_id)
    made, entry = _lab_files(lab_id, page_path(page or lab_id), title or lab_id, cfg.language)
    files = NewFiles(root)
    try:
        for rel, text in made.items():
            files.create(rel, text)
        files.add_labs([entry])
        load_config(root)
    except BaseException:
        files.undo()
        raise
    return [*made, "site.yaml"]


def _lab_files(lab_id: str, page: str, title: str, language: str) -> tuple[dict[str, str], str]:
    """A new lab's script and page (path -> text), and its entry in site.yaml."""
    script = f"compute/{lab_id.replace('-', '_')}.py"
    return ({script: _fill("lab.py", language, id=lab_id, page=f"{page}.md", script=script),
             f"content/{page}.md": _fill("lab.md", language, id=lab_id, title=json.dumps(title, ensure_ascii=False),
                                         script=script)},
            lab_entry(lab_id, title, script, f"{page}.md", f"{lab_id}.ipynb"))


SITE = STARTERS / "site"        # a course, as `new site` writes it (its text's __NAMES__ filled in)
SET_UP = (".venv", ".git")      # what a folder may hold already: the virtualenv the generator came in, git


def new_site(folder: Path, title: str | None = None, language: str = "zh-CN") -> tuple[list[str], list[str]]:
    """A course of its own in `folder` (new, or empty) that builds under --strict at once: site.yaml
    with every key commented, a home page (the lecture's map), a 404 page, a guide, a lab and its page,
    requirements.txt naming this generator, the deploy workflow, .ci/pages-build and a README.
    Returns the files written and notes for the teacher; on any failure nothing is left."""
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(p.name not in SET_UP for p in folder.iterdir())):
        raise BuildError(Problem(str(folder), 0, "is not an empty folder: name a new one (nothing was written)"))
    import yaml
    defaults = yaml.safe_load(starter("new-site.yaml", language).read_text(encoding="utf-8"))
    title = title or defaults["title"]
    project = re.sub(r"[^a-z0-9]+", "-", folder.resolve().name.lower()).strip("-")[:58].strip("-") or "my-course"
    requirement, notes = generator_requirement()
    lab, entry = _lab_files(defaults["lab"]["id"], defaults["lab"]["id"], defaults["lab"]["title"], language)

    def quoted(text: str) -> str:             # a YAML value, whatever the title holds (': ', '#', quotes)
        return json.dumps(text, ensure_ascii=False)
    values = {"TITLE_YAML": quoted(title), "DESCRIPTION_YAML": quoted(defaults["description"].format(title=title)),
              "HOME_YAML": quoted(defaults["home"].format(title=title)), "TITLE": title, "PROJECT": project,
              "GENERATOR": requirement, "LANGUAGE": language, "GUIDE_NAV": defaults["nav"]["guide"],
              "LAB_NAV": defaults["nav"]["lab"], "NEXT_NAV": defaults["nav"]["next"]}
    starters = {p.relative_to(SITE).as_posix(): p for p in SITE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    made = sorted({*starters, *lab})
    files = NewFiles(folder)                  # (all or nothing: the folders it made go too)
    try:
        for rel in made:
            text = lab[rel] if rel in lab else starter(f"site/{rel}", language).read_text(encoding="utf-8")
            for key, value in values.items():
                text = text.replace(f"__{key}__", value)
            files.create(rel, text)
            if rel in starters:
                (folder / rel).chmod(starters[rel].stat().st_mode & 0o777 | 0o644)
        files.add_labs([entry])
        load_config(folder)
    except BaseException:
        files.undo()
        raise
    return made, notes


DISTRIBUTION = "computed-course"     # the generator on PyPI (pyproject.toml: `sitegen` is another project's there)


def generator_requirement(here: Path = Path(__file__).resolve().parents[2]) -> tuple[str, list[str]]:
    """requirements.txt's line for this generator (`here`: the folder that holds sitegen/), as exactly
    as Cloudflare Pages' builder can install it: the release installed from a package index, by name and
    version; a checkout's public repository at its commit; else how pip installed it (PEP 610's
    direct_url.json); and notes. A folder of this machine is named only with a note that says so."""
    import subprocess
    from importlib import metadata
    if (here / "pyproject.toml").is_file():               # run from a checkout
        def git(*args):
            try:
                done = subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True, timeout=30)
            except OSError:
                return ""
            return done.stdout.strip() if done.returncode == 0 else ""
        url, commit = git("remote", "get-url", "origin"), git("rev-parse", "HEAD")
        if url.startswith(("https://", "ssh://", "git@")) and commit:
            return f"{DISTRIBUTION} @ git+{url}@{commit}", []
        return _local(here.as_uri())
    try:
        installed = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return _local(here.as_uri())
    direct = json.loads(installed.read_text("direct_url.json") or "null")
    if direct is None:                                    # from an index: PyPI, as Pages' builder installs it
        return f"{DISTRIBUTION}=={installed.version}", []
    if "vcs_info" in direct:
        return f"{DISTRIBUTION} @ git+{direct['url']}@{direct['vcs_info']['commit_id']}", []
    if direct["url"].startswith("file:"):
        return _local(direct["url"])
    return f"{DISTRIBUTION} @ {direct['url']}", []


def _local(url: str) -> tuple[str, list[str]]:
    return f"{DISTRIBUTION} @ {url}", [
        f"requirements.txt names the generator by a path on this machine ({url}), which Cloudflare Pages and "
        f"GitHub cannot reach, and .ci/pages-build refuses: before you deploy, name a release instead "
        f"({DISTRIBUTION}=={_version()}, once it is on PyPI) or the generator's public repository at a commit "
        f"({DISTRIBUTION} @ git+https://github.com/OWNER/REPO@COMMIT)"]


def _version() -> str:
    """This generator's version, as pyproject.toml gives it (read from the checkout, else the installed one)."""
    from importlib import metadata
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if pyproject.is_file():
        import tomllib
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "VERSION"
