// Where this reader left off: the pages of this site they opened, with when, kept in this browser
// only (localStorage: no cookie, nothing sent anywhere). On a page with the lecture's map
// (::: materials) the pages read are marked and the last other one opened is offered to go on with.
const KEY = "sitegen-progress";

function load() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || "{}");
  } catch {
    return {};
  }
}

// The page's address on the published site, from its canonical link (the same on any host).
const canonical = document.querySelector('link[rel="canonical"]');
const here = canonical ? new URL(canonical.href).pathname : location.pathname;
const seen = load();
seen[here] = Date.now();
try {
  localStorage.setItem(KEY, JSON.stringify(seen));
} catch {
  // storage refused (private mode, or full): the map just shows nothing read
}

const items = [...document.querySelectorAll(".material[data-path]")];
let last = null;
for (const item of items) {
  const when = seen[item.dataset.path];
  if (when === undefined) continue;
  item.classList.add("material-visited");
  item.querySelector(".material-read").hidden = false;
  if (item.dataset.path !== here && (!last || when > seen[last.dataset.path])) last = item;   // not this page
}
const resume = document.querySelector(".materials-resume");
if (resume && last) {
  const link = last.querySelector(".material-link");
  const target = resume.querySelector("a");
  target.href = link.getAttribute("href");
  target.textContent = last.querySelector(".material-title").textContent;
  resume.hidden = false;
}
