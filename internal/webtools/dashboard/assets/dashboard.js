// The instance dashboard: renders ./api/status every few seconds. Every
// URL it fetches is relative, so it works behind the platform's edge.

const $ = (id) => document.getElementById(id);

function bytes(n) {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

function meter(used, total) {
  const wrap = document.createElement("div");
  wrap.className = "meter";
  const bar = document.createElement("div");
  bar.style.width = `${total ? Math.min(100, (100 * used) / total) : 0}%`;
  wrap.append(bar);
  return wrap;
}

// toolURL is the tool's per-port URL from the server, else the same host
// at the tool's port (a gateway run on a laptop, without an instance URL).
function toolURL(t) {
  if (t.url) return t.url;
  return `${location.protocol}//${location.hostname}:${t.port}${t.path || "/"}`;
}

function render(s) {
  $("instance-id").textContent = s.instance_id || "(no instance id)";
  document.title = `Instance ${s.instance_id || ""}`.trim();
  $("version").textContent = s.version;
  $("agent").textContent = s.agent;
  const health = $("health");
  health.textContent = s.healthy ? "healthy" : "not healthy";
  health.className = `badge ${s.healthy ? "ok" : "bad"}`;
  $("hint").textContent = s.hint || "";
  $("hint").hidden = !s.hint;

  if (s.memory) {
    $("memory").textContent = `${bytes(s.memory.used_bytes)} of ${bytes(s.memory.limit_bytes)} used`;
    $("memory-bar").style.width = `${Math.min(100, (100 * s.memory.used_bytes) / s.memory.limit_bytes)}%`;
  } else {
    $("memory").textContent = "unknown";
  }

  const disks = $("disks");
  disks.querySelectorAll(".disk").forEach((d) => d.remove());
  for (const d of s.disks || []) {
    const div = document.createElement("div");
    div.className = "disk";
    const p = document.createElement("p");
    p.textContent = `${d.label} (${d.path}): ${bytes(d.used_bytes)} used, ${bytes(d.free_bytes)} free of ${bytes(d.total_bytes)}`;
    div.append(meter(d.used_bytes, d.total_bytes), p);
    disks.append(div);
  }

  const list = $("tools");
  list.replaceChildren();
  for (const t of s.tools || []) {
    const li = document.createElement("li");
    li.dataset.port = t.port;
    const a = document.createElement("a");
    a.href = toolURL(t);
    a.target = "_blank";
    a.rel = "noopener";
    a.textContent = t.name;
    const state = document.createElement("span");
    state.className = "state";
    state.textContent = `port ${t.port} · ${t.up ? "running" : "not running"}`;
    li.append(a, state);
    list.append(li);
  }
  $("updated").textContent = `Updated ${new Date().toLocaleTimeString()}`;
}

async function refresh() {
  try {
    const resp = await fetch("api/status", { cache: "no-store" });
    if (!resp.ok) throw new Error(`HTTP ${resp.status}`);
    render(await resp.json());
  } catch (err) {
    $("updated").textContent = `Cannot read the status: ${err.message}`;
  }
}

refresh();
setInterval(refresh, 5000);
