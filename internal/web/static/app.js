// The streamsql dashboard: it polls the REST API every second and draws the jobs, the
// selected job's operator graph and its checkpoints. No framework, no build step.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
let selected = decodeURIComponent(location.hash.slice(1)) || null;
let busy = false; // a savepoint or stop in flight

function el(tag, attrs, ...children) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

async function getJSON(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(path + ": " + r.status);
  return r.json();
}

const fmtRate = (r) => r.toFixed(1);
const fmtInt = (n) => n.toLocaleString("en-US");
const fmtPct = (x) => Math.round(x * 100) + "%";
const fmtMs = (ms) => ms < 1000 ? ms + " ms" : (ms / 1000).toFixed(1) + " s";
function fmtBytes(b) {
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(1) : b) + " " + units[i];
}
function fmtWatermark(w) {
  if (w === null || w === undefined) return "no watermark";
  if (w >= 9.2e18) return "end of input";
  return new Date(w).toISOString().replace("T", " ").replace("Z", "");
}

function renderList(jobs) {
  const body = document.querySelector("#jobs tbody");
  body.replaceChildren();
  document.getElementById("nojobs").hidden = jobs.length > 0;
  if (!selected && jobs.length) {
    selected = (jobs.find((j) => j.state === "RUNNING") || jobs[0]).name;
  }
  for (const j of jobs) {
    const row = el("tr", { "data-job": j.name, class: j.name === selected ? "selected" : "" },
      el("td", {}, j.name), el("td", {}, el("span", { class: "state " + j.state }, j.state)),
      el("td", { class: "num" }, fmtInt(j["read-records"])), el("td", { class: "num" }, fmtRate(j["read-records-per-second"])),
      el("td", { class: "num" }, String(j.restarts)));
    row.addEventListener("click", () => { selected = j.name; location.hash = encodeURIComponent(j.name); refresh(); });
    body.append(row);
  }
}

// layout places operators in columns by their distance from the sources.
function layout(vertices) {
  const byId = new Map(vertices.map((v) => [v.id, v]));
  const depth = new Map();
  const depthOf = (v) => {
    if (depth.has(v.id)) return depth.get(v.id);
    depth.set(v.id, 0);
    let d = 0;
    for (const i of v.inputs) if (byId.has(i)) d = Math.max(d, depthOf(byId.get(i)) + 1);
    depth.set(v.id, d);
    return d;
  };
  const columns = [];
  for (const v of vertices) {
    const d = depthOf(v);
    (columns[d] = columns[d] || []).push(v);
  }
  return columns;
}

