// This player only: volume, mute, fullscreen, and the keyboard's shortcuts
// (listed on the page, room.html #keys). Sound and fullscreen never act for the
// room; the keys for play and seeking send the room's commands, as the buttons
// do. The video's volume is the viewer's own times smart volume's share while
// others speak in voice (voice/ducking.js): the slider shows the viewer's own. "/" goes to the chat and Esc leaves it, so that someone on a keyboard
// alone is never more than a key away from either.

import { $ } from '../model/ui-dom.js';

/** Inputs nobody types into. */
const NOT_TYPED = new Set(['range', 'checkbox', 'radio', 'button', 'submit', 'reset', 'file', 'color']);
/** Keys a focused control acts on itself. */
const CONTROL_KEYS = new Set([' ', 'Enter', 'ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End', 'PageUp', 'PageDown']);

/**
 * @param {HTMLVideoElement} video @param {(line: string) => void} command sends a command the viewer asked for
 * @returns {{ duck: (share: number) => void }} smart volume's hold on the video's volume
 */
export function wireSoundAndKeys(video, command) {
  const viewer = { volume: video.volume, muted: video.muted };
  let share = 1;
  const apply = () => {
    video.volume = Math.min(1, Math.max(0, viewer.volume * share));
    video.muted = viewer.muted;
  };
  const renderSound = () => {
    $('mute').textContent = viewer.muted || viewer.volume === 0 ? 'Unmute' : 'Mute';
    $('volume').value = String(viewer.muted ? 0 : viewer.volume);
  };
  const toggleMute = () => {
    viewer.muted = !viewer.muted;
    if (!viewer.muted && viewer.volume === 0) viewer.volume = 1;
    apply();
    renderSound();
  };
  const toggleFullscreen = () => {
    // The screen (video and its overlay), so the group's messages stay visible;
    // the video element keeps playing on the same clock.
    if (document.fullscreenElement) document.exitFullscreen?.();
    else document.querySelector('.screen')?.requestFullscreen?.().catch(() => {});
  };
  $('mute').addEventListener('click', toggleMute);
  $('volume').addEventListener('input', (event) => {
    viewer.volume = Number(event.target.value);
    viewer.muted = viewer.volume === 0;
    apply();
    renderSound();
  });
  $('fullscreen').addEventListener('click', toggleFullscreen);
  // The first Tab stop: past the player's controls, straight to the chat.
  document.querySelector('.skip-link')?.addEventListener('click', (event) => {
    event.preventDefault();
    $('chat-input').focus();
  });
  $('chat-input').addEventListener('keydown', (event) => {
    if (event.key === 'Escape') $('chat-input').blur();
  });
  document.addEventListener('keydown', (event) => {
    // Keys typed into a field are the field's. Space, Enter and the arrows on a
    // focused control (a button, a slider, a list, the chat log that scrolls)
    // are the control's; the letters and "/" and "?" mean nothing there, so
    // they stay shortcuts. A held key repeats: one press, one action.
    const target = event.target;
    const typing = target instanceof HTMLElement && (target.isContentEditable || target.tagName === 'TEXTAREA'
      || (target.tagName === 'INPUT' && !NOT_TYPED.has(target.type)));
    const control = target instanceof HTMLElement && target !== document.body
      && (target.matches('button, select, input, summary, a[href], [tabindex]') || target.id === 'log');
    if (typing || event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
    if (control && CONTROL_KEYS.has(event.key)) return;
    switch (event.key) {
      case ' ':
        if (!$('play').disabled) $('play').click();
        break;
      case 'ArrowLeft':
        if (!$('seek').disabled) command('/seek -5');
        break;
      case 'ArrowRight':
        if (!$('seek').disabled) command('/seek +5');
        break;
      case 'm': case 'M':
        toggleMute();
        break;
      case 'f': case 'F':
        toggleFullscreen();
        break;
      case 'p': case 'P':
        if (!$('pip').disabled) $('pip').click();
        break;
      case '/':
        if ($('chat-input').disabled) return;
        $('chat-input').focus();
        break;
      case '?':
        $('keys').open = !$('keys').open;
        if ($('keys').open) $('keys').querySelector('summary').focus();
        break;
      default:
        return;
    }
    event.preventDefault();
  });
  renderSound();
  return {
    duck(next) {
      if (next === share) return;
      share = next;
      apply();
    },
  };
}
