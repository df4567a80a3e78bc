// `/help` on the room page: what a person on this page can type, short, in the
// page's words; a host's commands only for hosts. The server's `/help` lists
// every command for every client (a terminal's keys, the reports a player sends
// by itself); `/help <command>` still goes to the server, which explains one.
// Pure: who is asking in, lines out (rendered as a reply: "usage - what").

const EVERYONE = [
  '/play, /pause - play or pause for everyone (the Play button, or Space)',
  '/seek <time> - move everyone: 1:35, +10, -10 (or the seek bar)',
  '/rate <rate> - the speed for everyone, 0.25 to 4',
  '/watch <link> [title] - share a video now; /queue <link> adds it to "Up next"',
  '/next - everyone moves to the next video in the queue',
  '/catchup [seconds] - for you alone: replay what you missed at 2×',
  '/leave, /join - stop or start following the group (you stay in the chat)',
  '/subtitles <link> [label] - add a subtitle track (a WebVTT file)',
  '/nick <name> - change your name',
  '/me <text> - an action line: * you waves',
  '/who, /status - who is here; what plays and where',
  '/autoplay on|off - go on to the next video when one ends',
  '/help <command> - more about one command',
];

const HOSTS = [
  '/kick, /ban, /mute, /unmute <name> - moderate (also beside each member)',
  '/op, /deop <name> - make a member a host, or not',
  '/lock, /unlock, /password, /invite - who may come in (also under "Room settings")',
  '/policy, /slow - who controls playback, what a stall does; slow chat',
  '/dequeue, /move - take out or reorder the queue (also beside each item)',
];

/** The lines of the page's `/help` for this member (`host`: a host, the owner too). */
export function pageHelp({ host = false } = {}) {
  return [
    'Type a message to chat; a line starting with / is a command (//text sends "/text" as chat).',
    ...EVERYONE,
    ...(host ? ['For hosts:', ...HOSTS] : []),
  ];
}

/** Whether a typed line asks for the page's help (`/help` alone; `/help seek` goes to the server). */
export function asksForHelp(line) {
  return /^\/help\s*$/i.test(line.trim());
}