function renderGraph(vertices) {
  const svg = document.getElementById("graph");
  const W = 190, H = 74, GX = 50, GY = 18;
  const columns = layout(vertices);
  const pos = new Map();
  const rows = Math.max(1, ...columns.map((c) => c.length));
  columns.forEach((col, x) => col.forEach((v, y) => {
    const offset = (rows - col.length) * (H + GY) / 2;
    pos.set(v.id, { x: 10 + x * (W + GX), y: 10 + offset + y * (H + GY) });
  }));
  const width = 20 + columns.length * (W + GX) - GX, height = 20 + rows * (H + GY) - GY;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.style.height = height + "px";
  svg.style.width = width + "px";
  svg.replaceChildren(el("svg:defs", {}, el("svg:marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5",
    markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, el("svg:path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#66707a" }))));
  for (const v of vertices) {
    const to = pos.get(v.id);
    for (const i of v.inputs) {
      const from = pos.get(i);
      if (!from) continue;
      const x1 = from.x + W, y1 = from.y + H / 2, x2 = to.x, y2 = to.y + H / 2, mx = (x1 + x2) / 2;
      svg.append(el("svg:path", { class: "edge", d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}` }));
    }
  }
  for (const v of vertices) {
    const p = pos.get(v.id);
    const rate = v.inputs.length ? v.metrics["read-records-per-second"] : v.metrics["write-records-per-second"];
    const g = el("svg:g", { class: "node" + (v.backPressuredRatio > 0.5 ? " pressured" : ""), "data-id": v.id,
      "data-description": v.description, transform: `translate(${p.x},${p.y})` },
      el("svg:title", {}, v.description),
      el("svg:rect", { width: W, height: H, rx: 5 }),
      el("svg:text", { class: "name", x: 8, y: 16 }, `${v.name} ×${v.parallelism}`),
      el("svg:text", { class: "rate", x: 8, y: 32 }, `${fmtRate(rate)} rows/s`),
      el("svg:text", { class: "pressure", x: 8, y: 47 }, `back-pressure ${fmtPct(v.backPressuredRatio)}, busy ${fmtPct(v.busyRatio)}`),
      el("svg:text", { class: "watermark", x: 8, y: 62 }, fmtWatermark(v.watermark)));
    svg.append(g);
  }
}

function chart(title, points, fmt) {
  const w = 300, h = 90, pad = 14;
  const max = Math.max(1, ...points);
  const step = points.length > 1 ? (w - 2 * pad) / (points.length - 1) : 0;
  const coords = points.map((p, i) => `${pad + i * step},${h - pad - (p / max) * (h - 2 * pad)}`).join(" ");
  return el("svg:svg", { viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: "none", "data-chart": title },
    el("svg:text", { x: 4, y: 11 }, `${title} (max ${fmt(max)})`),
    el("svg:polyline", { points: coords }));
}

function renderCheckpoints(cp) {
  const body = document.querySelector("#checkpoints tbody");
  body.replaceChildren();
  for (const c of cp.history.slice(0, 20)) { // the newest
    body.append(el("tr", { "data-checkpoint": String(c.id), "data-status": c.status },
      el("td", { class: "num" }, String(c.id)), el("td", {}, c.status),
      el("td", {}, c.trigger_timestamp ? new Date(c.trigger_timestamp).toLocaleTimeString() : ""),
      el("td", { class: "num" }, fmtMs(c.end_to_end_duration)), el("td", { class: "num" }, fmtBytes(c.state_size)),
      el("td", { class: "num" }, fmtMs(c.alignment_duration))));
  }
  const done = cp.history.filter((c) => c.status === "COMPLETED").reverse();
  document.getElementById("charts").replaceChildren(
    chart("duration", done.map((c) => c.end_to_end_duration), fmtMs),
    chart("size", done.map((c) => c.state_size), fmtBytes),
    chart("alignment", done.map((c) => c.alignment_duration), fmtMs));
}

function renderJob(job, cp) {
  document.getElementById("job").hidden = false;
  document.getElementById("name").textContent = job.name;
  const state = document.getElementById("state");
  state.textContent = job.state;
  state.className = "state " + job.state;
  const started = job["start-time"] > 0 ? new Date(job["start-time"]).toLocaleString() : "not started";
  document.getElementById("summary").textContent =
    `started ${started}, ${job.restarts} restarts, ${cp.counts.completed} checkpoints completed, ${cp.counts.failed} failed`;
  const exc = document.getElementById("exception");
  exc.hidden = !job["root-exception"];
  exc.textContent = job["root-exception"] ? "Last exception: " + job["root-exception"] : "";
  const live = job.state === "RUNNING" || job.state === "RESTARTING" || job.state === "CREATED";
  document.getElementById("savepoint").disabled = busy || !live;
  document.getElementById("stop").disabled = busy || !live;
  renderGraph(job.vertices);
  renderCheckpoints(cp);
}

async function refresh() {
  try {
    const overview = await getJSON("jobs/overview");
    renderList(overview.jobs);
    if (selected && overview.jobs.some((j) => j.name === selected)) {
      const name = encodeURIComponent(selected);
      const [job, cp] = await Promise.all([getJSON("jobs/" + name), getJSON("jobs/" + name + "/checkpoints")]);
      renderJob(job, cp);
    }
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    document.getElementById("updated").textContent = "cannot reach streamsql: " + e.message;
  }
}

async function act(path, what) {
  const result = document.getElementById("result");
  busy = true;
  result.textContent = what + "...";
  refresh();
  try {
    const r = await fetch("jobs/" + encodeURIComponent(selected) + path, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    const body = await r.json();
    const op = body.operation || {};
    if (op["failure-cause"] || body.errors) {
      result.textContent = what + " failed: " + (op["failure-cause"] || body.errors.join("; "));
    } else {
      result.textContent = what + " done" + (op.location ? ": " + op.location : "");
    }
  } catch (e) {
    result.textContent = what + " failed: " + e.message;
  }
  busy = false;
  refresh();
}

document.getElementById("savepoint").addEventListener("click", () => act("/savepoints", "savepoint"));
document.getElementById("stop").addEventListener("click", () => {
  if (confirm("Stop job " + selected + "? It stops with a final checkpoint and resumes from it when started again.")) act("/stop", "stop");
});
refresh();
setInterval(refresh, 1000);
