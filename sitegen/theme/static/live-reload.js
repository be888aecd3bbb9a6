// Preview builds only: reload the page when `python build.py serve` finishes a rebuild.
// It asks the emulator for the build's id twenty times a second while the page is shown (a
// request to the same origin, as the Content-Security-Policy allows; the emulator can push
// nothing itself), and not at all while it is hidden.
const url = new URL("/__build-id.txt", location.href);
const EVERY_MS = 50;
let seen = null;
let timer = null;

async function poll() {
  timer = null;
  try {
    const response = await fetch(url, { cache: "no-store" });
    if (response.ok) {
      const id = (await response.text()).trim();
      if (seen !== null && id !== seen) {
        location.reload();
        return;
      }
      seen = id;
    }
  } catch (error) {
    // The preview server is restarting; try again.
  }
  if (!document.hidden) timer = setTimeout(poll, EVERY_MS);
}

document.addEventListener("visibilitychange", () => {
  if (!document.hidden && timer === null) poll();
});
poll();
