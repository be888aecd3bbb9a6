"""The built site as Cloudflare Pages serves it, through its own emulator (wrangler pages dev)."""
from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

from helpers import Elements

from support import GOLDEN, get
from sitegen.render.deploy import SECURITY

SITE = "https://codingai-lec02.pages.dev"


def follow(port: int, path: str, hops: int = 1):
    """GET, following at most `hops` redirects; returns (response, redirects taken)."""
    response = get(port, path)
    taken = 0
    while response.status in (301, 302, 307, 308):
        taken += 1
        assert taken <= hops, f"{path}: more than {hops} redirect(s)"
        response = get(port, response.getheader("Location"))
    return response, taken


def seed_site_links() -> list[str]:
    notebook = json.loads((GOLDEN / "seed-lab09.ipynb").read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in notebook["cells"])
    links = sorted(set(re.findall(re.escape(SITE) + r"[^)\s\"]*", text)))
    assert len(links) >= 8
    return [link[len(SITE):] for link in links]


def test_every_page_answers_200_at_its_pretty_url(served, site):
    for html_file in sorted(site.rglob("*.html")):
        rel = html_file.relative_to(site).as_posix()
        if rel == "404.html":
            continue
        url = "/" + (rel[: -len("index.html")] if rel.endswith("index.html") else rel[: -len(".html")])
        response = get(served, url)
        assert response.status == 200, url
        assert response.getheader("Content-Type").startswith("text/html")


def test_every_seed_link_resolves_with_at_most_one_redirect(served):
    for link in seed_site_links():
        path, _, fragment = link.partition("#")
        response, _ = follow(served, path, hops=1)
        assert response.status == 200, link
        if fragment:
            ids = {attrs.get("id") for _, attrs, _ in Elements(response.body.decode()).elements}
            assert fragment in ids, link


def test_unknown_url_gets_our_404_with_status_404(served):
    response = get(served, "/course/no-such-page")
    assert response.status == 404
    assert "没有找到这个页面" in response.body.decode()


def header_values(response, name: str) -> list[str]:
    return [value for key, value in response.getheaders() if key.lower() == name.lower()]


def test_security_headers_present_exactly_once(served):
    for path in ("/", "/course/lab11", "/course/materials/lab09/results.json"):
        response = get(served, path)
        for name in ("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy",
                     "Permissions-Policy", "Cache-Control"):
            # Once, and not joined with another rule's value.
            assert header_values(response, name) == [SECURITY[name]], (path, name)


def test_fingerprinted_assets_cached_immutably_once(served, site):
    css = next(site.glob("assets/style.*.css")).relative_to(site).as_posix()
    response = get(served, "/" + css)
    assert response.status == 200
    assert header_values(response, "Cache-Control") == ["public, max-age=31536000, immutable"]


def test_downloads_have_the_right_types(served):
    notebook = get(served, "/course/materials/Lecture02-LAB09.ipynb")
    assert notebook.status == 200
    assert header_values(notebook, "Content-Type") == ["application/x-ipynb+json"]
    assert header_values(notebook, "Content-Disposition") == ['attachment; filename="Lecture02-LAB09.ipynb"']
    json.loads(notebook.body)
    tensors = get(served, "/course/materials/lab09/tensors.npz")
    assert header_values(tensors, "Content-Disposition") == ['attachment; filename="tensors.npz"']
    assert tensors.body[:2] == b"PK"
    results = get(served, "/course/materials/lab09/results.json")
    assert header_values(results, "Content-Type")[0].startswith("application/json")
    figure = get(served, "/course/images/LAB11-B/figure-02.png")
    assert header_values(figure, "Content-Type") == ["image/png"]


def test_internal_links_need_no_redirect(served, site):
    """Links inside the site use the form Pages serves directly."""
    for html_file in ("index.html", "course/lab11.html", "course/guide.html"):
        page = Elements((site / html_file).read_text(encoding="utf-8"))
        base = "/" + html_file
        for _, attrs, _ in page.elements:
            href = attrs.get("href") or attrs.get("src")
            if not href or href.startswith(("http:", "https:", "#")):
                continue
            from urllib.parse import urljoin
            path = urlsplit(urljoin("http://x" + base, href)).path
            assert get(served, path).status == 200, (html_file, href)
