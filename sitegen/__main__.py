"""`python -m sitegen`: the command line, in the current folder (as the `sitegen` command)."""
from .commands.cli import run

run()
