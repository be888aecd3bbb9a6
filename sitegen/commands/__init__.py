"""What a teacher runs: the build (pipeline), serve, new (scaffold), import (importer); cli is the
command line both `sitegen` and a course's `python build.py` run."""
