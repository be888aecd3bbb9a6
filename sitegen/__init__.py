"""The site generator behind build.py, one module per phase.

config  -> site.yaml into a frozen SiteConfig
compute -> run each lab (cached on content hashes) into Artifacts
content -> content/*.md into Pages (front matter + blocks, with line numbers)
check   -> every reference verified before anything is rendered
render  -> Jinja templates and the notebook into OutputFiles, in memory
write   -> a marked staging folder swapped into the output; nothing else is touched

Beside them: pipeline (the phases in order, under lock), sources (reading the
project's files), artifacts (a lab's cache entry), freeze (committed labs),
labhost / labrun / sandbox (how a lab's process is started, what runs in it,
how it is confined), lock, memo, cells, notebook, search, deploy, serve.
"""
