"""Pages and lab files as rendered: a remembered notebook never outlives the computation it shows,
and a figure opens at full size, with its narrow variant on phones."""
from __future__ import annotations

import json

from support import EPOCH, REPO, run_build, tiny_site


def test_a_recomputed_lab_gives_a_notebook_with_the_new_computation_time(tmp_path):
    root, out, cache = tiny_site(tmp_path / "site"), tmp_path / "dist", tmp_path / "cache"
    assert run_build(root, out, cache).returncode == 0
    first = json.loads((out / "materials/tiny.ipynb").read_text(encoding="utf-8"))["metadata"]["provenance"]
    import os
    import subprocess
    import sys
    later = str(int(EPOCH) + 86400)
    subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out), "--cache",
                    str(cache), "--no-cache"], check=True, capture_output=True,
                   env={**os.environ, "SOURCE_DATE_EPOCH": later})
    second = json.loads((out / "materials/tiny.ipynb").read_text(encoding="utf-8"))["metadata"]["provenance"]
    results = json.loads((out / "materials/results.json").read_text(encoding="utf-8"))["provenance"]
    assert first["computed_at"] != second["computed_at"] == results["computed_at"]


def test_a_figure_opens_at_full_size_and_its_narrow_variant_is_shown_on_phones(tmp_path):
    """A lab that also saves NAME.narrow.png (its panels stacked) gets it shown below 40rem; the figure
    links to its full-size PNG; a narrow variant without its figure is an error naming the lab."""
    import re

    from support import edit, run_build, tiny_site
    root = tiny_site(tmp_path / "site")
    edit(root / "compute/tiny.py", "fig.savefig(out / 'line.png')",
         "fig.savefig(out / 'line.png')\nfig.set_size_inches(2, 4); fig.savefig(out / 'line.narrow.png')")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "dist/index.html").read_text(encoding="utf-8")
    assert re.search(r'<a class="figure-full" href="images/figure-01\.png"[^>]*><picture><source '
                     r'media="\(max-width: 40rem\)" srcset="images/figure-01\.narrow\.png" width="\d+" height="\d+">'
                     r'<img src="images/figure-01\.png"', page)
    assert (tmp_path / "dist/images/figure-01.narrow.png").is_file()
    assert not (tmp_path / "dist/images/figure-02.png").exists()           # not a figure of its own

    edit(root / "compute/tiny.py", "fig.savefig(out / 'line.png')\n", "")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1
    assert "site.yaml:7: lab tiny saved line.narrow.png, a narrow variant of line.png, which it did not save" \
        in result.stderr


def test_a_lecture_links_the_course_s_other_lectures_by_their_sites_addresses(tmp_path):
    """Each lecture is a site (its own Pages project); nav's `url` names another's address."""
    from helpers import Elements
    from support import edit
    root = tiny_site(tmp_path / "site")
    edit(root / "site.yaml", "labs:\n", "nav:\n  - title: 本讲\n    page: index.md\n  - title: 第四讲\n"
                                        "    url: https://lecture-04.pages.dev/\n\nlabs:\n")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache", "--strict")
    assert result.returncode == 0, result.stderr
    links = Elements((tmp_path / "dist/index.html").read_text(encoding="utf-8")).find("a")
    nav = [(e[2], e[1]) for e in links if e[2] in ("本讲", "第四讲")]
    assert nav == [("本讲", {"href": "./", "aria-current": "page"}),
                   ("第四讲", {"href": "https://lecture-04.pages.dev/", "rel": "noopener"})]
    edit(root / "site.yaml", "    url: https://lecture-04.pages.dev/\n", "    url: lecture-04\n    page: index.md\n")
    result = run_build(root, tmp_path / "dist", tmp_path / "cache")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "nav[1].url is another site's address, https://host/path, given instead of a page" in result.stderr
