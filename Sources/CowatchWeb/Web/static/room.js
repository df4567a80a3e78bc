// The room page: what it sets up, in order. Each part is a module of its own
// under room/, and they share one RoomPage (room/page.js): the room's model, the
// connection, the server clock, the player and the panels. Controls never act on
// the video directly: they send the same slash commands a terminal user would
// type, and the video follows the state the server sends back (sync/player-sync.js).

import { Subtitles } from './subtitles.js';
import { $, ChatLog } from './model/ui-dom.js';
import { chooseName, enterRoom, roomOfThisPage, takeLinkSecrets } from './room/arrival.js';
import { RoomPage } from './room/page.js';
import { keepMembership, quitRoom } from './room/membership.js';
import { handleEvent } from './room/events.js';
import { wireChat } from './room/chat.js';
import { wireLinkBox, wireSessionControls, wireTransport } from './room/controls.js';
import { wireSoundAndKeys } from './room/sound-and-keys.js';
import { wireSeekBar } from './room/seek-bar.js';
import { wirePlayback } from './room/playback.js';
import { wireAloneOrTogether } from './room/alone.js';
import { wireMediaSession } from './room/media-session.js';
import { wirePictureInPicture } from './room/picture-in-picture.js';

const fromLink = takeLinkSecrets(); // first: the owner key and invite leave the address bar
const room = roomOfThisPage();
const log = new ChatLog($('log'));
const subtitles = new Subtitles($('video'), $('subtitles'), (text) => log.add('error', text));
const video = $('video');

async function main() {
  if (!enterRoom(room, log)) return;
  const name = await chooseName();
  const page = new RoomPage({ room, name, fromLink, log, video, subtitles });
  keepMembership(page);
  page.connection.addEventListener('event', ({ detail }) => handleEvent(page, detail));
  const together = wireAloneOrTogether(page, fromLink, () => quitRoom(page));
  wireLinkBox(page, together.watch);
  wireChat(page);
  wireTransport(page);
  wireSoundAndKeys(video, (line) => page.command(line));
  wireSessionControls(page);
  wireSeekBar(page);
  const pip = wirePictureInPicture(page);
  page.mediaSession = wireMediaSession(page, { ...together, enterPictureInPicture: pip.enter });
  wirePlayback(page);
  window.cowatch = page.debugHandle();
  page.connection.open();
}

main().catch((error) => {
  log.add('error', `The page failed to start: ${error.message}`);
  console.error(error);
});
