// The Minesweeper page: a game is a seed and a list of actions replayed by /api/mines,
// which also returns the exact, teacher and learned mine probabilities and the agent's
// next move.
"use strict";

const $ = id => document.getElementById(id);
const M = { actions: [], state: null, timer: null, busy: false };
const NUMBER_COLOURS = ["#999", "#2b6cb0", "#2f855a", "#c53030", "#553c9a", "#9c4221", "#2c7a7b", "#1a202c", "#718096"];

async function init() {
  const { levels, rules } = await api("/api/mines/levels");
  for (const l of levels) { const o = document.createElement("option"); o.value = l.name; o.textContent = `${l.name} (${l.width}x${l.height}, ${l.mines})`; $("level").appendChild(o); }
  for (const r of rules) { const o = document.createElement("option"); o.value = r; o.textContent = r; $("rule").appendChild(o); }
  $("seed").value = Math.floor(Math.random() * 1e9);
  $("new").onclick = () => { $("seed").value = Math.floor(Math.random() * 1e9); newGame(); };
  $("level").onchange = $("rule").onchange = $("seed").onchange = newGame;
  $("undo").onclick = () => { M.actions.pop(); refresh(); };
  $("step").onclick = agentMove;
  $("overlay").onchange = render;
  $("auto").onchange = autoplay;
  $("speed").oninput = autoplay;
  newGame();
}

function request() {
  return { level: $("level").value, rule: $("rule").value, seed: Number($("seed").value) || 0, actions: M.actions };
}

function newGame() { M.actions = []; refresh(); }

async function refresh() {
  M.busy = true;
  try {
    M.state = await api("/api/mines", request());
    $("error").textContent = "";
  } catch (e) {
    $("error").textContent = e.message;
    M.actions.pop();
  }
  M.busy = false;
  render();
}

function act(op, row, col) {
  if (!M.state || M.state.status !== "playing" || M.busy) return;
  M.actions.push({ op, row, col });
  refresh();
}

function agentMove() {
  const next = M.state && M.state.next;
  if (!next || M.busy) return false;
  for (const [row, col] of next.cells) M.actions.push({ op: "reveal", row, col });
  refresh();
  return true;
}

function autoplay() {
  if (M.timer) { clearInterval(M.timer); M.timer = null; }
  if (!$("auto").checked) return;
  M.timer = setInterval(() => {
    if (!M.state || M.state.status !== "playing") { $("auto").checked = false; autoplay(); return; }
    if (!M.busy) agentMove();
  }, 1000 / Number($("speed").value));
}

function overlay(name) {
  return ((M.state && M.state.overlays) || []).find(o => o.name === name && o.p);
}

function drawMines(svg, st, probs, { size = 560, interactive = false, showNext = false } = {}) {
  clear(svg);
  const cell = Math.max(10, Math.min(34, Math.floor(size / st.width)));
  const w = st.width * cell, h = st.height * cell;
  svg.setAttribute("width", w); svg.setAttribute("height", h);
  const mines = new Set((st.layout || []).map(([r, c]) => r * st.width + c));
  const next = new Set(showNext && st.next ? st.next.cells.map(([r, c]) => r * st.width + c) : []);
  for (let r = 0; r < st.height; r++) for (let c = 0; c < st.width; c++) {
    const i = r * st.width + c, v = st.cells[i], x = c * cell, y = r * cell;
    const g = el("g", { class: "mcell", "data-row": r, "data-col": c }, svg);
    const hidden = v < 0 && v !== -3;
    let fill = hidden ? "#cbd5e0" : "#f7fafc";
    if (hidden && probs) fill = heat(probs.p[i]);
    if (v === -3 || (mines.has(i) && st.status === "lost")) fill = (st.exploded && st.exploded[0] === r && st.exploded[1] === c) ? "#e53e3e" : "#feb2b2";
    el("rect", { x, y, width: cell - 1, height: cell - 1, fill, stroke: next.has(i) ? "#1a202c" : "none", "stroke-width": next.has(i) ? 3 : 0 }, g);
    if (v > 0) text(g, x + cell / 2, y + cell / 2, String(v), { "font-size": cell * 0.6, "font-weight": 700, fill: NUMBER_COLOURS[v] });
    else if (v === -2) text(g, x + cell / 2, y + cell / 2, "⚑", { "font-size": cell * 0.6, fill: "#c53030" });
    else if (mines.has(i) || v === -3) text(g, x + cell / 2, y + cell / 2, "✱", { "font-size": cell * 0.6 });
    else if (hidden && probs && cell >= 26) text(g, x + cell / 2, y + cell / 2, Math.round(100 * probs.p[i]), { "font-size": cell * 0.32, fill: "#1a202c" });
    if (hidden && probs) { const t = el("title", {}, g); t.textContent = `P(mine) ${fmt(100 * probs.p[i], 1)}%`; }
    if (interactive) {
      g.addEventListener("click", () => act(v === -2 ? "flag" : (v > 0 ? "chord" : "reveal"), r, c));
      g.addEventListener("contextmenu", ev => { ev.preventDefault(); act("flag", r, c); });
    }
  }
}

function render() {
  const st = M.state;
  if (!st) return;
  const mode = $("overlay").value;
  drawMines($("board"), st, mode === "none" ? null : overlay(mode), { interactive: true, showNext: true });
  const flags = st.cells.filter(v => v === -2).length;
  $("status").textContent = st.status === "playing" ? `Playing: ${st.mines - flags} mines left, ${st.revealed} cells revealed` : (st.status === "won" ? "Won!" : "Lost: a mine went off.");
  const n = st.next;
  $("next").textContent = !n ? "" : n.kind === "safe" ? `Agent: ${n.cells.length} cell(s) are certainly safe` : n.kind === "first" ? `Agent: first click at row ${n.cells[0][0] + 1}, column ${n.cells[0][1] + 1}` : `Agent: guess row ${n.cells[0][0] + 1}, column ${n.cells[0][1] + 1} (P(mine) ${fmt(100 * n.risk, 1)}%)`;
  const box = $("heatmaps");
  clear(box);
  for (const o of st.overlays || []) {
    const fig = document.createElement("figure");
    const svg = document.createElementNS(SVG_NS, "svg");
    svg.classList.add("heatmap");
    fig.appendChild(svg);
    const cap = document.createElement("figcaption");
    cap.textContent = o.error ? `${o.name}: ${o.error}` : `${o.name}${o.approximate ? " (estimate)" : " (exact)"}`;
    fig.appendChild(cap);
    box.appendChild(fig);
    if (o.p) drawMines(svg, st, o, { size: 300 });
  }
}

init();
