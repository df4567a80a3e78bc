// The voice panel (docs/voice.md): join and leave the room's voice, the
// microphone's switch and push to talk (hold T), the voices' own volume, and
// smart volume (the video lowered while others speak). Shown when the server
// has voice. What the room says of voice reaches here as events: the ticket
// and the answer make the call (voice/voice-call.js); a refusal or a seat the
// room took back ends it; after a reconnect the call is made again, since
// the room let the seat go with the connection.

import { $ } from '../model/ui-dom.js';
import { DUCKING_DEFAULTS } from '../voice/ducking.js';
import { VoiceCall } from '../voice/voice-call.js';
import { voicePanel } from '../voice/voice-words.js';

const KEPT = 'cowatch.voice';

/** The person's voice choices, as this browser kept them. */
function keptChoices() {
  const defaults = { duck: DUCKING_DEFAULTS.enabled, depth: DUCKING_DEFAULTS.depth, relay: false, pushToTalk: false, volume: 1 };
  try {
    const kept = JSON.parse(localStorage.getItem(KEPT) ?? '{}');
    return {
      duck: typeof kept.duck === 'boolean' ? kept.duck : defaults.duck,
      depth: [0, 0.15, 0.3, 0.5].includes(kept.depth) ? kept.depth : defaults.depth,
      relay: kept.relay === true,
      pushToTalk: kept.pushToTalk === true,
      volume: typeof kept.volume === 'number' && kept.volume >= 0 && kept.volume <= 1 ? kept.volume : defaults.volume,
    };
  } catch {
    return defaults;
  }
}

/**
 * @param {object} p
 * @param {EventTarget & { send: (line: string) => boolean }} p.connection
 * @param {{ voice: object|null }} p.model the room's model (model/events.js)
 * @param {() => object|null} p.me
 * @param {{ add: (kind: string, text: string) => void }} p.log
 * @param {{ say: (text: string) => void, speak: () => void }} p.announcements
 * @param {{ duck: (share: number) => void }} p.sound room/sound-and-keys.js's
 */
export function wireVoice({ connection, model, me, log, announcements, sound }) {
  const choices = keptChoices();
  const keep = () => { try { localStorage.setItem(KEPT, JSON.stringify(choices)); } catch { /* private mode: not kept */ } };
  const audio = $('voice-audio');
  audio.volume = choices.volume;
  let lineBytes = 4096;
  const call = new VoiceCall({
    send: (line) => connection.send(line),
    problem: (text) => {
      log.add('error', text);
      announcements.say(text);
      announcements.speak();
    },
    audio,
    duck: (share) => sound.duck(share),
    ducking: () => ({ ...DUCKING_DEFAULTS, enabled: choices.duck, depth: choices.depth }),
    relay: () => choices.relay,
    lineBytes: () => lineBytes,
  });

  const render = () => {
    const panel = voicePanel(call, model.voice, me());
    $('voice-panel').hidden = !panel.shown;
    if (!panel.shown) return;
    $('voice-status').textContent = panel.status;
    $('voice-join').hidden = !panel.join;
    $('voice-leave').hidden = !panel.leave;
    $('voice-mute').hidden = !panel.mute;
    $('voice-mute').textContent = panel.muteLabel;
    $('voice-mute').setAttribute('aria-pressed', String(call.muted));
    $('voice-mode-row').hidden = panel.mode == null;
    if (panel.mode != null && document.activeElement !== $('voice-mode')) $('voice-mode').value = panel.mode;
  };
  call.addEventListener('change', render);

  $('voice-join').addEventListener('click', () => call.join());
  // A host's choice of who may join: the room says it back in its `voice` event.
  $('voice-mode').addEventListener('change', (event) => connection.send(`/voice ${event.target.value}`));
  $('voice-leave').addEventListener('click', () => call.leave());
  $('voice-mute').addEventListener('click', () => call.setMuted(!call.muted));
  const ptt = $('voice-ptt');
  ptt.checked = choices.pushToTalk;
  call.pushToTalk = choices.pushToTalk;
  call.muted = choices.pushToTalk;
  ptt.addEventListener('change', () => {
    choices.pushToTalk = ptt.checked;
    keep();
    call.setPushToTalk(ptt.checked);
  });
  const volume = $('voice-volume');
  volume.value = String(choices.volume);
  volume.addEventListener('input', () => {
    choices.volume = Number(volume.value);
    audio.volume = choices.volume;
    keep();
  });
  const duck = $('voice-duck');
  duck.checked = choices.duck;
  duck.addEventListener('change', () => {
    choices.duck = duck.checked;
    keep();
    call.meterFollows();
  });
  const depth = $('voice-duck-depth');
  depth.value = String(choices.depth);
  depth.addEventListener('change', () => { choices.depth = Number(depth.value); keep(); });
  const relay = $('voice-relay');
  relay.checked = choices.relay;
  relay.addEventListener('change', () => { choices.relay = relay.checked; keep(); });

  // Push to talk: T held outside a text field.
  const typing = (target) => target instanceof HTMLElement && (target.isContentEditable
    || target.tagName === 'TEXTAREA' || (target.tagName === 'INPUT' && !['checkbox', 'range', 'button'].includes(target.type)));
  document.addEventListener('keydown', (event) => {
    if ((event.key === 't' || event.key === 'T') && !event.repeat && !typing(event.target)) call.talk(true);
  });
  document.addEventListener('keyup', (event) => {
    if (event.key === 't' || event.key === 'T') call.talk(false);
  });
  window.addEventListener('blur', () => call.talk(false));

  connection.addEventListener('event', ({ detail: event }) => {
    switch (event.type) {
      case 'welcome':
        lineBytes = event.limits?.lineBytes ?? lineBytes;
        // The room let this page's seat go with its connection: a call that
        // was up is made again.
        if (call.phase !== 'off') {
          const wasOn = call.phase === 'on';
          call.leave({ tellRoom: false });
          if (wasOn) call.join();
        }
        break;
      case 'voice-ticket':
        call.ticket(event);
        break;
      case 'voice-answer':
        call.answer(event);
        break;
      case 'voice':
        // The room took this page's seat back (a host's mode, a lost call).
        if (event.change === 'left' && event.member === me()?.id) call.leave({ tellRoom: false });
        break;
      case 'error':
        if (event.command === 'voice' && call.phase === 'connecting') call.leave({ tellRoom: false });
        if (event.command === 'voice' && event.code === 'voice-unavailable' && call.phase === 'on'
          && !(model.voice?.seats ?? []).some((seat) => seat.id === me()?.id)) call.leave({ tellRoom: false });
        break;
      default:
        break;
    }
    render();
  });
  render();
  return { call, render };
}
