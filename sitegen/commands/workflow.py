"""The deploy workflow's own steps, run here as GitHub's runner runs them: `python -m
sitegen.commands.workflow [WORKFLOW [BRANCH]]` in a clean copy of a course's committed tree (.ci/pages-build
runs it after its simulation of Pages' own builder).

It reads the workflow (.github/workflows/site.yml), takes the job that deploys (the one whose step
uses cloudflare/wrangler-action) and runs that job's steps in their order, as a push of the branch
(main unless named) runs them: each `run:` in bash (-eo pipefail, as the runner's default shell), with the variables the runner
sets (GITHUB_OUTPUT, whose name=value lines become the step's outputs, GITHUB_STEP_SUMMARY,
GITHUB_REF_NAME...), its `env:`, and every `${{ }}` it knows replaced (github.*, steps.ID.outputs.*,
secrets.* as placeholders; any other is an error that names it). A step's `if:` is evaluated the same
way. A `uses:` step stands for what it does: actions/checkout (the tree is here), actions/setup-python
(`python` is the one .python-version names), actions/cache (none: a first run), and the deploy, which
is not made: what it would upload is checked (dist/ with index.html and 404.html, a project's name as
Pages takes one) and its command printed. What no step of these may do, the job may not: a step this
does not know fails it, saying so.
"""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
CONTEXT = re.compile(r"\b(github|steps|secrets|env|runner)((?:\.[A-Za-z_][\w-]*)+)")
DEPLOY = "cloudflare/wrangler-action"
KNOWN = ("actions/checkout", "actions/setup-python", "actions/cache", DEPLOY)
PROJECT = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,56}[a-z0-9])?$")


class Failed(Exception):
    pass


