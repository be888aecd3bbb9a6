"""A book brought whole into content/ (sitegen/project/books.py): its pages read as they are, and its
tool's settings (Jupyter Book's _toc.yml and _config.yml, Quarto's _quarto.yml) said in a warning with
the lines of site.yaml that say the same here."""
from __future__ import annotations

from helpers import Elements
from support import edit, run_build, tiny_site

TOC = """format: jb-book
root: intro
chapters:
- file: markdown
- file: notebooks/one
  sections:
  - file: quarto
"""
CONFIG = """title: My sample book
author: The Jupyter Book Community
bibtex_bibfiles:
  - references.bib
execute:
  execute_notebooks: force
  allow_errors: true
parse:
  myst_substitutions:
    course: Linear algebra
"""
QUARTO = """project:
  type: book
book:
  title: "A Quarto book"
  chapters:
    - intro.md
    - part: "Part one"
      chapters:
        - markdown.md
        - quarto.qmd
bibliography: references.bib
lang: en
"""


def a_book(tmp_path):
    root = tiny_site(tmp_path / "site")
    book = root / "content"
    (book / "intro.md").write_text("# Welcome\n\n```{tableofcontents}\n```\n\nSee {doc}`markdown`.\n", encoding="utf-8")
    (book / "markdown.md").write_text("# Markdown files\n\nBack to {doc}`/intro`.\n", encoding="utf-8")
    (book / "notebooks").mkdir()
    (book / "notebooks/one.md").write_text("# One\n\nA page.\n", encoding="utf-8")
    (book / "quarto.qmd").write_text("---\ntitle: Quarto\n---\n\nNo code.\n", encoding="utf-8")
    (book / "references.bib").write_text("@book{k, author = {A}, title = {B}, year = {2020}}\n", encoding="utf-8")
    return root


def test_a_jupyter_book_s_pages_build_and_its_settings_are_said_as_site_yaml_would_say_them(tmp_path):
    root = a_book(tmp_path)
    (root / "content/_toc.yml").write_text(TOC, encoding="utf-8")
    (root / "content/_config.yml").write_text(CONFIG, encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert ("warning: content/_toc.yml:1: Jupyter Book's table of contents, which this site does not read (its settings "
            "are site.yaml's): its order of pages is `sequence: [intro.md, markdown.md, notebooks/one.md, quarto.qmd]`; "
            "delete it, or keep it outside content/ for that tool") in result.stderr
    assert ("warning: content/_config.yml:1: Jupyter Book's settings, which this site does not read (its settings are "
            "site.yaml's): its title is `site: title: \"My sample book\"`; its BibTeX files are `site: bibliography: "
            "[references.bib]`; its substitutions (course) are said in the front matter of each page that uses them "
            "(`substitutions:`); a notebook whose errors are shown says `allow_errors: true` in its own front matter"
            ) in result.stderr
    assert not (root / "dist/_toc.yml").exists() and not (root / "dist/_config.yml").exists()
    intro = Elements((root / "dist/intro.html").read_text(encoding="utf-8"))
    assert [e[2] for e in intro.find("h1")] == ["Welcome"]
    assert "::: materials" not in intro.find("main")[0][2] and "{tableofcontents}" not in intro.find("main")[0][2]
    assert intro.find("section", **{"class": "materials"}) and not intro.find("span", **{"class": "material-title"})
    assert [(e[1]["href"], e[2]) for e in intro.find("a") if e[1].get("href") == "markdown"] == [("markdown", "Markdown files")]
    # The order said, pasted into site.yaml: the book's pages are the course's, in its order, and its
    # settings files kept outside content/ say nothing more.
    edit(root / "site.yaml", "site:\n", "site:\n  bibliography: [references.bib]\n")
    with (root / "site.yaml").open("a", encoding="utf-8") as config:
        config.write("sequence: [intro.md, markdown.md, notebooks/one.md, quarto.qmd]\n")
    for name in ("_toc.yml", "_config.yml"):
        (root / "content" / name).rename(root / name)
    result = run_build(root, root / "dist", root / ".cache", "--strict")
    assert result.returncode == 0, result.stderr
    markdown = Elements((root / "dist/markdown.html").read_text(encoding="utf-8"))
    assert [(e[1]["href"], e[1]["rel"]) for e in markdown.find("a") if e[1].get("rel") in ("prev", "next")] == [
        ("intro", "prev"), ("notebooks/one", "next")]
    intro = Elements((root / "dist/intro.html").read_text(encoding="utf-8"))
    assert [e[2] for e in intro.find("span", **{"class": "material-title"})] == ["Welcome", "Markdown files", "One", "Quarto"]


def test_a_quarto_book_s_settings_are_said_as_site_yaml_would_say_them(tmp_path):
    root = a_book(tmp_path)
    (root / "content/_quarto.yml").write_text(QUARTO, encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 0, result.stderr
    assert ("warning: content/_quarto.yml:1: Quarto's settings, which this site does not read (its settings are "
            "site.yaml's): its order of pages is `sequence: [intro.md, markdown.md, quarto.qmd]`; its title is "
            "`site: title: \"A Quarto book\"`; its BibTeX files are `site: bibliography: [references.bib]`; its "
            "language is `site: language: en`; delete it") in result.stderr


def test_a_book_s_home_page_beside_the_course_s_is_named_with_what_to_do(tmp_path):
    root = tiny_site(tmp_path / "site")
    (root / "content/index.qmd").write_text("---\ntitle: The book\n---\n\nWelcome.\n", encoding="utf-8")
    result = run_build(root, root / "dist", root / ".cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert ("content/index.qmd: two pages write index.html: this one and content/index.md (a book's page and the "
            "course's, or a notebook and a page of the same name): delete one, or publish one elsewhere (front matter "
            "`url:`)") in result.stderr
