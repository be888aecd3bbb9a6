"""The site generator behind build.py, one module per phase.

config  -> site.yaml into a frozen SiteConfig
compute -> run each lab (cached on content hashes) into Artifacts
content -> content/*.md into Pages (front matter + blocks, with line numbers)
check   -> every reference verified before anything is rendered
render  -> Jinja templates and the notebook into OutputFiles, in memory
write   -> dist.tmp/ swapped into dist/; nothing else is touched
"""
