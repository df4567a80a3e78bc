// This player only: volume, mute, fullscreen, and the keyboard's shortcuts.
// Sound and fullscreen never act for the room; the keys for play and seeking
// send the room's commands, as the buttons do.

import { $ } from '../ui.js';

export function wireSoundAndKeys(page) {
  const { video } = page;
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
  document.addEventListener('keydown', (event) => {
    // Keys typed into a field, or that a focused control handles itself (space on
    // a button, arrows on a slider), are theirs, not shortcuts.
    // A held key repeats: one press, one action. The chat log scrolls with space.
    const target = event.target;
    const own = target instanceof HTMLElement
      && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON'].includes(target.tagName)
        || target.id === 'log');
    if (own || event.repeat || event.ctrlKey || event.metaKey || event.altKey) return;
    switch (event.key) {
      case ' ':
        if (!$('play').disabled) $('play').click();
        break;
      case 'ArrowLeft':
        if (!$('seek').disabled) page.command('/seek -5');
        break;
      case 'ArrowRight':
        if (!$('seek').disabled) page.command('/seek +5');
        break;
      case 'm': case 'M':
        toggleMute();
        break;
      case 'f': case 'F':
        toggleFullscreen();
        break;
      default:
        return;
    }
    event.preventDefault();
  });
  renderSound();
}
