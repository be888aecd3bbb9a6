"""Build the course site: `python build.py` writes dist/ (`python build.py --help` for every command).

The generator's command line (sitegen/commands/cli.py), with this folder as the course; a course with the
generator installed (`pip install` of this repository) runs the same as `sitegen` in its folder.
"""
from pathlib import Path

from sitegen.commands.cli import run

if __name__ == "__main__":
    run(Path(__file__).resolve().parent)
