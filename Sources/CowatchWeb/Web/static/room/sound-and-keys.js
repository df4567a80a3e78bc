// This player only: volume, mute, fullscreen, and the keyboard's shortcuts
// (listed on the page, room.html #keys). Sound and fullscreen never act for the
// room; the keys for play and seeking send the room's commands, as the buttons
// do. "/" goes to the chat and Esc leaves it, so that someone on a keyboard
// alone is never more than a key away from either.

import { $ } from '../model/ui-dom.js';

/** Inputs nobody types into. */
const NOT_TYPED = new Set(['range', 'checkbox', 'radio', 'button', 'submit', 'reset', 'file', 'color']);
/** Keys a focused control acts on itself. */
const CONTROL_KEYS = new Set([' ', 'Enter', 'ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End', 'PageUp', 'PageDown']);

/** @param {HTMLVideoElement} video @param {(line: string) => void} command sends a command the viewer asked for */
export function wireSoundAndKeys(video, command) {
  const renderSound = () => {
    $('mute').textContent = video.muted || video.volume === 0 ? 'Unmute' : 'Mute';
    $('volume').value = String(video.muted ? 0 : video.volume);
  };
  const toggleMute = () => {
    video.muted = !video.muted;
    if (!video.muted && video.volume === 0) video.volume = 1;
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
    video.volume = Number(event.target.value);
    video.muted = video.volume === 0;
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
}
