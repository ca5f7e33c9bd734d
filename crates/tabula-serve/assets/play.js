// The play-and-analyse page: a game as a list of moves, AI players through /api/move,
// live MCTS through /api/analyze/live (SSE), exact scores through /api/solve.
"use strict";

const $ = id => document.getElementById(id);
const S = { game: null, state: null, values: [], analysis: null, exact: null, source: null, busy: false, epoch: 0, pv: null };

function playerOptions(select, kinds, keep) {
  const old = keep ? select.value : null;
  clear(select);
  for (const k of ["human", ...kinds]) { const o = document.createElement("option"); o.value = k; o.textContent = k; select.appendChild(o); }
  if (old && [...select.options].some(o => o.value === old)) select.value = old;
}

function setOptions(select, values, keep) {
  const old = keep ? select.value : null;
  clear(select);
  // Weight files show by their file name; the value keeps the whole path.
  for (const v of values) { const o = document.createElement("option"); o.value = v; o.textContent = v.split("/").pop(); o.title = v; select.appendChild(o); }
  if (old && values.includes(old)) select.value = old;
}

async function init() {
  const { games } = await api("/api/games");
  const params = new URLSearchParams(location.search);
  setOptions($("game"), games.flatMap(g => g.presets));
  if (params.get("game")) $("game").value = params.get("game");
  $("game").onchange = () => newGame(false);
  const start = (params.get("moves") || "").split(",").filter(m => m);
  $("new").onclick = () => newGame(true);
  $("undo").onclick = undo;
  $("pass").onclick = () => playText("pass");
  $("aimove").onclick = () => aiMove(true);
  $("analyse").onchange = analyse;
  $("heatmode").onchange = render;
  $("model").onchange = analyse;
  $("p1").onchange = $("p2").onchange = () => aiMove(false);
  S.game = $("game").value;
  await load(start, false);
}

async function newGame(keep) {
  S.epoch++;
  S.game = $("game").value;
  S.values = [];
  await load([], keep);
}

async function load(moves, keepPlayers = true) {
  try {
    const state = await api("/api/state", { game: S.game, moves });
    show(state, keepPlayers);
  } catch (e) { $("error").textContent = e.message; }
}

function show(state, keepPlayers = true) {
  const first = !S.state || S.state.game !== state.game;
  S.state = state;
  S.values.length = Math.min(S.values.length, state.moves.length + 1);
  $("error").textContent = "";
  if (first || !keepPlayers) {
    playerOptions($("p1"), state.players, keepPlayers && !first);
    playerOptions($("p2"), state.players, keepPlayers && !first);
    if (first) $("p2").value = state.players[0];
    setOptions($("model"), state.models, !first);
    $("p1label").textContent = cap(state.board.pieces[0]);
    $("p2label").textContent = cap(state.board.pieces[1]);
  }
  $("pass").hidden = !state.legal.some(m => m.move === "pass");
  $("exacthead").hidden = !state.solver;
  $("moves").textContent = state.moves.length ? "Moves: " + state.moves.join(" ") : "";
  S.analysis = null; S.exact = null; S.pv = null;
  render();
  analyse();
  solve();
  aiMove(false);
}

const cap = s => s.charAt(0).toUpperCase() + s.slice(1);

function playerFor(side) { return $(side === 1 ? "p1" : "p2").value; }

function render() {
  const st = S.state;
  if (!st) return;
  const pieces = st.board.pieces;
  $("status").textContent = st.outcome ? `Game over: ${st.outcome.text}` : `${cap(pieces[st.to_move - 1])} to move (${playerFor(st.to_move)})`;
  const marks = [];
  const mode = $("heatmode").value;
  const a = S.analysis;
  if (a && mode !== "none" && !st.outcome) {
    const kids = a.children.filter(c => c.point);
    const maxV = Math.max(1, ...kids.map(c => c.visits)), maxP = Math.max(1e-9, ...kids.map(c => c.prior));
    for (const c of kids) {
      // The few visits every candidate gets would hide the real contenders.
      if (mode === "visits" && c.visits < Math.max(1, 0.02 * maxV)) continue;
      const t = mode === "visits" ? c.visits / maxV : mode === "prior" ? c.prior / maxP : (c.q + 1) / 2;
      const label = mode === "visits" ? String(c.visits) : mode === "prior" ? Math.round(100 * c.prior) + "%" : fmt(c.q);
      marks.push({ point: c.point, move: c.move, fill: heat(t), label, ring: c.move === a.best,
        title: `${c.move}: ${c.visits} visits, P ${fmt(100 * c.prior, 1)}%, Q ${fmt(c.q, 3)}\nPV ${c.pv.join(" ")}`,
        onHover: on => { S.pv = on ? c : null; render(); } });
    }
  }
  const ghosts = [];
  if (S.pv) {
    let side = st.to_move;
    for (const p of S.pv.pv_points) { if (p) ghosts.push({ point: p, side }); side = 3 - side; }
  }
  const lastMove = st.moves.length ? S.lastPoint : null;
  drawBoard($("board"), st.board, { marks, ghosts, last: lastMove, onClick: humanClick });
  renderTable();
  drawChart($("graph"), S.values.map((v, i) => ({ x: i, y: v })).filter(p => p.y !== undefined), { width: 400, height: 150, yMin: -1, yMax: 1, label: "move" });
}

