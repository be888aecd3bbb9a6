// Full-text search of the site, offline: Pagefind's index is built with the site into
// pagefind/. The form stays hidden without JavaScript.
const form = document.querySelector(".site-search");
if (form) {
  const input = form.querySelector("input");
  const results = form.querySelector(".search-results");
  const status = form.querySelector(".search-status");
  const root = new URL(form.dataset.root, location.href);
  let pagefind = null;
  let latest = 0;

  const load = async () => {
    if (!pagefind) {
      pagefind = await import(new URL("pagefind/pagefind.js", root).href);
      await pagefind.init();
    }
    return pagefind;
  };

  const show = (items, query) => {
    results.replaceChildren(...items.map((item) => {
      const li = document.createElement("li");
      const link = document.createElement("a");
      link.href = new URL(item.url.replace(/^\//, ""), root).href;
      link.textContent = item.meta.title;
      const excerpt = document.createElement("p");
      excerpt.innerHTML = item.excerpt;   // Pagefind escapes the page text and adds <mark>
      li.append(link, excerpt);
      return li;
    }));
    status.textContent = query ? (items.length ? `找到 ${items.length} 个页面` : "没有找到匹配的页面") : "";
  };

  form.addEventListener("submit", (event) => event.preventDefault());
  input.addEventListener("input", async () => {
    const query = input.value.trim();
    const ticket = ++latest;
    if (!query) return show([], "");
    const search = await (await load()).debouncedSearch(query, {}, 200);
    if (!search || ticket !== latest) return;
    show(await Promise.all(search.results.slice(0, 8).map((r) => r.data())), query);
  });
  form.hidden = false;
}
