"""The site generator: a course's sources in, dist/ out, in parts that import only the parts above them
in this list (tests/test_layers.py holds them to it):

core      errors, the project's files and their snapshot, the cache (memo), YAML, the build's lock
project   the course as its author wrote it: site.yaml, notebooks, lab scripts' cells, the packages code needs
labs      running each lab (confined, in its own process) into Artifacts, keyed on what it read
pages     content/ into Pages and their blocks, prose resolved, every reference checked
render    Pages and Artifacts into the site's files in memory: HTML, notebooks, assets, search, Pages' files
publish   the rendered HTML checked, then written to dist/ so that a failed build damages nothing
commands  what a teacher runs: build (pipeline), serve, new, import; cli is the command line
theme     the default templates/ and static/, which a course's own files of the same name replace
"""
