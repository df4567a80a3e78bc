// A host's room settings, beside the member list: the password, public
// listing, invite links, bans and bot tokens. Each control sends the slash
// command a host would type (docs/protocol.md), and each list is the server's
// reply to /invites, /bans or /tokens; the page decides nothing itself. The
// secrets the server shows once (an invite link, a bot's token) go in a box
// with a copy button (secret-box.js), not in the chat.

import { showSecret } from '../secret-box.js';
import { el } from './ui-dom.js';
import { botNameProblem, listingStatus, PASSWORD_MAX, passwordProblem } from './host-panel.js';

const LISTS = ['bans', 'invites', 'tokens'];

export class HostPanel {
  /**
   * @param {HTMLElement} container the panel's section (hidden for members who are not hosts)
   * @param {object} p
   * @param {string} p.room the room's name
   * @param {(line: string) => void} p.send sends a command
   * @param {HTMLElement} p.secrets where secret boxes go
   * @param {(query: string) => string} p.roomLink the room's address with a query (`invite=...`)
   * @param {(serverMs: number) => number} p.toLocal a server instant as this device's epoch ms
   */
  constructor(container, { room, send, secrets, roomLink, toLocal }) {
    Object.assign(this, { container, room, send, secrets, roomLink, toLocal });
    this.asked = { bans: 0, invites: 0, tokens: 0 }; // replies the panel asked for, not shown in the chat
    this.lists = { bans: null, invites: null, tokens: null };
    this.access = null;
    this.build();
  }

  // MARK: what the page tells it

  /** Shown to hosts alone; the access flags come with every state. */
  render(me, access) {
    const host = me?.role === 'host';
    this.container.hidden = !host;
    if (!host) {
      // No longer a host: nothing to show, nothing to ask the server for.
      this.details.open = false;
      this.lists = { bans: null, invites: null, tokens: null };
      this.asked = { bans: 0, invites: 0, tokens: 0 }; // a refused request has no reply to wait for
      return;
    }
    this.access = access || {};
    const listing = listingStatus(this.access);
    this.listingWords.textContent = listing.words;
    this.listButton.textContent = this.access.public ? 'Stop listing' : 'List on the front page';
    this.listButton.dataset.line = this.access.public ? '/public off' : '/public on';
    this.passwordWords.textContent = this.access.password
      ? 'Newcomers are asked for a password (invite links and the owner key pass without it).'
      : 'Anyone with the room\'s link comes in without a password.';
    this.clearPassword.hidden = !this.access.password;
    this.setPassword.textContent = this.access.password ? 'Change password' : 'Set password';
  }

  /** A reply: lists and once-shown secrets are the panel's. Returns true when
   *  the reply is handled here and is not to be shown in the chat as well. */
  reply(event) {
    switch (event.command) {
      case 'invite':
        if (!event.token) return false;
        this.showInvite(event);
        this.refresh('invites');
        return true;
      case 'token':
        if (!event.token) return false;
        this.showToken(event);
        this.refresh('tokens');
        return true;
      case 'bans':
      case 'invites':
      case 'tokens': {
        const command = event.command;
        this.lists[command] = event[command] || [];
        this.renderList(command);
        if (this.asked[command] > 0) {
          this.asked[command] -= 1;
          return true;
        }
        return false;
      }
      default:
        return false;
    }
  }

  // MARK: the secrets shown once

  showInvite({ invite, token }) {
    const link = this.roomLink(`invite=${encodeURIComponent(token)}`);
    const uses = invite?.usesLeft === 1 ? 'one person' : `${invite?.usesLeft} people`;
    const until = invite?.expires ? this.when(invite.expires) : 'its time runs out';
    showSecret(this.secrets, {
      kind: 'invite',
      title: `Invite link #${invite?.number ?? ''}`,
      text: `Lets ${uses} in, past the lock and the password, until ${until}. Shown once: the room keeps only a digest of it.`,
      values: [{ label: 'Invite link', value: link }],
    });
  }

  showToken({ bot, token }) {
    showSecret(this.secrets, {
      kind: 'token',
      title: `Token for the bot ${bot?.name ?? ''}`,
      text: `A bot that connects with it (?token= on the room's address, or Authorization: Bearer) comes in as ${bot?.name} `
        + `and may ${{ read: 'only read', chat: 'read and chat', control: 'chat and control playback' }[bot?.scope] || 'act'}. `
        + 'Shown once: the room keeps only a digest of it.',
      values: [{ label: 'Bot token', value: token }],
    });
  }

  // MARK: building

