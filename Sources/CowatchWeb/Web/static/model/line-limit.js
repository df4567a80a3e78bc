// What the server counts of what is typed (docs/protocol.md, "Client to
// server"): each line's UTF-8 bytes, at most `max-line-bytes` (4 KiB by
// default; a longer line is refused with `too-long`), and each WebSocket
// message's, at most `max-message-bytes` (8 KiB by default; a longer one closes
// the connection with 1009). Pure: text in, numbers and words out.

/** The server's defaults, used until its `welcome` says otherwise (`limits`). */
export const DEFAULT_LIMITS = Object.freeze({ lineBytes: 4096, messageBytes: 8192 });

/** The limits a `welcome` gives, each kept only when it is a positive whole number. */
export function limitsOf(welcome) {
  const given = welcome?.limits ?? {};
  const pick = (value, fallback) => (Number.isInteger(value) && value > 0 ? value : fallback);
  return {
    lineBytes: pick(given.lineBytes, DEFAULT_LIMITS.lineBytes),
    messageBytes: pick(given.messageBytes, DEFAULT_LIMITS.messageBytes),
  };
}

/** The UTF-8 length of `text` in bytes, as the server counts it (a lone surrogate: 3, as its replacement). */
export function utf8Bytes(text) {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length
      && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * What the chat field says of the line in it: nothing while it is well under
 * the limit, how much is left once it is near (the last `warnShare` of it), and
 * how much too long it is past it. `over` lines are not sent.
 * @returns {{ bytes: number, over: boolean, words: string }}
 */
export function lineStatus(text, lineBytes, warnShare = 0.1) {
  const bytes = utf8Bytes(text);
  if (bytes > lineBytes) {
    return {
      bytes, over: true,
      words: `Too long to send: ${bytes} of at most ${lineBytes} bytes (${bytes - lineBytes} too many; `
        + 'an emoji counts 4, an accented letter 2). Shorten it, or send it in parts.',
    };
  }
  if (bytes > lineBytes * (1 - warnShare)) return { bytes, over: false, words: `${lineBytes - bytes} bytes left.` };
  return { bytes, over: false, words: '' };
}

/**
 * Lines kept while disconnected, as messages to send once connected: in order,
 * each message as many whole lines joined by "\n" as fit in `messageBytes`.
 * A line too long for a message of its own goes alone (the server refuses it
 * in words, where a message too long would close the connection).
 */
export function packLines(lines, messageBytes) {
  const messages = [];
  let current = null;
  let size = 0;
  for (const line of lines) {
    const bytes = utf8Bytes(line);
    if (current != null && size + 1 + bytes <= messageBytes) {
      current += `\n${line}`;
      size += 1 + bytes;
    } else {
      if (current != null) messages.push(current);
      current = line;
      size = bytes;
    }
  }
  if (current != null) messages.push(current);
  return messages;
}

/** The command a line names (`/watch x` → "watch"), or null for chat (`//x` too). */
export function commandOf(line) {
  if (!line.startsWith('/') || line.startsWith('//')) return null;
  return line.slice(1).split(/[ \t]/, 1)[0].toLowerCase() || null;
}

/**
 * Whether a refusal (`error`) is the answer to `line`, the one typed last: its
 * command is the line's, or both are chat (an unknown command is refused with no
 * command name: so is chat). Player reports the page sends by itself are not typed.
 */
export function refusalOf(line, error) {
  if (line == null || error?.type !== 'error' || error.code === 'stale-report') return false;
  const named = commandOf(line);
  return (error.command ?? null) === named || (named != null && error.code === 'unknown-command');
}

/**
 * What `event` says of `line`, the one typed last by this page's member
 * (`meId`): 'taken' (the room's echo of it, or a reply to its command),
 * 'refused' (refusalOf), or null while nothing is known yet.
 */
export function fateOfLine(line, meId, event) {
  if (line == null) return null;
  if (event.type === 'chat' && event.from === meId) return 'taken';
  if (event.type === 'reply' && event.command != null && line.toLowerCase().startsWith(`/${event.command}`)) return 'taken';
  return refusalOf(line, event) ? 'refused' : null;
}
