// Preview builds only: reload the page when `python build.py serve` finishes a rebuild.
const url = new URL("/__build-id.txt", location.href);
let seen = null;
async function poll() {
  try {
    const response = await fetch(url, { cache: "no-store" });
    if (response.ok) {
      const id = (await response.text()).trim();
      if (seen !== null && id !== seen) location.reload();
      seen = id;
    }
  } catch (error) {
    // The preview server is restarting; try again.
  }
  setTimeout(poll, 700);
}
poll();
