// The jetspark web page: polls the engine's JSON endpoints once a second and fills the page's tables.
// Every value goes in with textContent (never as markup); the only markup inserted is the DAG's SVG,
// drawn by graphviz on the server. Requests carry the engine's token as "Authorization: Bearer".
"use strict";

const POLL_MS = 1000;
const body = document.body;
const token = body.dataset.token;

async function get(path, kind) {
  const response = await fetch(path, {headers: {"Authorization": "Bearer " + token}, cache: "no-store"});
  if (!response.ok) throw new Error(path + ": HTTP " + response.status);
  return kind === "text" ? response.text() : response.json();
}

function when(seconds) {
  return seconds == null ? "" : new Date(seconds * 1000).toLocaleString();
}

function number(n, digits) {
  return n == null ? "" : n.toLocaleString(undefined, {maximumFractionDigits: digits || 0});
}

function fill(tableId, rows) {
  const tbody = document.querySelector("#" + tableId + " tbody");
  const fresh = document.createElement("tbody");
  for (const cells of rows) {
    const tr = document.createElement("tr");
    for (const cell of cells) {
      const td = document.createElement("td");
      td.textContent = cell == null ? "" : String(cell);
      tr.appendChild(td);
    }
    fresh.appendChild(tr);
  }
  tbody.replaceWith(fresh);
}

function updated(note) {
  document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString() + (note || "");
}

async function pollIndex() {
  const jobs = await get("/api/jobs");
  const tbody = document.createElement("tbody");
  for (const job of jobs) {
    const tr = document.createElement("tr");
    const cells = [job.id, null, job.status, when(job.submitted), when(job.completed), job.guarantee, job.mode];
    cells.forEach((cell, i) => {
      const td = document.createElement("td");
      if (i === 1) {
        const a = document.createElement("a");
        a.href = "/jobs/" + encodeURIComponent(job.id) + "?token=" + encodeURIComponent(token);
        a.textContent = job.name;
        td.appendChild(a);
      } else {
        td.textContent = cell == null ? "" : String(cell);
      }
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  }
  document.querySelector("#jobs tbody").replaceWith(tbody);
  updated();
  return true;
}

// The DAG's picture is fetched once and its edge labels are then updated in place (graphviz runs again only
// when a label grew longer than the one it laid out, so the picture's layout keeps room for the text).
let drawnLengths = null;
const LABEL_SLACK = 3;  // characters a label may outgrow its laid-out room by before the picture is redrawn

function countLabel(items, rate) {
  return items.toLocaleString("en-US") + " items" +
      (rate == null ? "" : ", " + Math.round(rate).toLocaleString("en-US") + "/s");
}

function edgeLabels() {
  return Array.from(document.querySelectorAll("#dag svg g.edge"),
      g => Array.from(g.querySelectorAll("text")).find(t => / items/.test(t.textContent)));
}

async function drawDag(jobId, look) {
  const labels = look.edges.map(e => countLabel(e.items, e.rate));
  let texts = edgeLabels();
  const stale = drawnLengths == null || texts.length !== labels.length || texts.some(t => t == null) ||
      labels.some((label, i) => label.length > drawnLengths[i] + LABEL_SLACK);
  if (stale) {
    const text = await get("/api/jobs/" + jobId + "/dag.svg", "text");
    const svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
    document.getElementById("dag").replaceChildren(document.importNode(svg, true));
    texts = edgeLabels();
    drawnLengths = texts.map(t => (t ? t.textContent.length : 0));
  }
  texts.forEach((t, i) => { if (t) t.textContent = labels[i]; });
}

async function pollJob() {
  const jobId = body.dataset.job;
  const look = await get("/api/jobs/" + jobId);
  document.getElementById("name").textContent = look.name;
  let summary = look.status + " \u00b7 " + look.mode + " \u00b7 guarantee " + look.guarantee +
      " \u00b7 submitted " + when(look.submitted);
  if (look.completed) summary += " \u00b7 ended " + when(look.completed);
  if (look.error) summary += " \u00b7 failed: " + look.error.type +
      (look.error.vertex ? " in vertex " + look.error.vertex + " #" + look.error.processor_index : "");
  document.getElementById("summary").textContent = summary;
  document.getElementById("rates").textContent = look.rates_over == null ? "(rates: measuring)" :
      "(rates: " + look.rates_kind + ", over " + number(look.rates_over, 1) + " s)";
  fill("vertices", look.vertices.map(v => [
    v.name + (v.description ? " (" + v.description + ")" : ""), v.parallelism, number(v.received),
    number(v.received_rate), number(v.emitted), number(v.emitted_rate),
    v.queue_capacity == null ? "" : v.queue_size + " / " + v.queue_capacity,
    v.watermark, v.watermark_lag == null ? "" : number(v.watermark_lag, 1) + " s"]));
  fill("edges", look.edges.map(e => [e.source + (e.source_ordinal ? " #" + e.source_ordinal : ""),
    e.dest + (e.dest_ordinal ? " #" + e.dest_ordinal : ""), number(e.items), number(e.rate)]));
  const s = look.snapshot;
  document.getElementById("snapshot").textContent = (s == null ? "no complete snapshot" :
      "last snapshot " + s.id + ": " + number(s.size_bytes) + " bytes, took " + number(s.duration_seconds, 3) +
      " s, completed " + when(s.completed_at)) + " \u00b7 " + look.restarts + " restart(s)";
  fill("restarts", look.restart_log.map(r => [when(r.time), r.exc_type + ": " + r.exc_message,
    r.from_snapshot == null ? "from scratch" : "snapshot " + r.from_snapshot]));
  document.getElementById("stages-section").hidden = look.mode !== "STAGED";  // a pipelined job: one endless stage
  fill("stages", look.stages.map(st => [st.stage, st.completed, st.active, st.tasks]));
  fill("logs", look.logs.map(r => [when(r.time), r.logger, r.level, r.message]));
  await drawDag(jobId, look);
  updated(look.terminal ? " (final figures: the job ended)" : "");
  return !look.terminal;
}

async function loop(poll) {
  let again = true;
  try {
    again = await poll();
  } catch (error) {
    document.getElementById("updated").textContent = "cannot refresh: " + error.message;
  }
  if (again) setTimeout(() => loop(poll), POLL_MS);
}

loop(body.dataset.page === "job" ? pollJob : pollIndex);