function renderTable() {
  const body = $("cands").querySelector("tbody");
  clear(body);
  const a = S.analysis;
  if (!a) { $("summary").textContent = $("analyse").checked ? "Analysing…" : "Analysis off"; return; }
  const side = cap(S.state.board.pieces[a.to_move - 1]);
  let solverNote = "";
  if (S.exact) solverNote = S.exact.unsolved ? " Exact: too deep for a quick solve." : S.exact.weak ? " Exact: results only (scores take too long here)." : "";
  $("summary").textContent = `${a.evaluator}: ${a.simulations} simulations in ${fmt(a.seconds, 1)} s; value for ${side} ${fmt(a.value, 3)}; best ${a.best ?? "—"}${a.done ? "" : " (searching…)"}.${solverNote}`;
  const exact = {};
  if (S.exact) for (const m of S.exact.moves) exact[m.move] = m;
  for (const c of a.children.slice(0, 12)) {
    const tr = document.createElement("tr");
    tr.className = "cand";
    const ex = exact[c.move];
    const cells = [c.move, c.visits, fmt(100 * c.prior, 1) + "%", fmt(c.q, 3)];
    if (S.state.solver) cells.push(ex ? ex.result + (S.exact.weak ? "" : ` (${ex.score})`) : (S.exact && S.exact.unsolved ? "?" : ""));
    cells.push(c.pv.join(" "));
    cells.forEach((v, i) => { const td = document.createElement("td"); td.textContent = v; if (i === cells.length - 1) td.className = "pv"; tr.appendChild(td); });
    tr.onmouseenter = () => { S.pv = c; render(); };
    tr.onmouseleave = () => { S.pv = null; render(); };
    body.appendChild(tr);
  }
}

function analyse() {
  if (S.source) { S.source.close(); S.source = null; }
  const st = S.state;
  if (!st || !$("analyse").checked || st.outcome) { render(); return; }
  const q = new URLSearchParams({ game: st.game, moves: st.moves.join(","), model: $("model").value, sims: $("sims").value || "800", seconds: $("seconds").value || "2" });
  const src = new EventSource("/api/analyze/live?" + q);
  S.source = src;
  const ply = st.moves.length;
  src.addEventListener("update", ev => {
    if (S.source !== src) return;
    const a = JSON.parse(ev.data);
    S.analysis = a;
    S.values[ply] = a.to_move === 1 ? a.value : -a.value;
    if (a.done) { src.close(); }
    if (!S.pv) render(); else renderTable();
  });
  src.addEventListener("failed", ev => { $("error").textContent = ev.data; src.close(); });
  src.onerror = () => src.close();
}

async function solve() {
  const st = S.state;
  if (!st.solver || st.outcome) return;
  const epoch = S.epoch, n = st.moves.length;
  try {
    const r = await api("/api/solve", { game: st.game, moves: st.moves });
    if (S.epoch === epoch && S.state.moves.length === n) { S.exact = r; renderTable(); }
  } catch (e) { $("error").textContent = e.message; }
}

async function humanClick(r, c) {
  const st = S.state;
  if (st.outcome || S.busy || playerFor(st.to_move) !== "human") return;
  try {
    const next = await api("/api/click", { game: st.game, moves: st.moves, row: r, col: c });
    const played = next.moves[next.moves.length - 1];
    S.lastPoint = (st.legal.find(m => m.move === played) || {}).point || null;
    $("evaluation").textContent = "";
    show(next);
  } catch (e) { $("error").textContent = e.message; }
}

async function playText(move) {
  const st = S.state;
  if (st.outcome || S.busy) return;
  S.lastPoint = null;
  await load([...st.moves, move]);
}

function undo() {
  S.epoch++;
  const st = S.state;
  let moves = st.moves.slice(0, -1);
  // Back to the person's turn when the other side is an AI.
  const sideAfter = moves.length % 2 === 0 ? 1 : 2;
  if (moves.length && playerFor(sideAfter) !== "human") moves = moves.slice(0, -1);
  S.lastPoint = null;
  load(moves);
}

async function aiMove(force) {
  const st = S.state;
  if (!st || st.outcome || S.busy) return;
  let kind = playerFor(st.to_move);
  if (kind === "human") { if (!force) return; kind = st.players.includes("perfect") ? "perfect" : "mcts"; }
  const epoch = S.epoch;
  S.busy = true;
  $("evaluation").textContent = `${kind} is thinking…`;
  try {
    const player = { kind, model: $("model").value, sims: Number($("sims").value) || 800, seconds: Number($("seconds").value) || 2 };
    const r = await api("/api/move", { game: st.game, moves: st.moves, player });
    S.busy = false;
    if (epoch !== S.epoch) return;
    S.lastPoint = r.played.point;
    $("evaluation").textContent = `${r.player} played ${r.played.move}: ${r.evaluation}`;
    // Two AIs watching each other: a short pause between moves.
    setTimeout(() => { if (epoch === S.epoch) show(r.state); }, 250);
  } catch (e) { S.busy = false; $("error").textContent = e.message; $("evaluation").textContent = ""; }
}

init();
