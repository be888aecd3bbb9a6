"""Build the course site: `python build.py` writes dist/ (`python build.py --help` for every command).

The generator is installed (requirements.txt names it); this file only runs it with this folder as the
course, so `python build.py` works the same here as in every course.
"""
from pathlib import Path

from sitegen.commands.cli import run

if __name__ == "__main__":
    run(Path(__file__).resolve().parent)
