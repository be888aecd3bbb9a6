"""Files Cloudflare Pages reads beside the pages: _headers, _redirects, sitemap.xml, robots.txt.

Rules follow Pages' semantics: every matching `_headers` rule applies and a
header set by two rules is joined, so Cache-Control is set once for all
paths and replaced (`! Cache-Control`) for fingerprinted assets only.
"""
from __future__ import annotations

from ..project.config import SiteConfig
from ..pages.prose import pretty_url
from ..core.errors import BuildError, Problem

SECURITY = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                               "script-src 'self'; font-src 'self'; connect-src 'self'; object-src 'none'; "
                               "base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    "Cache-Control": "public, max-age=0, must-revalidate",
}
DOWNLOAD_TYPES = {".ipynb": "application/x-ipynb+json", ".npz": "application/octet-stream",
                  ".json": "application/json; charset=utf-8", ".csv": "text/csv; charset=utf-8"}
MAX_REDIRECTS = 2000        # static rules Pages reads from _redirects


def headers_file(files: dict[str, bytes]) -> bytes:
    """Security headers for all, immutable caching for the assets, and downloads served as
    attachments under their own names: one rule per kind of download and depth (a placeholder
    takes the file's name), so a course of any size stays within Pages' rule limit."""
    lines = ["/*"] + [f"  {name}: {value}" for name, value in SECURITY.items()]
    lines += ["", "/assets/*", "  ! Cache-Control", "  Cache-Control: public, max-age=31536000, immutable"]
    for ext in (".ipynb", ".npz"):
        found = [p for p in files if p.endswith(ext)]
        # `/:file.npz` matches a file at the top only; `/*/:file.npz` one in any folder.
        for pattern in sorted({"/*/:file" if "/" in p else "/:file" for p in found}):
            lines += ["", pattern + ext, "  ! Content-Type", f"  Content-Type: {DOWNLOAD_TYPES[ext]}",
                      f"  Content-Disposition: attachment; filename=\":file{ext}\""]
    return ("\n".join(lines) + "\n").encode()


def sitemap(cfg: SiteConfig, html_pages: list[str]) -> bytes:
    urls = "".join(f"  <url><loc>{cfg.base_url}/{pretty_url(p)}</loc></url>\n"
                   for p in sorted(html_pages) if p != "404.html")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + urls + "</urlset>\n").encode()


def robots(cfg: SiteConfig) -> bytes:
    return f"User-agent: *\nAllow: /\n\nSitemap: {cfg.base_url}/sitemap.xml\n".encode()


def redirects_file(redirects: dict[str, str]) -> bytes:
    """Old address -> the output it moved to, as permanent redirects to its no-redirect form."""
    if len(redirects) > MAX_REDIRECTS:
        raise BuildError(Problem("_redirects", 0, f"{len(redirects)} aliases; Cloudflare Pages reads at most "
                                                  f"{MAX_REDIRECTS}: drop the oldest"))
    return "".join(f"{alias} /{pretty_url(output)} 301\n" for alias, output in sorted(redirects.items())).encode()


def add_deploy_files(cfg: SiteConfig, files, redirects: dict[str, str]) -> None:
    """`redirects`: the pages' aliases (old address -> output)."""
    html_pages = [p for p in files if p.endswith(".html")]
    files.add("sitemap.xml", sitemap(cfg, html_pages))
    files.add("robots.txt", robots(cfg))
    files.add("_headers", headers_file(files))
    if redirects:
        files.add("_redirects", redirects_file(redirects))
