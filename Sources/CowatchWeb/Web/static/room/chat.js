// The chat input: anything typed goes to the room as it is (chat, or a slash
// command), queued while disconnected; the arrows recall what was sent. A line
// is measured as the server measures it (UTF-8 bytes, model/line-limit.js): one too
// long stays in the field, said so, and is never sent; one the room refuses
// comes back into the field (unless something else was typed meanwhile).
// `/help` alone is answered here (model/help.js).

import { $ } from '../model/ui-dom.js';
import { DEFAULT_LIMITS, fateOfLine, lineStatus } from '../model/line-limit.js';
import { asksForHelp, pageHelp } from '../model/help.js';

/**
 * @param {object} p
 * @param {import('../model/connection-socket.js').Connection} p.connection
 * @param {import('../model/ui-dom.js').ChatLog} p.log
 * @param {() => object|null} p.me this page's member, once welcomed
 * @param {(line: string) => void} p.warnOfInsecureLink says so of an http:// link shared from an https:// page
 * @returns {{ heard: (meId: string|null, event: object) => void, limitsChanged: (limits: { lineBytes: number }) => void }}
 *   what the room's events tell the field: an event heard, the server's limits from its welcome
 */
export function wireChat({ connection, log, me, warnOfInsecureLink }) {
  let { lineBytes } = DEFAULT_LIMITS; // the server's, from its welcome
  let last = null; // the line typed last, until the room takes or refuses it
  const input = $('chat-input');
  const hint = $('chat-limit');
  const typed = []; // lines sent from the input (not `history`, the window's)
  let historyIndex = 0;
  const measure = () => {
    const status = lineStatus(input.value, lineBytes);
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
      log.add('reply', pageHelp({ host: me()?.role === 'host' }).join('\n'));
    } else {
      if (!connection.send(line, { queue: true })) log.add('system', 'Not connected: sent when the connection is back.');
      warnOfInsecureLink(line); // an http:// link from an https:// page, said so
      last = line;
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

  return {
    /**
     * An event the chat input answers to: a refusal of the line typed last puts
     * it back in the field, so that nothing typed is lost (the field must be
     * empty: what was typed since stays); the room's echo of it, or a reply to
     * it, means it was taken.
     */
    heard(meId, event) {
      const fate = fateOfLine(last, meId, event);
      if (fate == null) return;
      if (fate === 'refused' && !input.disabled && input.value === '') {
        input.value = last;
        measure();
      }
      last = null;
    },
    limitsChanged(limits) {
      ({ lineBytes } = limits);
      measure();
    },
  };
}
