// Berth console: the server console page. It asks the console (this session, its
// CSRF token) for a one-use ticket, opens the WebSocket the ticket names and joins it
// to an xterm.js terminal: what the guest prints is written to the terminal, what is
// typed in it is sent to the guest. Messages come translated in the page's data-*.
import { Terminal } from "./xterm.mjs";

const box = document.getElementById("terminal");
const state = document.getElementById("console-state");
const button = document.getElementById("console-connect");
const term = new Terminal({ cols: 80, rows: 24, cursorBlink: true, scrollback: 5000,
  fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", fontSize: 14, lineHeight: 1.15 });
term.open(box);
const encoder = new TextEncoder();
let socket = null;

function say(text, problem) {
  state.textContent = text;
  state.classList.toggle("error", !!problem);
}

term.onData((data) => {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
});

// connect asks for a ticket and opens its WebSocket. A browser tells the page nothing
// of why a WebSocket was refused (a cap on open consoles reached since the ticket was
// issued): a connection that never opened asks for a ticket once more (again), whose
// refusal says why, or which connects if there is room by then.
async function connect(again) {
  button.disabled = true;
  say(state.dataset.connecting);
  let answer, ticket = null;
  try {
    answer = await fetch(box.dataset.ticket, {
      method: "POST", credentials: "same-origin", headers: { Accept: "application/json" },
      body: new URLSearchParams({ csrf: box.dataset.csrf }),
    });
    ticket = await answer.json();
  } catch (e) {
    ticket = null;
  }
  if (!answer || !answer.ok || !ticket || !ticket.url) {
    say((ticket && ticket.message) || state.dataset.failed, true);
    button.disabled = false;
    return;
  }
  const ws = new WebSocket(ticket.url);
  ws.binaryType = "arraybuffer";
  let opened = false;
  ws.onopen = () => {
    opened = true;
    socket = ws;
    say(state.dataset.connected);
    box.dataset.connected = "true";
    term.focus();
  };
  ws.onmessage = (e) => term.write(new Uint8Array(e.data));
  ws.onclose = () => {
    if (socket === ws) socket = null;
    box.dataset.connected = "false";
    if (!opened && !again) {
      connect(true);
      return;
    }
    say(opened ? state.dataset.closed : state.dataset.failed, true);
    button.disabled = false;
  };
}

button.addEventListener("click", () => connect(false));
connect(false);
