// The page's <video>, for links to media files: the contract of players/player.js
// with nothing translated. Readings are the element's own, events are the
// element's own events passed on, and each command is the element's property or
// method, so a file plays exactly as it did before there were other players.

import { VIDEO_CAPABILITIES } from './player.js';

const EVENTS = [
  'loadedmetadata', 'canplay', 'canplaythrough', 'seeked', 'playing', 'waiting', 'ended', 'error', 'progress',
  'ratechange', 'volumechange',
];

export default class VideoPlayer extends EventTarget {
  constructor(host, { video }) {
    super();
    this.video = video;
    this.capabilities = VIDEO_CAPABILITIES;
    this.forward = (event) => this.dispatchEvent(new Event(event.type));
    for (const type of EVENTS) video.addEventListener(type, this.forward);
    video.hidden = false;
  }

  read() {
    const video = this.video;
    const buffered = [];
    for (let i = 0; i < video.buffered.length; i++) buffered.push([video.buffered.start(i), video.buffered.end(i)]);
    const seekable = [];
    for (let i = 0; i < video.seekable.length; i++) seekable.push([video.seekable.start(i), video.seekable.end(i)]);
    return {
      currentTime: video.currentTime,
      paused: video.paused,
      seeking: video.seeking,
      readyState: video.readyState,
      duration: video.duration,
      playbackRate: video.playbackRate,
      buffered,
      seekable,
      error: video.error ? { code: video.error.code, message: video.error.message } : null,
    };
  }

  load(activity) { this.video.src = activity.url; }
  reload() { this.video.load(); }
  play() { return this.video.play(); }
  pause() { this.video.pause(); }
  seek(t) { this.video.currentTime = t; }
  setRate(r) { this.video.playbackRate = r; }

  setVolume(volume, muted) {
    this.video.volume = volume;
    this.video.muted = muted;
  }

  volume() { return { volume: this.video.volume, muted: this.video.muted }; }

  /** Another kind of player takes over: the element stays in the page (it is
   *  the page's), emptied and hidden. */
  destroy() {
    const video = this.video;
    for (const type of EVENTS) video.removeEventListener(type, this.forward);
    video.pause();
    video.removeAttribute('src');
    video.load();
    video.hidden = true;
  }
}