  build() {
    const section = (title, ...children) => el('fieldset', { class: 'host-group' }, el('legend', {}, title), ...children);
    const message = () => el('p', { class: 'form-problem', role: 'alert' });

    // Public listing.
    this.listingWords = el('p', { class: 'hint', id: 'listing-status' });
    this.listButton = el('button', { type: 'button', id: 'listing-toggle' }, 'List on the front page');
    this.listButton.addEventListener('click', () => this.send(this.listButton.dataset.line));

    // The password: masked, checked before it is sent, never echoed.
    this.passwordWords = el('p', { class: 'hint', id: 'password-status' });
    const passwordField = el('input', {
      id: 'host-password', type: 'password', name: 'new-password', autocomplete: 'new-password', maxlength: String(PASSWORD_MAX),
      'aria-label': 'New room password', placeholder: 'New password',
    });
    const passwordProblemLine = message();
    this.setPassword = el('button', { type: 'submit' }, 'Set password');
    this.clearPassword = el('button', { type: 'button', id: 'password-clear' }, 'Remove password');
    this.clearPassword.addEventListener('click', () => this.send('/password off'));
    // The room's name as the "user" a password manager files the password under.
    const user = el('input', { type: 'text', name: 'username', autocomplete: 'username', value: this.room, readonly: true, hidden: true });
    const passwordForm = el('form', { id: 'password-form', class: 'host-form' }, user, passwordField, this.setPassword, this.clearPassword);
    passwordForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const problem = passwordProblem(passwordField.value);
      passwordProblemLine.textContent = problem || '';
      if (problem) return;
      this.send(`/password ${passwordField.value}`);
      passwordField.value = '';
    });

    // Invite links.
    const uses = el('input', { id: 'invite-uses', type: 'number', min: '1', max: '1000', value: '1', 'aria-label': 'People the link lets in' });
    const lasting = el('select', { id: 'invite-minutes', 'aria-label': 'How long the link works' },
      el('option', { value: '60' }, 'for an hour'), el('option', { value: '1440', selected: true }, 'for a day'),
      el('option', { value: '10080' }, 'for a week'));
    const inviteProblem = message();
    const inviteForm = el('form', { id: 'invite-form', class: 'host-form' },
      el('label', {}, 'Lets in ', uses, ' people'), lasting, el('button', { type: 'submit' }, 'New invite link'));
    inviteForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const count = Number(uses.value);
      inviteProblem.textContent = Number.isInteger(count) && count >= 1 && count <= 1000 ? '' : 'An invite lets in 1 to 1000 people.';
      if (inviteProblem.textContent) return;
      this.send(`/invite ${count} ${lasting.value}`);
    });
    this.listElements = {
      invites: el('ul', { id: 'invite-list', class: 'host-list' }),
      bans: el('ul', { id: 'ban-list', class: 'host-list' }),
      tokens: el('ul', { id: 'token-list', class: 'host-list' }),
    };

    // Bot tokens.
    const botName = el('input', { id: 'bot-name', type: 'text', maxlength: '32', 'aria-label': 'The bot\'s name', placeholder: 'bot name', autocomplete: 'off' });
    const scope = el('select', { id: 'bot-scope', 'aria-label': 'What the bot may do' },
      el('option', { value: 'read' }, 'read only'), el('option', { value: 'chat', selected: true }, 'read and chat'),
      el('option', { value: 'control' }, 'chat and control playback'));
    const tokenProblem = message();
    const tokenForm = el('form', { id: 'token-form', class: 'host-form' }, botName, scope, el('button', { type: 'submit' }, 'New token'));
    tokenForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const problem = botNameProblem(botName.value.trim());
      tokenProblem.textContent = problem || '';
      if (problem) return;
      this.send(`/token ${botName.value.trim()} ${scope.value}`);
      botName.value = '';
    });

    this.details = el('details', { id: 'host-details' },
      el('summary', {}, 'Room settings'),
      section('Public listing', this.listingWords, this.listButton),
      section('Password', this.passwordWords, passwordForm, passwordProblemLine),
      section('Invite links', inviteForm, inviteProblem, this.listElements.invites),
      section('Bans and kicks', this.listElements.bans),
      section('Bot tokens', tokenForm, tokenProblem, this.listElements.tokens));
    // Opened: the lists as the server has them now.
    this.details.addEventListener('toggle', () => {
      if (this.details.open) for (const list of LISTS) this.refresh(list);
    });
    this.container.replaceChildren(this.details);
  }

  /** Asks the server for a list again; its reply fills the list, not the chat. */
  refresh(list) {
    if (!this.details.open && this.lists[list] == null) return;
    this.asked[list] += 1;
    this.send(`/${list}`);
  }

  renderList(list) {
    const items = this.lists[list] || [];
    const target = this.listElements[list];
    const remove = (label, title, line) => {
      const button = el('button', { type: 'button', class: 'moderate', title }, label);
      button.addEventListener('click', () => {
        this.send(line);
        this.refresh(list);
      });
      return button;
    };
    const empty = { invites: 'No invite links in force.', bans: 'Nobody is banned or kept out.', tokens: 'No bot tokens.' }[list];
    if (items.length === 0) {
      target.replaceChildren(el('li', { class: 'hint' }, empty));
      return;
    }
    target.replaceChildren(...items.map((item) => {
      switch (list) {
        case 'invites':
          return el('li', { 'data-number': item.number },
            `#${item.number}: ${item.usesLeft} ${item.usesLeft === 1 ? 'use' : 'uses'} left, until ${this.when(item.expires)}, by ${item.by}`,
            remove('revoke', `End invite link #${item.number}`, `/revoke ${item.number}`));
        case 'bans': {
          const until = item.until == null ? 'until unbanned' : `until ${this.when(item.until)}`;
          return el('li', { 'data-number': item.number },
            `#${item.number} ${item.name}: ${item.kind === 'kick' ? 'kicked' : 'banned'} by ${item.by} ${until}`
              + (item.reason ? ` (${item.reason})` : ''),
            remove(item.kind === 'kick' ? 'let back in' : 'unban', `Let ${item.name} in again`, `/unban ${item.number}`));
        }
        default:
          return el('li', { 'data-number': item.number }, `#${item.number} ${item.name} (${item.scope}), by ${item.by}`,
            remove('revoke', `Revoke ${item.name}'s token; its connections are closed`, `/untoken ${item.number}`));
      }
    }));
  }

  when(serverMs) {
    return new Date(this.toLocal(serverMs)).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
  }
}
