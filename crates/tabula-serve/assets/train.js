// The training dashboard: every numeric column of a run's metrics.jsonl as a curve,
// refreshed while the run goes on.
"use strict";

const $ = id => document.getElementById(id);
const X_KEYS = ["iteration", "step", "steps", "games"];

async function load() {
  const dir = $("dir").value.trim();
  try {
    const r = await api("/api/run" + (dir ? "?dir=" + encodeURIComponent(dir) : ""));
    $("error").textContent = "";
    show(r);
  } catch (e) { $("error").textContent = e.message; }
}

function show(run) {
  const rows = run.rows;
  $("status").textContent = `${run.dir}: ${rows.length} rows`;
  const keys = [...new Set(rows.flatMap(r => Object.keys(r).filter(k => typeof r[k] === "number")))];
  const xKey = X_KEYS.find(k => keys.includes(k));
  const box = $("charts");
  clear(box);
  for (const k of keys) {
    if (k === xKey) continue;
    const div = document.createElement("div");
    div.className = "chart";
    const h = document.createElement("h3"); h.textContent = k; div.appendChild(h);
    const svg = document.createElementNS(SVG_NS, "svg"); div.appendChild(svg);
    box.appendChild(div);
    drawChart(svg, rows.map((r, i) => ({ x: xKey ? r[xKey] : i, y: r[k] })), { label: xKey || "row" });
  }
  if (run.config) { $("config").hidden = false; $("config").textContent = `${run.config.file}\n\n${run.config.text}`; }
}

$("load").onclick = load;
$("dir").value = new URLSearchParams(location.search).get("dir") || "";
setInterval(() => { if ($("live").checked) load(); }, 3000);
load();
