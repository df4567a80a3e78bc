// The room page: what it sets up, in order. Each part is a module of its own
// under room/, handed only what it reads: the parts the RoomPage makes
// (room/page.js: the room's model, the connection, the server clock, the player,
// the panels) and what other parts give back (the page drawn again, the chat
// field's answer to an event, the seek bar held). Controls never act on the
// video directly: they send the same slash commands a terminal user would type,
// and the video follows the state the server sends back (sync/player-sync.js).

import { Subtitles } from './subtitles.js';
import { $, ChatLog } from './model/ui-dom.js';
import { chooseName, enterRoom, roomOfThisPage, takeLinkSecrets } from './room/arrival.js';
import { RoomPage } from './room/page.js';
import { keepMembership } from './room/membership.js';
import { handleEvent } from './room/events.js';
import { wireChat } from './room/chat.js';
import { wireLinkBox, wireSessionControls, wireTransport } from './room/controls.js';
import { wireSoundAndKeys } from './room/sound-and-keys.js';
import { wireSeekBar } from './room/seek-bar.js';
import { wirePlayback } from './room/playback.js';
import { pageRenderer } from './room/render.js';
import { wireAloneOrTogether } from './room/alone.js';
import { NO_MEDIA_SESSION, wireMediaSession } from './room/media-session.js';
import { wirePictureInPicture } from './room/picture-in-picture.js';
import { wireVoice } from './room/voice.js';

const fromLink = takeLinkSecrets(); // first: the owner key and invite leave the address bar
const room = roomOfThisPage();
const log = new ChatLog($('log'));
const subtitles = new Subtitles($('video'), $('subtitles'), (text) => log.add('error', text));
const video = $('video');

async function main() {
  if (!enterRoom(room, log)) return;
  const name = await chooseName();
  const page = new RoomPage({ room, name, fromLink, log, video });
  const { announcements, clock, connection, door, hostPanel, model, own, ownerKey, slot, sync } = page;
  const me = () => page.me();
  const send = (line) => page.send(line);
  const command = (line) => page.command(line);
  const chat = wireChat({ connection, log, me, warnOfInsecureLink: (line) => page.warnOfInsecureLink(line) });
  const seekBar = wireSeekBar({ sync, me, send, command });
  // The media controls are wired last (they act through the others), and drawn with the page.
  let mediaSession = NO_MEDIA_SESSION;
  const render = pageRenderer({
    room, model, me, command, hostPanel, own, sync, clock, door, announcements,
    seekBarHeld: seekBar.held, mediaSession: () => mediaSession,
  });
  const membership = keepMembership({
    connection, clock, door, log, slot, ownerKey, announcements, model, me, sync, own,
    roomLink: (query) => page.roomLink(query), limitsChanged: chat.limitsChanged, render,
  });
  const heard = { model, me, chat, welcome: membership.welcome, sync, own, subtitles, clock, log, announcements, hostPanel, seekBar, render };
  connection.addEventListener('event', ({ detail }) => handleEvent(heard, detail));
  const together = wireAloneOrTogether({ connection, log, announcements, sync, model, me, command, render }, fromLink, membership.quit);
  wireLinkBox(command, together.watch);
  wireTransport({ sync, model, command });
  const sound = wireSoundAndKeys(video, command);
  const voice = wireVoice({ connection, model, me, log, announcements, sound });
  wireSessionControls({ sync, room, log, me, command });
  const pip = wirePictureInPicture({ room, model, sync, video, log });
  mediaSession = wireMediaSession(
    { room, model, me, sync, video, clock, log, announcements, command },
    { ...together, enterPictureInPicture: pip.enter },
  );
  wirePlayback({ model, me, sync, own, log, toldAbout: page.toldAbout, render });
  window.cowatch = { ...page.debugHandle(() => mediaSession), voice: voice.call };
  connection.open();
}

main().catch((error) => {
  log.add('error', `The page failed to start: ${error.message}`);
  console.error(error);
});
