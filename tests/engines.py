"""The other engines a student may read with: Debian's Firefox (over WebDriver BiDi, through
tools/firefox.mjs and puppeteer-core) and WebKit (WebKitGTK's WebKitWebDriver and MiniBrowser, through
Selenium, on a virtual display). Both run the same probe: open a page of the served site in a frame
of a given size (a frame's media queries follow its own width, so any width can be tried whatever
the window), wait for its fonts and scripts, and evaluate a function inside it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

from support import REPO, TOOLS, require

FIREFOX = os.environ.get("FIREFOX", "/usr/bin/firefox-esr")
WEBKIT_DRIVER = os.environ.get("WEBKIT_DRIVER", "/usr/bin/WebKitWebDriver")
MINIBROWSER = os.environ.get("MINIBROWSER", "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser")

# (path, width, height, script): the page at `path` in a frame width × height; `script` is the source of
# a function (async or not) run in the frame once its fonts are ready and its explorer, if any, is drawn.
PROBE = """async ([path, width, height, script]) => {
  const frame = document.createElement("iframe");
  frame.style.cssText = `width:${width}px;height:${height}px;border:0;display:block`;
  document.body.replaceChildren(frame);
  await new Promise((done) => { frame.onload = done; frame.src = path; });
  const win = frame.contentWindow, doc = frame.contentDocument;
  await doc.fonts.ready;
  for (let i = 0; i < 100 && doc.querySelector("[id^=explorer-]") && !doc.querySelector("[id^=explorer-] table"); i++)
    await new Promise((r) => setTimeout(r, 50));
  try { return await win.eval(`(${script})()`); } catch (error) { return { error: String(error) }; }
}"""


def in_firefox(port: int, scheme: str, runs: list) -> dict:
    require(os.path.exists(FIREFOX), "Firefox", "apt-get install firefox-esr")
    require((TOOLS / "puppeteer-core").is_dir(), "puppeteer-core", "npm ci --prefix tools --ignore-scripts")
    job = {"executable": FIREFOX, "scheme": scheme, "site": f"http://127.0.0.1:{port}/", "probe": PROBE,
           "runs": runs}
    done = subprocess.run(["node", str(REPO / "tools/firefox.mjs")], input=json.dumps(job), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def in_webkit(port: int, scheme: str, runs: list) -> dict:
    require(os.path.exists(WEBKIT_DRIVER) and os.path.exists(MINIBROWSER), "WebKitGTK's WebDriver",
            "apt-get install webkit2gtk-driver")
    require(shutil.which("xvfb-run") is not None, "a virtual display", "apt-get install xvfb")
    code = f"""
import json, sys
from selenium import webdriver
from selenium.webdriver.webkitgtk.service import Service
options = webdriver.WebKitGTKOptions()
options.binary_location = {MINIBROWSER!r}
options.add_argument("--automation")
{'options.add_argument("--dark-mode")' if scheme == "dark" else ""}
driver = webdriver.WebKitGTK(options=options, service=Service(executable_path={WEBKIT_DRIVER!r}))
try:
    driver.set_window_size(1400, 1000)
    driver.set_script_timeout(120)
    driver.get("http://127.0.0.1:{port}/")
    call = "const done = arguments[arguments.length - 1]; (" + {PROBE!r} + ")(arguments[0]).then(done, (e) => done({{error: String(e)}}))"
    print(json.dumps({{"results": [driver.execute_async_script(call, run) for run in json.loads(sys.argv[1])], "errors": []}}))
finally:
    driver.quit()
"""
    import sys
    done = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1200x24", sys.executable, "-c", code, json.dumps(runs)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
