"""`python -m sitegen`: the command line, in the current folder (as the `sitegen` command)."""
import sys

from .commands.cli import run

sys.argv[0] = "python -m sitegen"        # what its usage line names
run()
