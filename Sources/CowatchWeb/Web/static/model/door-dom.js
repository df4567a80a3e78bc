// A page the room refused or sent away (locked, a password, banned, kicked, or
// opened again elsewhere): the reason once, in one place over the player, and
// only what the person can still do there: give the password when the room asks
// one, or go back to the start page. The controls that act on a room they are
// not in are hidden (style.css, body.shut), and so is the connection banner,
// which would say the same again.

import { el } from './ui-dom.js';
import { doorView } from './door.js';

/** The door over the player: `shut(close)` shows it; `onPassword(password)`
 *  is called with what the person typed when the room asks a password. */
export class Door {
  constructor(container, { room, onPassword }) {
    this.container = container;
    this.room = room;
    this.onPassword = onPassword;
    this.isShut = false;
  }

  shut(close) {
    const view = doorView(close);
    this.isShut = true;
    document.body.classList.add('shut');
    // The heading takes the focus (the controls it stood on are gone), so that a
    // keyboard's next Tab and a screen reader both start at the reason.
    const heading = el('h2', { id: 'door-heading', tabindex: '-1' }, view.heading);
    const children = [heading, el('p', { id: 'door-text' }, view.words)];
    if (view.askPassword) {
      const field = el('input', {
        id: 'door-password', type: 'password', name: 'password', required: true, maxlength: '64',
        autocomplete: 'current-password', 'aria-labelledby': 'door-heading', placeholder: 'The room\'s password',
      });
      // The room's name as the "user" a password manager files the password under.
      const user = el('input', { type: 'text', name: 'username', autocomplete: 'username', value: this.room, readonly: true, hidden: true });
      const form = el('form', { id: 'door-form', class: 'door-form' }, user, field,
        el('button', { type: 'submit', class: 'primary' }, 'Enter the room'));
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        const password = field.value;
        if (!password) return;
        this.open();
        this.onPassword(password);
      });
      children.push(form);
      queueMicrotask(() => field.focus());
    } else {
      queueMicrotask(() => heading.focus());
    }
    children.push(el('p', {}, el('a', { href: '/' }, 'Back to the start page')));
    this.container.replaceChildren(...children);
    this.container.hidden = false;
  }

  /** Trying again (a password given): the room's page comes back as it was. */
  open() {
    this.isShut = false;
    document.body.classList.remove('shut');
    this.container.hidden = true;
    this.container.replaceChildren();
  }
}
