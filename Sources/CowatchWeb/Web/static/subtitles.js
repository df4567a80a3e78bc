// Subtitles: the room's WebVTT tracks for the current activity (`state` →
// session.activity.subtitles, docs/protocol.md "Subtitles"), of which each viewer
// shows one or none. The choice is this browser's own: nothing goes to the server.
// A track is fetched once, through this server (which fetches it from its own
// server, so that no CORS is needed there: docs/protocol.md "Subtitles"),
// checked to be WebVTT, and given to the <video> as a same-origin blob; cues
// follow the video's own position, hence the group's, through seeks, rates and
// catch-up.

const PREFERENCE = 'cowatch.subtitles';

export class Subtitles {
  /** `select`: the picker; `onProblem(text)`: a sentence for the chat log. */
  constructor(video, select, onProblem) {
    this.video = video;
    this.select = select;
    this.onProblem = onProblem;
    this.activity = null;
    this.tracks = [];
    this.loaded = new Map(); // track id -> { element, url }
    this.chosen = '';
    select.addEventListener('change', () => {
      this.chosen = select.value;
      const track = this.tracks.find((t) => t.id === this.chosen);
      try { localStorage.setItem(PREFERENCE, track ? track.label : ''); } catch { /* private mode */ }
      this.show();
    });
  }

  /** A new state: a new activity drops the old tracks; new tracks join the picker. */
  update(activity) {
    const id = activity?.id || null;
    if (id !== this.activity) {
      this.clear();
      this.activity = id;
      this.chosen = '';
    }
    const tracks = activity?.subtitles || [];
    const same = tracks.length === this.tracks.length && tracks.every((t, i) => t.id === this.tracks[i].id);
    if (same) return;
    this.tracks = tracks;
    for (const [trackId, kept] of this.loaded) {
      if (!tracks.some((t) => t.id === trackId)) this.drop(trackId, kept);
    }
    if (!tracks.some((t) => t.id === this.chosen)) {
      // The label this viewer chose last time, if this activity has it.
      let preferred = '';
      try { preferred = localStorage.getItem(PREFERENCE) || ''; } catch { /* private mode */ }
      this.chosen = tracks.find((t) => preferred && t.label === preferred)?.id || '';
    }
    this.render();
    this.show();
  }

  render() {
    const options = [new Option('Subtitles: off', '')]
      .concat(this.tracks.map((t) => new Option(`Subtitles: ${t.label}`, t.id)));
    this.select.replaceChildren(...options);
    this.select.value = this.chosen;
    this.select.hidden = this.tracks.length === 0;
  }

  /** Shows the chosen track (fetching it the first time), hides the others. */
  async show() {
    const wanted = this.chosen;
    for (const [trackId, kept] of this.loaded) kept.element.track.mode = trackId === wanted ? 'showing' : 'disabled';
    if (!wanted || this.loaded.has(wanted)) return;
    const track = this.tracks.find((t) => t.id === wanted);
    if (!track) return;
    const activity = this.activity;
    let text;
    // The room's page is /rooms/<room>; the server answers for the current tracks only.
    const path = `${location.pathname.replace(/\/+$/, '')}/subtitles/${encodeURIComponent(activity)}/${encodeURIComponent(wanted)}`;
    try {
      const response = await fetch(path, { credentials: 'omit' });
      if (!response.ok) {
        // The server says why in words (its fetch refused, the file too large...).
        const why = (await response.text()).trim().slice(0, 300);
        throw new Error(why || `the server answered ${response.status}`);
      }
      text = await response.text();
    } catch (error) {
      this.onProblem(`The subtitles "${track.label}" could not be read (${error.message || 'the server could not be reached'}).`);
      return this.abandon(wanted);
    }
    if (!/^\uFEFF?WEBVTT/.test(text)) {
      this.onProblem(`The subtitles "${track.label}" are not a WebVTT file.`);
      return this.abandon(wanted);
    }
    if (this.activity !== activity || this.loaded.has(wanted)) return;
    const url = URL.createObjectURL(new Blob([text], { type: 'text/vtt' }));
    const element = document.createElement('track');
    element.kind = 'subtitles';
    element.label = track.label;
    element.src = url;
    element.dataset.track = wanted;
    this.video.append(element);
    this.loaded.set(wanted, { element, url });
    element.track.mode = this.chosen === wanted ? 'showing' : 'disabled';
  }

  abandon(trackId) {
    if (this.chosen !== trackId) return;
    this.chosen = '';
    this.select.value = '';
  }

  drop(trackId, kept) {
    kept.element.track.mode = 'disabled';
    kept.element.remove();
    URL.revokeObjectURL(kept.url);
    this.loaded.delete(trackId);
  }

  clear() {
    for (const [trackId, kept] of this.loaded) this.drop(trackId, kept);
    this.tracks = [];
    this.render();
  }
}
