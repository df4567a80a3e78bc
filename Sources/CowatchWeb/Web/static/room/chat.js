// The chat input: anything typed goes to the room as it is (chat, or a slash
// command), queued while disconnected; the arrows recall what was sent.

import { $ } from '../ui.js';

export function wireChat(page) {
  const { connection, log } = page;
  const input = $('chat-input');
  const typed = []; // lines sent from the input (not `history`, the window's)
  let historyIndex = 0;
  $('chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const line = input.value;
    if (!line.trim()) return;
    if (!connection.send(line, { queue: true })) log.add('system', 'Not connected: sent when the connection is back.');
    typed.push(line);
    historyIndex = typed.length;
    input.value = '';
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowUp' && historyIndex > 0) {
      input.value = typed[--historyIndex];
      event.preventDefault();
    } else if (event.key === 'ArrowDown' && historyIndex < typed.length) {
      input.value = typed[++historyIndex] ?? '';
      event.preventDefault();
    }
  });
}
