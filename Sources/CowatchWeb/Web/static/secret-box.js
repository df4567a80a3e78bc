// Secrets the server shows once (a room's owner key, an invite link, a bot's
// token): each in a box of its own that stays until its reader closes it, with
// what it is for, that it is shown once, and a copy button beside each value.
// The chat log scrolls; these must not.

import { copyText } from './copy.js';
import { el } from './model/ui-dom.js';

/**
 * Adds a box to `container` and returns it.
 * @param {HTMLElement} container
 * @param {object} secret
 * @param {string} secret.kind     'owner' | 'invite' | 'token' (a class, and what tests look for)
 * @param {string} secret.title    one line: what this is
 * @param {string} secret.text     what it is for, and that it is shown once
 * @param {{label: string, value: string}[]} secret.values  each shown read-only with a copy button
 */
export function showSecret(container, { kind, title, text, values }) {
  const status = el('span', { class: 'copy-status', role: 'status', 'aria-live': 'polite' });
  const rows = values.map(({ label, value }) => {
    const field = el('input', { type: 'text', readonly: true, value, 'aria-label': label, spellcheck: 'false', autocomplete: 'off' });
    field.addEventListener('focus', () => field.select());
    const copy = el('button', { type: 'button', class: 'copy' }, 'Copy');
    copy.addEventListener('click', async () => {
      const copied = await copyText(value);
      status.textContent = copied ? `${label} copied.` : `Could not copy: select the ${label.toLowerCase()} and copy it yourself.`;
      if (!copied) field.select();
    });
    return el('div', { class: 'secret-row' }, el('label', {}, label), field, copy);
  });
  const close = el('button', { type: 'button', class: 'close', 'aria-label': `Close: ${title}`, title: 'Close (the value is not shown again)' }, '×');
  const box = el('section', { class: `secret ${kind}`, 'aria-label': title }, // a section with a name is a region
    el('header', {}, el('h2', {}, title), close),
    el('p', {}, text), ...rows, status);
  close.addEventListener('click', () => box.remove());
  container.prepend(box);
  return box;
}
