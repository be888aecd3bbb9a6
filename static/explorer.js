// The lab's question, live: edit pixels or the controls and every view recomputes with the
// same float64 layer as the build (encoder.js). The state lives in the URL hash, e.g.
// #pixel=3,3,+0.4&position=0 — a student can send exactly what they see.
// LAB 09's own widget (site.yaml: its widget), filling each `::: widget lab09` section: shapes,
// heads and the permutation come from the lab's results.json, not from here.
import { embed, encoder, tokenChange } from "./encoder.js";

const fmt = (x) => (Math.abs(x) < 5e-5 ? 0 : x).toFixed(4);

// Text colour by relative luminance, so every heat cell keeps AA contrast.
const luminance = ([r, g, b]) => [r, g, b].map((c) => {
  const s = c / 255;
  return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
}).reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
const heat = (w) => {   // w in [0, 1]: white to deep blue
  const rgb = [247 - 200 * w, 251 - 150 * w, 255 - 90 * w].map(Math.round);
  return { background: `rgb(${rgb.join(",")})`, color: luminance(rgb) < 0.179 ? "#fff" : "#000" };
};

const el = (tag, props = {}, children = []) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

const table = (caption, corner, columns, rows) => {
  const cells = rows.map(([label]) => columns.map(() => el("td")));
  const node = el("table", { className: "tensor" }, [
    el("caption", { textContent: caption }),
    el("thead", {}, [el("tr", {}, [el("th", { scope: "col", textContent: corner }),
      ...columns.map((c) => el("th", { scope: "col", textContent: c }))])]),
    el("tbody", {}, rows.map(([label], i) => el("tr", {}, [el("th", { scope: "row", textContent: label }), ...cells[i]]))),
  ]);
  return { node: el("div", { className: "table-scroll", tabIndex: 0 }, [node]), cells };
};

function readHash(base) {
  const params = new URLSearchParams(location.hash.slice(1));
  const image = base.map((row) => row.slice());
  for (const edit of (params.get("pixel") || "").split(";").filter(Boolean)) {
    const [r, c, d] = edit.split(",").map(Number);
    if (image[r] && image[r][c] !== undefined && Number.isFinite(d)) image[r][c] = base[r][c] + d;
  }
  return { image, position: params.get("position") !== "0", identical: params.get("identical") === "1",
           permute: params.get("permute") === "1" };
}

function writeHash(base, state) {
  const edits = [];
  state.image.forEach((row, r) => row.forEach((v, c) => {
    const d = Number((v - base[r][c]).toFixed(6));
    if (d) edits.push(`${r},${c},${d > 0 ? "+" : ""}${d}`);
  }));
  const params = new URLSearchParams();
  if (edits.length) params.set("pixel", edits.join(";"));
  if (!state.position) params.set("position", "0");
  if (state.identical) params.set("identical", "1");
  if (state.permute) params.set("permute", "1");
  const hash = params.toString().replaceAll("%3B", ";").replaceAll("%2C", ",").replaceAll("%2B", "+");
  history.replaceState(null, "", hash ? `#${hash}` : location.pathname + location.search);
}

