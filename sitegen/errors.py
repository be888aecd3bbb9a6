"""Problems reported as `path:line: message`, all of a phase at once."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class BuildError(Exception):
    """One or more problems; the build stops before writing anything."""

    def __init__(self, problems: list[Problem] | Problem):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__(self.report())

    def report(self) -> str:
        if len(self.problems) == 1:
            return f"error: {self.problems[0]}"
        lines = [f"error: {len(self.problems)} problems"]
        lines += [f"  {i}. {p}" for i, p in enumerate(self.problems, 1)]
        return "\n".join(lines)


class LabFailure(BuildError):
    """A lab's own code failed; `trace` is its full traceback (shown with --debug)."""

    def __init__(self, problem: Problem, trace: str):
        super().__init__(problem)
        self.trace = trace


class Collector:
    """Gathers problems during a phase, then raises them together."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: str, line: int, message: str) -> None:
        self.problems.append(Problem(str(path), line, message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise BuildError(self.problems)
