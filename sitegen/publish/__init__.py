"""Publishing: the rendered HTML checked as a browser would read it (htmlcheck), then written to dist/
through a staging folder, so that a failed, killed or concurrent build never damages the last good one."""