async function start(section) {
  const lab = await (await fetch(section.dataset.results)).json();
  const base = lab.image;
  const baseline = encoder(lab, embed(lab, base));
  const compact = section.dataset.view === "compact";
  const permutation = lab.permutation;
  const tokens = lab.patches.map((_, i) => `token ${i}`);
  const count = (n) => Array.from({ length: n }, (_, i) => i);

  const title = el("h3", { id: `${section.id}-title`, textContent: compact
    ? "自己动手：改一块图像，看两个 head 的注意力怎样变" : "自己动手：改一块图像，看注意力与输出怎样变" });
  const intro = el("p", { className: "explorer-intro" }, ["下面每个数都由你的浏览器用同一套权重即时重算；"
    + "不做改动时，它们与上面 Python 算出的数字相同。"
    + "改任一像素，或切换对照条件；地址栏会记下当前状态，可以直接发给老师或同学。"]);
  const status = el("p", { className: "explorer-status" });
  status.setAttribute("aria-live", "polite");
  const controls = el("div", { className: "explorer-controls" });
  const views = el("div", { className: "explorer-views" });
  section.append(title, intro, status, controls, views);
  section.setAttribute("aria-labelledby", title.id);
  section.classList.toggle("explorer-compact", compact);

  const inputs = base.map((row, r) => row.map((v, c) => el("input", {
    type: "number", step: "0.1", min: "-2", max: "3", value: String(v), id: `${section.id}-p${r}${c}`,
  })));
  const grid = el("div", { className: "pixel-grid" }, inputs.flat().map((input) => {
    const [r, c] = input.id.slice(-2);
    return el("label", { htmlFor: input.id }, [el("span", { className: "visually-hidden", textContent: `第 ${r} 行第 ${c} 列像素` }), input]);
  }));
  const boxes = {
    position: el("input", { type: "checkbox", checked: true }),
    identical: el("input", { type: "checkbox" }),
    permute: el("input", { type: "checkbox" }),
  };
  const reset = el("button", { type: "button", className: "explorer-reset", textContent: "复原" });
  controls.append(
    el("fieldset", {}, [el("legend", { textContent: `${base.length}×${base[0].length} 图像（输入数值，或用 ↑ ↓ 键）` }), grid]),
    el("fieldset", {}, [el("legend", { textContent: "对照条件" }),
      el("label", {}, [boxes.position, " 加位置向量"]),
      el("label", {}, [boxes.identical, ` ${tokens.length} 个 token 相同（都用 patch 0）`]),
      el("label", {}, [boxes.permute, ` 排列 token 为 [${permutation.join(", ")}]`])]),
    reset);

  const heads = count(lab.structure.heads).map((h) => table(`head ${h} 的注意力（行 = query，列 = key）`, "query \\ key",
    tokens.map((t) => t.replace("token", "key")),
    tokens.map((t) => [t.replace("token", "query")])));
  views.append(...heads.map((t) => t.node));
  let change, output, bars;
  if (!compact) {
    const series = [["input", "input"], ["projected_attention", "attention 分支"], ["output", "output"]];
    change = table("与未改动图像相比，每个 token 的 L2 变化", "张量 \\ token", tokens, series.map(([, label]) => [label]));
    change.series = series;
    bars = el("div", { className: "change-bars", role: "img" }, tokens.map((t) => el("div", { className: "change-bar" }, [
      el("span", { textContent: t }), el("b", { className: "bar" }), el("span", { className: "bar-value" })])));
    output = table("最终输出 output（token × 通道）", "token \\ 通道", count(lab.structure.d_model).map((c) => `通道 ${c}`),
      tokens.map((t) => [t]));
    views.append(change.node, bars, output.node);
  }

  function update(state) {
    performance.mark("explorer-start");
    const X = embed(lab, state.image, { position: state.position, identical: state.identical,
                                       permutation: state.permute ? permutation : null });
    const trace = encoder(lab, X);
    heads.forEach((view, h) => trace.attention[h].forEach((row, i) => row.forEach((w, j) => {
      const cell = view.cells[i][j];
      const colour = heat(w);
      cell.textContent = fmt(w);
      cell.style.backgroundColor = colour.background;   // CSSOM: allowed by the site's CSP
      cell.style.color = colour.color;
    })));
    if (change) {
      const rows = change.series.map(([name]) => tokenChange(trace[name], baseline[name]));
      rows.forEach((row, s) => row.forEach((v, i) => { change.cells[s][i].textContent = fmt(v); }));
      const max = Math.max(0.5, ...rows.flat());
      [...bars.children].forEach((bar, i) => {
        bar.querySelector(".bar").style.width = `${(100 * rows[2][i]) / max}%`;
        bar.querySelector(".bar-value").textContent = fmt(rows[2][i]);
      });
      bars.setAttribute("aria-label", `output 变化：${rows[2].map((v, i) => `token ${i} ${fmt(v)}`).join("，")}`);
      trace.output.forEach((row, i) => row.forEach((v, j) => { output.cells[i][j].textContent = fmt(v); }));
    }
    status.textContent = state.permute || state.identical || !state.position
      || state.image.some((row, r) => row.some((v, c) => v !== base[r][c])) ? "已改动：与原图比较" : "原图";
    performance.measure("explorer-update", "explorer-start");
    section.trace = trace;   // for the tests and for anyone reading along in the console
  }

  const current = () => ({
    image: inputs.map((row) => row.map((input) => (input.value === "" ? 0 : Number(input.value)))),
    position: boxes.position.checked, identical: boxes.identical.checked, permute: boxes.permute.checked,
  });
  const show = (state) => {
    inputs.forEach((row, r) => row.forEach((input, c) => { input.value = String(state.image[r][c]); }));
    for (const key of Object.keys(boxes)) boxes[key].checked = state[key];
    update(state);
  };
  let pending = 0;     // the URL follows a moment later: not on every keystroke
  const changed = () => {
    const state = current();
    update(state);
    clearTimeout(pending);
    pending = setTimeout(() => writeHash(base, state), 120);
  };

  grid.addEventListener("input", changed);
  controls.addEventListener("change", changed);
  reset.addEventListener("click", () => {
    clearTimeout(pending);
    show({ image: base.map((row) => row.slice()), position: true, identical: false, permute: false });
    writeHash(base, current());
  });
  window.addEventListener("hashchange", () => show(readHash(base)));
  show(readHash(base));
  section.hidden = false;
}

for (const section of document.querySelectorAll(".widget.explorer")) start(section);
