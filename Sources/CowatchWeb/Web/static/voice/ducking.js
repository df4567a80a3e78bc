// Smart volume, pure: while someone else speaks in voice, the video is lowered
// on this page, and it comes back once they stop. The voice call
// (voice/voice-call.js) measures what this page hears from the room's voice
// (the media server mixes everyone but this page's own microphone into it) and
// asks here how loud the video should be; the page's sound
// (room/sound-and-keys.js) multiplies the viewer's own volume by the answer.
// Only the volume: the video's clock and the room's sync never hear of voice.

/** What a person can change (room/voice.js keeps their choice). */
export const DUCKING_DEFAULTS = Object.freeze({
  enabled: true,
  /** The video's volume while others speak, as a share of the viewer's own. */
  depth: 0.3,
  /** How long the video takes to go down, and to come back, in milliseconds. */
  attackMs: 150,
  releaseMs: 800,
  /** How long after the last loud moment the video stays down (a pause between words). */
  holdMs: 600,
  /** The voices' level (RMS of the samples, 0..1) from which someone speaks. */
  threshold: 0.01,
});

/** @returns {{ factor: number, lastLoud: number, at: number|null }} */
export function quietState() {
  return { factor: 1, lastLoud: -Infinity, at: null };
}

/**
 * One measurement of the voices: the state after it, and the factor the
 * video's volume is multiplied by now (1: as the viewer set it).
 * @param {ReturnType<typeof quietState>} state
 * @param {{ level: number, now: number }} sample the RMS level heard, and when (ms)
 * @param {typeof DUCKING_DEFAULTS} settings
 */
export function duckingStep(state, { level, now }, settings = DUCKING_DEFAULTS) {
  const depth = Math.min(1, Math.max(0, settings.depth));
  const lastLoud = level >= settings.threshold ? now : state.lastLoud;
  const target = settings.enabled && now - lastLoud <= settings.holdMs ? depth : 1;
  const elapsed = state.at == null ? 0 : Math.max(0, now - state.at);
  const span = 1 - depth;
  let factor = state.factor;
  if (span <= 0 || !settings.enabled) {
    factor = target;
  } else if (target < factor) {
    factor = Math.max(target, factor - span * elapsed / Math.max(1, settings.attackMs));
  } else if (target > factor) {
    factor = Math.min(target, factor + span * elapsed / Math.max(1, settings.releaseMs));
  }
  return { state: { factor, lastLoud, at: now }, factor };
}

/** The RMS level of a block of samples (-1..1), as `duckingStep` takes it. */
export function rmsLevel(samples) {
  if (!samples.length) return 0;
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}
