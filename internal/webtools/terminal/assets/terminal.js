// The web terminal's page: xterm.js wired to ./ws (see package terminal
// for the protocol). Every URL is relative, so the page works behind the
// platform's edge at any host.
import { Terminal } from "./vendor/xterm.mjs";
import { FitAddon } from "./vendor/addon-fit.mjs";

const term = new Terminal({
  cursorBlink: true,
  scrollback: 5000,
  fontFamily: "ui-monospace, Menlo, Consolas, 'DejaVu Sans Mono', monospace",
  fontSize: 14,
  theme: { background: "#101010" },
});
const fit = new FitAddon();
term.loadAddon(fit);
term.open(document.getElementById("terminal"));
fit.fit();

const status = document.getElementById("status");
const encoder = new TextEncoder();
let socket = null;

function show(text) {
  status.textContent = text;
  status.hidden = !text;
}

function connect() {
  const url = new URL("ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  url.search = `?cols=${term.cols}&rows=${term.rows}`;
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  socket = ws;
  ws.onopen = () => { show(""); term.focus(); };
  ws.onmessage = (ev) => {
    if (ev.data instanceof ArrayBuffer) term.write(new Uint8Array(ev.data));
  };
  ws.onclose = (ev) => {
    if (socket !== ws) return;
    socket = null;
    const why = ev.reason === "exited" ? "Session ended" : "Disconnected";
    show(`${why}. Press Enter to start a new session.`);
  };
}

term.onData((data) => {
  if (socket && socket.readyState === WebSocket.OPEN) {
    socket.send(encoder.encode(data));
  } else if (!socket && data === "\r") {
    term.reset();
    connect();
  }
});

// Some mouse reports are raw bytes, not text.
term.onBinary((data) => {
  if (socket && socket.readyState === WebSocket.OPEN) {
    socket.send(Uint8Array.from(data, (c) => c.charCodeAt(0)));
  }
});

term.onResize(({ cols, rows }) => {
  if (socket && socket.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify({ type: "resize", cols, rows }));
  }
});

new ResizeObserver(() => fit.fit()).observe(document.getElementById("terminal"));
connect();
