// Shared by every page: the API, SVG helpers and the generic board renderer.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  };
  const res = await fetch(path, opts);
  let data;
  try { data = await res.json(); } catch (e) { throw new Error(`${res.status} ${res.statusText}`); }
  if (!res.ok) throw new Error(data.error || `${res.status}`);
  return data;
}

function el(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function text(parent, x, y, s, attrs = {}) {
  const t = el("text", Object.assign({ x, y, "text-anchor": "middle", "dominant-baseline": "central" }, attrs), parent);
  t.textContent = s;
  return t;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

function fmt(x, digits = 2) { return x === null || x === undefined ? "" : Number(x).toFixed(digits); }

// Heat colour for t in [0, 1]: pale blue to deep red.
function heat(t) {
  t = Math.max(0, Math.min(1, t));
  const h = 220 - 220 * t, l = 85 - 35 * t;
  return `hsl(${h}, 80%, ${l}%)`;
}

const PIECE_COLOURS = { black: "#111", white: "#f8f8f8", red: "#e53e3e", yellow: "#ecc94b" };

// Draws a board view from the API (rows, cols, layout, cells, pieces, labels) into an
// <svg>. `marks` is a list of {point:[r,c], fill, label, title, ring} drawn over empty
// points; `onClick(r, c)` is called for clicks on the board.
function drawBoard(svg, board, { marks = [], last = null, ghosts = [], onClick = null, size = 520 } = {}) {
  clear(svg);
  const { rows, cols, layout } = board;
  const pad = board.col_labels.length || board.row_labels.length ? 26 : 6;
  const cell = Math.floor(Math.min((size - 2 * pad) / cols, (size - 2 * pad) / rows, 64));
  const w = cols * cell + 2 * pad, h = rows * cell + 2 * pad;
  svg.setAttribute("width", w); svg.setAttribute("height", h); svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  const cx = c => pad + (c + 0.5) * cell, cy = r => pad + (r + 0.5) * cell;
  if (layout === "intersections") {
    el("rect", { x: 0, y: 0, width: w, height: h, fill: "#dcb35c", rx: 6 }, svg);
    for (let r = 0; r < rows; r++) el("line", { x1: cx(0), y1: cy(r), x2: cx(cols - 1), y2: cy(r), stroke: "#333", "stroke-width": 1 }, svg);
    for (let c = 0; c < cols; c++) el("line", { x1: cx(c), y1: cy(0), x2: cx(c), y2: cy(rows - 1), stroke: "#333", "stroke-width": 1 }, svg);
  } else if (layout === "columns") {
    el("rect", { x: pad - 4, y: pad - 4, width: cols * cell + 8, height: rows * cell + 8, fill: "#2b6cb0", rx: 8 }, svg);
  } else {
    el("rect", { x: pad, y: pad, width: cols * cell, height: rows * cell, fill: "#fff", stroke: "#333" }, svg);
    for (let r = 1; r < rows; r++) el("line", { x1: pad, y1: pad + r * cell, x2: pad + cols * cell, y2: pad + r * cell, stroke: "#333", "stroke-width": 2 }, svg);
    for (let c = 1; c < cols; c++) el("line", { x1: pad + c * cell, y1: pad, x2: pad + c * cell, y2: pad + rows * cell, stroke: "#333", "stroke-width": 2 }, svg);
  }
  board.col_labels.forEach((l, c) => { text(svg, cx(c), pad / 2, l, { "font-size": 12, fill: "#444" }); text(svg, cx(c), h - pad / 2, l, { "font-size": 12, fill: "#444" }); });
  board.row_labels.forEach((l, r) => { text(svg, pad / 2, cy(r), l, { "font-size": 12, fill: "#444" }); text(svg, w - pad / 2, cy(r), l, { "font-size": 12, fill: "#444" }); });
  const piece = (r, c, who, opacity = 1) => {
    const name = board.pieces[who - 1];
    if (layout === "cells") {
      return text(svg, cx(c), cy(r), name, { "font-size": cell * 0.6, "font-weight": 700, fill: who === 1 ? "#c53030" : "#2b6cb0", opacity });
    }
    return el("circle", { cx: cx(c), cy: cy(r), r: cell * 0.44, fill: PIECE_COLOURS[name] || "#888", stroke: "#222", "stroke-width": 1, opacity }, svg);
  };
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    const who = board.cells[r * cols + c];
    if (who) piece(r, c, who);
    else if (layout === "columns") el("circle", { cx: cx(c), cy: cy(r), r: cell * 0.42, fill: "#f7fafc" }, svg);
  }
  if (last) el("circle", { cx: cx(last[1]), cy: cy(last[0]), r: cell * 0.14, fill: "#3182ce" }, svg);
  for (const m of marks) {
    const [r, c] = m.point;
    const g = el("g", { class: "mark", "data-move": m.move || "" }, svg);
    el("circle", { cx: cx(c), cy: cy(r), r: cell * 0.42, fill: m.fill, opacity: 0.85, stroke: m.ring ? "#1a202c" : "none", "stroke-width": m.ring ? 3 : 0 }, g);
    if (m.label) text(g, cx(c), cy(r), m.label, { "font-size": Math.max(9, cell * 0.26), fill: "#1a202c" });
    if (m.title) { const t = el("title", {}, g); t.textContent = m.title; }
    if (m.onHover) { g.addEventListener("mouseenter", () => m.onHover(true)); g.addEventListener("mouseleave", () => m.onHover(false)); }
  }
  ghosts.forEach((gh, i) => {
    piece(gh.point[0], gh.point[1], gh.side, 0.55);
    text(svg, cx(gh.point[1]), cy(gh.point[0]), String(i + 1), { "font-size": cell * 0.32, "font-weight": 700, fill: gh.side === 1 ? "#fff" : "#000" });
  });
  // One listener on the <svg> itself, which outlives every redraw: live analysis
  // redraws the board several times a second, and a click whose target was replaced
  // between press and release would be lost. Acting on the press avoids that.
  svg._board = { pad, cell, rows, cols, onClick };
  svg.style.cursor = onClick ? "pointer" : "default";
  if (onClick) el("rect", { x: pad, y: pad, width: cols * cell, height: rows * cell, fill: "transparent", class: "hit", "pointer-events": "none" }, svg);
  if (!svg._listening) {
    svg._listening = true;
    svg.addEventListener("pointerdown", ev => {
      const g = svg._board;
      if (!g || !g.onClick || ev.button !== 0) return;
      const box = svg.getBoundingClientRect();
      const c = Math.floor((ev.clientX - box.left - g.pad) / g.cell), r = Math.floor((ev.clientY - box.top - g.pad) / g.cell);
      if (r >= 0 && c >= 0 && r < g.rows && c < g.cols) g.onClick(r, c);
    });
  }
  return { cell, pad };
}

// A line chart of points [{x, y}] into an <svg>.
function drawChart(svg, series, { width = 320, height = 160, yMin = null, yMax = null, label = "" } = {}) {
  clear(svg);
  svg.setAttribute("width", width); svg.setAttribute("height", height);
  const pts = series.filter(p => Number.isFinite(p.x) && Number.isFinite(p.y));
  el("rect", { x: 0, y: 0, width, height, fill: "#fff", stroke: "#ddd" }, svg);
  if (!pts.length) { text(svg, width / 2, height / 2, "no data yet", { fill: "#999" }); return; }
  const xs = pts.map(p => p.x), ys = pts.map(p => p.y);
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = yMin ?? Math.min(...ys), y1 = yMax ?? Math.max(...ys);
  if (x1 === x0) x1 = x0 + 1; if (y1 === y0) { y1 = y0 + 1e-9 + Math.abs(y0) * 0.01; }
  const L = 44, R = 8, T = 8, B = 20;
  const X = x => L + (x - x0) / (x1 - x0) * (width - L - R), Y = y => T + (1 - (y - y0) / (y1 - y0)) * (height - T - B);
  for (const v of [y0, (y0 + y1) / 2, y1]) {
    el("line", { x1: L, x2: width - R, y1: Y(v), y2: Y(v), stroke: "#eee" }, svg);
    text(svg, L - 4, Y(v), Math.abs(v) >= 1000 ? v.toExponential(1) : Number(v.toPrecision(3)).toString(), { "font-size": 10, "text-anchor": "end", fill: "#666" });
  }
  text(svg, L, height - 7, String(x0), { "font-size": 10, "text-anchor": "start", fill: "#666" });
  text(svg, width - R, height - 7, String(x1), { "font-size": 10, "text-anchor": "end", fill: "#666" });
  if (label) text(svg, (L + width - R) / 2, height - 7, label, { "font-size": 10, fill: "#666" });
  el("polyline", { points: pts.map(p => `${X(p.x)},${Y(p.y)}`).join(" "), fill: "none", stroke: "#2b6cb0", "stroke-width": 2 }, svg);
  const lastPt = pts[pts.length - 1];
  el("circle", { cx: X(lastPt.x), cy: Y(lastPt.y), r: 3, fill: "#2b6cb0" }, svg);
}
