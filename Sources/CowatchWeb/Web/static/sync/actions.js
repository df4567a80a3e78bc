// The actions one input decides, and the video as they leave it.
//
// No element, timer or socket in sync/. Each input (a state, a video event, a
// tick, a timer firing) comes with the video's readings and returns the actions
// to carry out, in order; player-sync.js reads the video and carries them out.
//
// Readings: `{ now, monotonic, currentTime, paused, seeking, readyState,
// duration, playbackRate, buffered: [[start, end], ...], seekable: [[start,
// end], ...], error: { code, message } | null }`, `now` being server time (ms, server-clock.js) and `monotonic`
// the page's own steady clock (ms, performance.now()).
//
// Actions:
//   { type: 'pause' }
//   { type: 'seek', to }         set currentTime
//   { type: 'rate', rate }       set playbackRate
//   { type: 'play', at, rate }   set the rate, and call play() at server time `at`
//   { type: 'load', activity }   a new item (`state.session.activity`): the
//                                player its source needs loads it
//   { type: 'reload' }           load the source again
//   { type: 'wake', join, ms }   call wake(join) in `ms` (one timer: replaces any)
//   { type: 'cancelWake' }
//   { type: 'probe', id, ms, at } play `ms` out of hearing and pause, then call
//                                probed(id, result): how long the clock took to
//                                start (players/player.js: probe); play() called
//                                at `at` (monotonic ms) when given, else at once
//   { type: 'hush', ms }         out of hearing for `ms`, then the volume as it
//                                was (0: at once), unless the viewer set one
//                                meanwhile (players/video.js: hush)
//   { type: 'send', line }       a report to the server
//   { type: 'note', text }       the player's history, for debugging
//   { type: 'tell', words, url }  a sentence for the viewer about the item at
//                                `url` (as the URL parser writes it)
//
// Within one input the readings are kept up to date with the actions already
// decided, as the element itself would be: a seek sets currentTime and seeking
// at once, pause() sets paused, a new source empties the element.

export class Actions {
  constructor() {
    this.video = null; // the readings, during an input
    this.out = [];
    this.seekTarget = null; // the last position asked of the video
  }

  /** Runs one input against readings `r`; returns its actions. */
  act(r, body) {
    this.video = r ? { ...r } : null;
    this.out = [];
    body();
    const out = this.out;
    this.out = [];
    this.video = null;
    return out;
  }

  note(text) {
    this.out.push({ type: 'note', text });
  }

  send(line) {
    this.out.push({ type: 'send', line });
  }

  tell(words, url) {
    this.out.push({ type: 'tell', words, url });
  }

  pause() {
    if (this.video.paused) return;
    this.out.push({ type: 'pause' });
    this.video.paused = true;
  }

  seek(position) {
    this.seekTarget = position;
    this.out.push({ type: 'seek', to: position });
    this.video.currentTime = position;
    this.video.seeking = true;
  }

  setRate(rate) {
    if (this.video.playbackRate === rate) return;
    this.out.push({ type: 'rate', rate });
    this.video.playbackRate = rate;
  }

  play(at, rate) {
    this.out.push({ type: 'play', at, rate });
    this.video.paused = false;
    this.video.playbackRate = rate;
  }

  loadSource(activity) {
    this.pause();
    this.out.push({ type: 'load', activity });
    Object.assign(this.video, {
      readyState: 0, currentTime: 0, duration: NaN, seeking: false, paused: true, buffered: [], seekable: [], error: null,
    });
  }

  hush(ms) {
    this.out.push({ type: 'hush', ms });
  }

  wakeIn(join, ms) {
    this.out.push({ type: 'wake', join, ms });
  }

  cancelWake() {
    this.out.push({ type: 'cancelWake' });
  }
}