class Runner:
    """One job's steps, run in `folder` as a push of `branch` runs them."""

    def __init__(self, folder: Path, branch: str = "main"):
        self.folder, self.outputs, self.env = folder, {}, {}
        self.github = {"event_name": "push", "ref_name": branch, "ref": f"refs/heads/{branch}",
                       "repository": "teacher/course", "sha": "0" * 40}
        self.files = Path(tempfile.mkdtemp(prefix="workflow-"))   # the runner's own: GITHUB_OUTPUT...
        self.bin = self.files / "bin"                                # what setup-python puts on PATH
        self.bin.mkdir()

    def value(self, context: str, path: str) -> str:
        parts = path.strip(".").split(".")
        if context == "github" and len(parts) == 1 and parts[0] in self.github:
            return self.github[parts[0]]
        if context == "steps" and len(parts) == 3 and parts[1] == "outputs":
            return self.outputs.get(parts[0], {}).get(parts[2], "")
        if context == "secrets" and len(parts) == 1:
            return f"<secret {parts[0]}>"
        if context == "runner" and parts == ["os"]:
            return "Linux"
        if context == "env" and len(parts) == 1:
            return self.env.get(parts[0], "")
        raise Failed(f"workflow: ${{{{ {context}{path} }}}} is no expression this simulation knows")

    def text(self, template) -> str:
        """A value of the workflow with its ${{ }} replaced."""
        return EXPRESSION.sub(lambda m: str(self.evaluate(m[1])), str(template))

    def evaluate(self, expression: str):
        """A workflow expression: contexts, quoted strings, ==, !=, &&, || and ! (enough for `if:`)."""
        python = CONTEXT.sub(lambda m: repr(self.value(m[1], m[2])), expression)
        python = python.replace("&&", " and ").replace("||", " or ")
        python = re.sub(r"!(?!=)", " not ", python)
        try:
            return _safe(ast.parse(python.strip(), mode="eval").body)
        except (SyntaxError, ValueError) as exc:
            raise Failed(f"workflow: cannot evaluate {expression!r} ({exc})") from None

    def run(self, workflow: Path) -> None:
        import yaml
        data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
        jobs = data.get("jobs") or {}
        deploying = [name for name, job in jobs.items()
                     if any(str(step.get("uses", "")).startswith(DEPLOY) for step in job.get("steps", []))]
        if len(deploying) != 1:
            raise Failed(f"workflow: {workflow} must have one job that deploys with {DEPLOY}; found {deploying}")
        job = jobs[deploying[0]]
        self.env = {key: self.text(value) for key, value in (job.get("env") or {}).items()}
        if "if" in job and not self.evaluate(str(job["if"]).removeprefix("${{").removesuffix("}}")):
            raise Failed(f"workflow: job {deploying[0]} would not run on a push to {self.github['ref_name']}")
        for number, step in enumerate(job["steps"], 1):
            name = step.get("name") or step.get("uses") or step.get("run", "").split("\n")[0]
            condition = str(step.get("if", "true")).strip()
            if condition != "true" and not self.evaluate(condition.removeprefix("${{").removesuffix("}}")):
                print(f"workflow: step {number} ({name}): skipped, its if: is false", flush=True)
                continue
            print(f"workflow: step {number} ({name})", flush=True)
            if "run" in step:
                self.shell(step)
            else:
                self.uses(step)

    def shell(self, step: dict) -> None:
        outputs = self.files / "output"
        outputs.write_text("")
        env = {**os.environ, **self.env, **{k: self.text(v) for k, v in (step.get("env") or {}).items()},
               "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}", "CI": "true", "GITHUB_ACTIONS": "true",
               "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(self.files / "summary"),
               "GITHUB_ENV": str(self.files / "env"), "GITHUB_EVENT_NAME": self.github["event_name"],
               "GITHUB_REF_NAME": self.github["ref_name"], "GITHUB_REF": self.github["ref"], "RUNNER_OS": "Linux"}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", self.text(step["run"])],
                              cwd=self.folder, env=env)
        if done.returncode:
            raise Failed(f"workflow: the step {step.get('name') or step['run']!r} failed ({done.returncode})")
        if "id" in step:
            self.outputs[step["id"]] = _outputs(outputs.read_text(encoding="utf-8"))

    def uses(self, step: dict) -> None:
        action = str(step["uses"]).split("@")[0]
        if action not in KNOWN:
            raise Failed(f"workflow: {action} is an action this simulation does not know: run its steps by hand")
        if action in ("actions/checkout", "actions/cache"):
            return              # (the tree is here; a first run finds no cache)
        given = {key: self.text(value) for key, value in (step.get("with") or {}).items()}
        if action == "actions/setup-python":
            version = (self.folder / given.get("python-version-file", ".python-version")).read_text().strip() \
                if "python-version" not in given else given["python-version"]
            found = shutil.which(f"python{version}")
            if found is None:
                raise Failed(f"workflow: no python{version} on this machine (setup-python would install it)")
            for name in ("python", "python3"):
                (self.bin / name).unlink(missing_ok=True)
                (self.bin / name).symlink_to(found)
        elif action == DEPLOY:
            self.deploy(given, step.get("id"))

    def deploy(self, given: dict, step_id: str | None) -> None:
        """What the deploy would upload, checked; its command said."""
        command = given.get("command", "")
        project = re.search(r"--project-name[= ](\S*)", command)
        folder = command.split()[2] if command.startswith("pages deploy ") and len(command.split()) > 2 else ""
        if not project or not PROJECT.match(project[1]):
            raise Failed(f"workflow: the deploy names no Pages project: {command!r} (site.yaml's project:, "
                         "which `python build.py info` gives)")
        site = self.folder / folder
        missing = [name for name in ("index.html", "404.html") if not (site / name).is_file()]
        if not folder or missing:
            raise Failed(f"workflow: the deploy would upload {folder or 'nothing'}, which lacks {missing}")
        files = sum(1 for p in site.rglob("*") if p.is_file())
        print(f"workflow: would run `wrangler {command}`: {files} files of {folder}/", flush=True)
        if self.github["ref_name"] != "main":
            print(f"workflow: note: a push of {self.github['ref_name']} deploys a preview, not the site students "
                  "open: production is main (git branch -m main)", flush=True)
        if step_id:
            self.outputs[step_id] = {"deployment-url": f"https://{self.github['ref_name']}.{project[1]}.pages.dev"}


def _safe(node):
    """The value of an expression made only of constants, comparisons and boolean operators."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, bool)):
        return node.value
    if isinstance(node, ast.BoolOp):
        values = [_safe(v) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else next((v for v in values if v), values[-1])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _safe(node.operand)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        same = _safe(node.left) == _safe(node.comparators[0])
        return same if isinstance(node.ops[0], ast.Eq) else not same
    raise ValueError(f"{ast.dump(node)[:60]} is beyond what this simulation evaluates")


def _outputs(text: str) -> dict[str, str]:
    """A step's outputs as GITHUB_OUTPUT holds them: name=value lines, and name<<END ... END blocks."""
    found, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, end = line.split("<<", 1)
            found[name] = "\n".join(iter(lambda: next(lines), end))
        elif "=" in line:
            name, value = line.split("=", 1)
            found[name] = value
    return found


def main(argv: list[str]) -> int:
    """[WORKFLOW [BRANCH]]: the workflow's deploying job as a push of BRANCH (main) runs it."""
    workflow = Path(argv[0] if argv else ".github/workflows/site.yml")
    runner = Runner(Path.cwd(), argv[1] if len(argv) > 1 else "main")
    try:
        runner.run(workflow)
    except Failed as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(runner.files, ignore_errors=True)
    print(f"workflow: ok, every step of the deploying job as a push of {runner.github['ref_name']} runs it", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
