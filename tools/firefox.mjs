// Debian's Firefox driven over WebDriver BiDi (puppeteer-core), for the tests' other engines.
//
//   node tools/firefox.mjs < job.json > results.json
//
// job: {executable, scheme: "light"|"dark", site: "http://127.0.0.1:PORT/", probe: "<async JS function
// source taking one argument>", runs: [argument, ...]}. Opens the site once, calls the probe with each
// argument in turn, and prints {results: [...], errors: [console errors and uncaught exceptions]}.
import puppeteer from "puppeteer-core";

const input = [];
for await (const chunk of process.stdin) input.push(chunk);
const job = JSON.parse(Buffer.concat(input).toString("utf8"));

const browser = await puppeteer.launch({
  browser: "firefox",
  executablePath: job.executable,
  headless: true,
  // 0: dark, 1: light, whatever the system says.
  extraPrefsFirefox: { "layout.css.prefers-color-scheme.content-override": job.scheme === "dark" ? 0 : 1 },
});
const errors = [];
try {
  const page = await browser.newPage();
  page.on("console", (message) => { if (message.type() === "error") errors.push(message.text()); });
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.setViewport({ width: 1400, height: 1000 });
  await page.goto(job.site, { waitUntil: "load" });
  const results = [];
  for (const argument of job.runs) {
    results.push(await page.evaluate(`(${job.probe})(${JSON.stringify(argument)})`));
  }
  process.stdout.write(JSON.stringify({ results, errors }));
} finally {
  await browser.close();
}
