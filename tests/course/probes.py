"""What the browser tests measure inside a page, as JavaScript: the same in every engine."""

# Problems a reader would see: a number or formula cut by a box that does not show it scrolls, a
# tensor of up to 4 columns that does not fit, a formula cut at its top or bottom, a page that
# scrolls sideways. [] when there is none.
CLIPPED = """() => {
  const problems = [];
  const clips = (a) => { const s = getComputedStyle(a); return s.overflowX !== "visible" || /paint|strict|content/.test(s.contain); };
  const scrollsVisibly = (a) => { const s = getComputedStyle(a);
    return (s.overflowX === "auto" || s.overflowX === "scroll") && s.backgroundAttachment.includes("local"); };
  const what = (e) => `${e.closest("table")?.caption?.textContent.trim().slice(0, 30) ?? e.textContent.trim().slice(0, 30)}: ${e.textContent.trim().slice(0, 12)}`;
  for (const e of document.querySelectorAll("table.tensor td, table.tensor th, math, .change-bar")) {
    if (!e.getClientRects().length) continue;
    const r = e.getBoundingClientRect();
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      if (!clips(a)) continue;
      const b = a.getBoundingClientRect();
      if ((r.right > b.right + 0.5 || r.left < b.left - 0.5) && !scrollsVisibly(a)) problems.push(`clipped, no sign it scrolls: ${what(e)}`);
      break;
    }
  }
  for (const t of document.querySelectorAll("table.tensor")) {
    const box = t.parentElement;
    if (t.rows[0].cells.length <= 5 && box.scrollWidth > box.clientWidth + 1) problems.push(`does not fit: ${what(t.rows[1].cells[1])} (${box.scrollWidth - box.clientWidth}px)`);
  }
  for (const box of document.querySelectorAll(".math")) {
    if (box.scrollHeight > box.clientHeight + 1) problems.push(`formula cut at its top or bottom: ${box.textContent.slice(0, 30)}`);
  }
  if (document.documentElement.scrollWidth > innerWidth) problems.push("the page scrolls sideways");
  return problems;
}"""

# The search box, typed into: the titles of the pages it finds for 注意力 (it waits for them).
SEARCH = """async () => {
  const input = document.querySelector("#search-input");
  input.value = "注意力";
  input.dispatchEvent(new Event("input"));
  for (let i = 0; i < 100; i++) {
    const titles = [...document.querySelectorAll(".search-results li a")].map((a) => a.textContent);
    if (titles.length) return titles;
    await new Promise((r) => setTimeout(r, 100));
  }
  return [];
}"""

# The explorer's own encoder (the module the page loads) on the lab and its four controls.
ENCODER = """async () => {
  const encoder = performance.getEntriesByType("resource").map((r) => r.name).find((n) => n.includes("/assets/encoder."));
  const { embed, encoder: layer } = await import(encoder);
  const lab = await (await fetch("/course/materials/lab09/results.json")).json();
  const changed = lab.image.map((row) => row.slice());
  changed[3][3] += 0.4;
  return {
    lab: layer(lab, embed(lab, lab.image)),
    one_pixel: layer(lab, embed(lab, changed)),
    remove_position: layer(lab, embed(lab, lab.image, { position: false })),
    identical_tokens: layer(lab, embed(lab, lab.image, { position: false, identical: true })),
    permutation: layer(lab, embed(lab, lab.image, { position: false, permutation: lab.permutation })),
  };
}"""
