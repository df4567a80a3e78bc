// A host's settings checked before they are sent, pure: why a password or a
// bot's name cannot be used as typed, and what the front-page listing says.
// host-panel-dom.js shows them.

/** As the server takes a password (Sources/SlashCommands/CommandTable.swift, /password). */
export const PASSWORD_MAX = 64;

/** Why `password` cannot be set as typed, in words; null when it can. The
 *  field keeps what was typed so nothing is lost. */
export function passwordProblem(password) {
  if (!password) return 'Type the password newcomers will be asked for.';
  if (/\s/.test(password)) return 'A password cannot have spaces.';
  if ([...password].length > PASSWORD_MAX) return `A password has at most ${PASSWORD_MAX} characters.`;
  if (password.toLowerCase() === 'off') return '"off" is the word that removes the password: choose another.';
  return null;
}

/** Why a bot's name cannot be used as typed; null when it can (the server
 *  checks the name itself too, and says why it refuses one). */
export function botNameProblem(name) {
  if (!name) return 'Type the name the bot will have in the room.';
  if (/\s/.test(name)) return 'A bot\'s name is one word, without spaces.';
  return null;
}

/** Whether the front page shows the room, in the server's words
 *  (Sources/CowatchCore/Room+Access.swift): a locked room or one with a
 *  password is left off the list while it is so. */
export function listingStatus(access) {
  if (!access?.public) return { shown: false, words: 'Not listed on the server\'s front page.' };
  const hold = access.locked && access.password ? 'it is locked and has a password'
    : access.locked ? 'it is locked' : access.password ? 'it has a password' : null;
  if (hold) return { shown: false, words: `To be listed, but not on the server's front page while ${hold}.` };
  return { shown: true, words: 'Listed on the server\'s front page, with what is playing and how many watch.' };
}
