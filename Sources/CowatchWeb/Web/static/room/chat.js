// The chat input: anything typed goes to the room as it is (chat, or a slash
// command), queued while disconnected; the arrows recall what was sent. A line
// is measured as the server measures it (UTF-8 bytes, model/line-limit.js): one too
// long stays in the field, said so, and is never sent; one the room refuses
// comes back into the field (unless something else was typed meanwhile).
// `/help` alone is answered here (model/help.js).

import { $ } from '../model/ui-dom.js';
import { lineStatus, refusalOf } from '../model/line-limit.js';
import { asksForHelp, pageHelp } from '../model/help.js';

export function wireChat(page) {
  const { connection, log } = page;
  const input = $('chat-input');
  const hint = $('chat-limit');
  const typed = []; // lines sent from the input (not `history`, the window's)
  let historyIndex = 0;
  const measure = () => {
    const status = lineStatus(input.value, page.limits.lineBytes);
    if (hint.textContent !== status.words) hint.textContent = status.words;
    hint.dataset.over = String(status.over);
    if (status.over) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    return status;
  };
  input.addEventListener('input', measure);
  $('chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const line = input.value;
    if (!line.trim()) return;
    if (measure().over) return; // the hint says why; the text stays
    if (asksForHelp(line)) {
      log.add('reply', pageHelp({ host: page.me()?.role === 'host' }).join('\n'));
    } else {
      if (!connection.send(line, { queue: true })) log.add('system', 'Not connected: sent when the connection is back.');
      page.warnOfInsecureLink(line); // an http:// link from an https:// page, said so
      page.chat.last = line;
    }
    typed.push(line);
    historyIndex = typed.length;
    input.value = '';
    measure();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowUp' && historyIndex > 0) {
      input.value = typed[--historyIndex];
      measure();
      event.preventDefault();
    } else if (event.key === 'ArrowDown' && historyIndex < typed.length) {
      input.value = typed[++historyIndex] ?? '';
      measure();
      event.preventDefault();
    }
  });
  page.chat.measure = measure;
}

/**
 * An event the chat input answers to: a refusal of the line typed last puts it
 * back in the field, so that nothing typed is lost (the field must be empty:
 * what was typed since stays); the room's echo of it, or a reply to it, means
 * it was taken.
 */
export function chatHeard(chat, meId, event) {
  if (chat.last == null) return;
  if (event.type === 'chat' && event.from === meId) {
    chat.last = null;
  } else if (event.type === 'reply' && event.command != null && chat.last.toLowerCase().startsWith(`/${event.command}`)) {
    chat.last = null;
  } else if (refusalOf(chat.last, event)) {
    const input = $('chat-input');
    if (!input.disabled && input.value === '') {
      input.value = chat.last;
      chat.measure?.();
    }
    chat.last = null;
  }
}
