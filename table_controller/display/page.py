"""The web floor display's page: HTML, CSS and the JavaScript that draws a pushed view.

Cards are drawn as SVG by the page itself (no artwork is downloaded). The page
listens to ``/events`` (server-sent events; the browser's EventSource reconnects
by itself) and redraws from each ``view`` message; the countdown ticks locally.
"""

PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Table display</title>
<style>
  :root { --felt: #0b5d3b; --gold: #f2c14e; }
  * { box-sizing: border-box; }
  body { margin: 0; font-family: "DejaVu Sans", Arial, sans-serif; background: var(--felt); color: #fff; }
  header { display: flex; gap: 2rem; align-items: baseline; padding: 1rem 2rem; background: #063d27; }
  #table { font-size: 2rem; font-weight: bold; }
  #state { font-size: 1.6rem; color: var(--gold); text-transform: uppercase; }
  #countdown { font-size: 2.4rem; font-weight: bold; margin-left: auto; min-width: 4ch; text-align: right; }
  #status { font-size: .9rem; padding: .2rem .6rem; border-radius: .4rem; background: #333; }
  #status.live { background: #1f7a3a; } #status.stale { background: #a33; }
  main { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem 2rem; padding: 1rem 2rem; }
  #positions { grid-column: 1 / 3; display: flex; gap: 3rem; justify-content: center; min-height: 200px; }
  .position h2 { text-transform: uppercase; text-align: center; margin: .2rem 0 .6rem; letter-spacing: .1em; }
  .cards { display: flex; gap: .5rem; }
  svg.card { width: 100px; height: 140px; filter: drop-shadow(2px 3px 3px rgba(0,0,0,.5)); }
  #banner { grid-column: 1 / 3; text-align: center; font-size: 2.6rem; font-weight: bold; padding: .6rem;
            background: var(--gold); color: #222; border-radius: .6rem; }
  #banner[hidden] { display: none; }
  h3 { margin: .2rem 0 .4rem; font-weight: normal; letter-spacing: .08em; text-transform: uppercase; font-size: 1rem; }
  #history span { display: inline-block; min-width: 1.8rem; text-align: center; margin: 2px; padding: 2px 4px;
                  border-radius: 50%; font-weight: bold; }
  .lbl-B { background: #c62828; } .lbl-P { background: #1565c0; } .lbl-T { background: #2e7d32; }
  .lbl-VOID { background: #555; border-radius: 4px !important; }
  .board { background: #fff; border-radius: .3rem; padding: 4px; display: inline-grid;
           grid-template-rows: repeat(6, 26px); grid-auto-flow: column; grid-auto-columns: 26px; gap: 2px; min-height: 170px; min-width: 344px; }
  .bead { width: 24px; height: 24px; border-radius: 50%; color: #fff; font-size: 13px; font-weight: bold;
          display: flex; align-items: center; justify-content: center; }
  .bead-B { background: #c62828; } .bead-P { background: #1565c0; } .bead-T { background: #2e7d32; }
  #big-road { background: #fff; border-radius: .3rem; }
  #alerts { grid-column: 1 / 3; color: #ffb4a8; }
  section[hidden] { display: none; }
</style>
</head>
<body>
<header>
  <span id="table">—</span><span id="game"></span><span id="state">waiting</span>
  <span id="round"></span><span id="countdown"></span><span id="status">connecting…</span>
</header>
<main>
  <section id="positions"></section>
  <div id="banner" hidden></div>
  <section class="baccarat-only"><h3>Bead plate</h3><div id="bead-plate" class="board"></div></section>
  <section class="baccarat-only"><h3>Big road</h3><svg id="big-road" width="100%" height="170"></svg></section>
  <section><h3>Last results</h3><div id="history"></div></section>
  <section id="alerts"></section>
</main>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const SUITS = {S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663"};
let countdownEnds = null, lastMessage = 0, current = null;

function el(tag, attrs, text, ns) {
  const node = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function card(code) {
  const svg = el("svg", {class: "card", viewBox: "0 0 100 140", "data-code": code || ""}, undefined, true);
  if (!code) {
    svg.appendChild(el("rect", {x: 2, y: 2, width: 96, height: 136, rx: 8, fill: "#7b1e1e", stroke: "#fff", "stroke-width": 3}, undefined, true));
    return svg;
  }
  const rank = code.slice(0, -1) === "T" ? "10" : code.slice(0, -1), suit = code.slice(-1);
  const colour = (suit === "H" || suit === "D") ? "#c62828" : "#111";
  const symbol = SUITS[suit] || suit;
  svg.appendChild(el("rect", {x: 2, y: 2, width: 96, height: 136, rx: 8, fill: "#fff", stroke: "#333", "stroke-width": 2}, undefined, true));
  svg.appendChild(el("text", {x: 9, y: 30, "font-size": 26, "font-weight": "bold", fill: colour}, rank, true));
  svg.appendChild(el("text", {x: 9, y: 54, "font-size": 22, fill: colour}, symbol, true));
  svg.appendChild(el("text", {x: 50, y: 100, "font-size": 56, "text-anchor": "middle", fill: colour}, symbol, true));
  svg.appendChild(el("text", {x: 91, y: 130, "font-size": 26, "font-weight": "bold", "text-anchor": "end", fill: colour}, rank, true));
  return svg;
}

function draw(view) {
  current = view;
  document.getElementById("table").textContent = view.table || "—";
  document.getElementById("game").textContent = view.variant || view.game || "";
  document.getElementById("state").textContent = view.state || "waiting";
  document.getElementById("round").textContent = view.round ? "round " + view.round : "";
  document.querySelectorAll(".baccarat-only").forEach(section => {
    section.hidden = Boolean(view.game) && view.game !== "baccarat";  // scoreboards are baccarat's
  });
  countdownEnds = view.countdown === null ? null : performance.now() + view.countdown * 1000;
  tick();
  const positions = document.getElementById("positions");
  positions.replaceChildren(...view.positions.map(p => {
    const box = el("div", {class: "position", "data-position": p.name});
    box.appendChild(el("h2", {}, p.name));
    const cards = el("div", {class: "cards"});
    p.cards.forEach(c => cards.appendChild(card(c)));
    box.appendChild(cards);
    return box;
  }));
  const banner = document.getElementById("banner");
  banner.hidden = !view.result;
  banner.textContent = view.result ? view.result.banner : "";
  document.getElementById("history").replaceChildren(...view.history.map(h =>
    el("span", {class: "lbl-" + h.label, title: h.banner, "data-round": h.round || ""}, h.label)));
  const beads = document.getElementById("bead-plate");
  const lastBeadCol = Math.max(-1, ...view.bead_plate.map(b => b.col)), firstBeadCol = Math.max(0, lastBeadCol - 11);
  beads.replaceChildren(...view.bead_plate.filter(b => b.col >= firstBeadCol).map(b => {
    const bead = el("div", {class: "bead bead-" + b.winner}, b.winner);
    bead.style.gridColumn = String(b.col - firstBeadCol + 1);
    bead.style.gridRow = String(b.row + 1);
    return bead;
  }));
  const road = document.getElementById("big-road");
  const first = Math.max(0, Math.max(-1, ...view.big_road.map(c => c.col)) - 23);
  road.replaceChildren(...view.big_road.filter(c => c.col >= first).map(c => {
    const g = el("g", {class: "road road-" + c.winner, "data-ties": c.ties}, undefined, true);
    const x = 14 + (c.col - first) * 26, y = 14 + c.row * 26;
    g.appendChild(el("circle", {cx: x, cy: y, r: 10, fill: "none", "stroke-width": 3,
                                stroke: c.winner === "B" ? "#c62828" : "#1565c0"}, undefined, true));
    if (c.ties) g.appendChild(el("line", {x1: x - 9, y1: y + 9, x2: x + 9, y2: y - 9, stroke: "#2e7d32", "stroke-width": 3}, undefined, true));
    if (c.ties > 1) g.appendChild(el("text", {x: x, y: y + 4, "font-size": 11, "text-anchor": "middle", fill: "#2e7d32"}, String(c.ties), true));
    return g;
  }));
  document.getElementById("alerts").replaceChildren(...view.alerts.map(a =>
    el("div", {class: "alert alert-" + a.severity}, a.severity + ": " + a.kind + (a.detail ? " — " + a.detail : ""))));
}

function tick() {
  const box = document.getElementById("countdown");
  box.textContent = countdownEnds === null ? "" : String(Math.max(0, Math.ceil((countdownEnds - performance.now()) / 1000)));
  const status = document.getElementById("status");
  if (lastMessage && performance.now() - lastMessage > 3500 && status.className === "live") {
    status.className = "stale"; status.textContent = "no signal";
  }
}
setInterval(tick, 200);

function connect() {
  const source = new EventSource("events");
  const status = document.getElementById("status");
  source.addEventListener("view", message => {
    lastMessage = performance.now();
    status.className = "live"; status.textContent = "live";
    try { draw(JSON.parse(message.data)); } catch (e) { console.error("bad view", e); }
  });
  source.onerror = () => { status.className = "stale"; status.textContent = "reconnecting…"; };
}
connect();
</script>
</body>
</html>
"""
