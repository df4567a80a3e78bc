// What the door says, pure: which refusals are the door's to say, and its
// heading and words for a close for good. door-dom.js shows them.

/** Refusals the server explains with an `error` just before it closes
 *  (docs/protocol.md, "Close codes"): the door says them, the chat does not. */
export const DOOR_ERRORS = new Set(['locked', 'password-required', 'wrong-password', 'too-many-attempts', 'banned', 'bad-token']);

/**
 * What the door says for a close for good.
 * @param {{ code: number, reason: string, serverReason?: string }} close as connection-socket.js reports it
 * @returns {{ heading: string, words: string, askPassword: boolean }}
 */
export function doorView({ code, reason, serverReason = '' }) {
  if (code === 4005) {
    if (/try again in/i.test(serverReason)) {
      return { heading: 'This room asks for a password', words: `${capitalize(serverReason)}.`, askPassword: false };
    }
    const wrong = /wrong/i.test(serverReason);
    return {
      heading: 'This room asks for a password',
      words: wrong ? 'That password is not the room\'s. Try again:' : 'Ask a host of the room for it, or for an invite link.',
      askPassword: true,
    };
  }
  const headings = {
    4001: 'You were removed from the room',
    4002: 'Opened in another window',
    4003: 'You cannot enter this room',
    4004: 'This room is locked',
    4006: 'This bot token is not valid here',
  };
  return { heading: headings[code] || 'Disconnected', words: reason || 'Disconnected.', askPassword: false };
}

function capitalize(text) {
  return text ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}
