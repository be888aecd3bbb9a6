// Full-text search of the site, offline: search.json (built with the site) holds each
// page's text by section. A query's words are matched as substrings, which suits Chinese
// (no word segmentation) as well as English. The form stays hidden without JavaScript.
const form = document.querySelector(".site-search");
if (form) {
  const input = form.querySelector("input");
  const results = form.querySelector(".search-results");
  const status = form.querySelector(".search-status");
  const root = new URL(form.dataset.root, location.href);
  const MAX_RESULTS = 8;
  const CONTEXT = 20;   // characters shown before the first match
  let pages = null;

  // The index and the query are folded alike: NFKC (a phrase pasted from a page may hold
  // full-width punctuation or letters, or their plain forms), then lower case.
  const fold = (text) => text.normalize("NFKC").toLowerCase();
  // Folded character by character, with where each folded character came from, so that a
  // match in the folded text marks the text as shown.
  const foldMapped = (text) => {
    let folded = "";
    const origin = [];        // origin[k]: where in `text` the character folded[k] came from
    let at = 0;
    for (const char of text) {
      const piece = fold(char);
      for (let k = 0; k < piece.length; k++) origin.push(at);
      folded += piece;
      at += char.length;
    }
    origin.push(text.length);
    return { folded, origin };
  };
  const load = () => {
    pages ??= fetch(new URL("search.json", root)).then((r) => {
      if (!r.ok) throw new Error(`search.json: HTTP ${r.status}`);
      return r.json();
    }).then((index) => index.pages.map((page) => ({
      ...page,
      folded: fold(page.title),
      sections: page.sections.map(([id, heading, text]) => ({ id, heading, text, folded: fold(`${heading} ${text}`) })),
    })));
    return pages;
  };

  const count = (haystack, term) => {
    let n = 0;
    for (let at = haystack.indexOf(term); at >= 0; at = haystack.indexOf(term, at + term.length)) n++;
    return n;
  };

  // Pages holding every term; each with its best section. Title hits weigh most.
  const rank = (index, terms) => index.flatMap((page) => {
    const scored = page.sections.map((section) => ({ section,
      score: terms.reduce((sum, t) => sum + count(section.folded, t) + 4 * count(fold(section.heading), t), 0) }));
    const everywhere = `${page.folded} ${page.sections.map((s) => s.folded).join(" ")}`;
    if (!terms.every((t) => everywhere.includes(t))) return [];
    const best = scored.reduce((a, b) => (b.score > a.score ? b : a));
    const score = terms.reduce((sum, t) => sum + 10 * count(page.folded, t), 0)
      + scored.reduce((sum, s) => sum + s.score, 0);
    return [{ page, section: best.section, score }];
  }).sort((a, b) => b.score - a.score).slice(0, MAX_RESULTS);

  // A short stretch of the section around the first match, with every term marked.
  const excerpt = (text, terms) => {
    const { folded, origin } = foldMapped(text);
    const first = Math.min(...terms.map((t) => folded.indexOf(t)).filter((i) => i >= 0));
    const start = Number.isFinite(first) ? Math.max(0, first - CONTEXT) : 0;
    const end = Math.min(folded.length, start + 3 * CONTEXT + 40);
    const nodes = start > 0 ? ["…"] : [];
    let at = start;
    while (at < end) {
      const hits = terms.map((t) => [folded.indexOf(t, at), t]).filter(([i]) => i >= 0 && i < end);
      if (!hits.length) break;
      const [next, term] = hits.reduce((a, b) => (b[0] < a[0] || (b[0] === a[0] && b[1].length > a[1].length) ? b : a));
      const mark = document.createElement("mark");
      mark.textContent = text.slice(origin[next], origin[next + term.length]);
      nodes.push(text.slice(origin[at], origin[next]), mark);
      at = next + term.length;
    }
    nodes.push(text.slice(origin[at], origin[end]) + (end < folded.length ? "…" : ""));
    return nodes;
  };

  const show = (found, terms) => {
    results.replaceChildren(...found.map(({ page, section }) => {
      const li = document.createElement("li");
      const link = document.createElement("a");
      link.href = new URL(page.url + (section.id ? `#${section.id}` : ""), root).href;
      link.textContent = page.title;
      li.append(link);
      if (section.heading && section.heading !== page.title) {
        const where = document.createElement("span");
        where.className = "search-where";
        where.textContent = section.heading;
        li.append(where);
      }
      const text = document.createElement("p");
      text.append(...excerpt(section.text || section.heading, terms));
      li.append(text);
      return li;
    }));
    status.textContent = terms.length ? (found.length ? form.dataset.found.replace("{n}", found.length) : form.dataset.none) : "";
  };

  const update = async () => {
    const query = input.value;
    const terms = [...new Set(fold(query).split(/\s+/).filter(Boolean))];
    if (!terms.length) return show([], []);
    try {
      const index = await load();
      if (input.value === query) show(rank(index, terms), terms);
    } catch (error) {
      pages = null;
      status.textContent = form.dataset.failed;
      console.warn(error);
    }
  };

  form.addEventListener("submit", (event) => event.preventDefault());
  input.addEventListener("focus", () => load().catch(() => { pages = null; }), { once: true });
  input.addEventListener("input", update);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      input.value = "";
      show([], []);
    }
  });
  form.hidden = false;
}
