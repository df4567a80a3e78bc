// This page's call in the room's voice (docs/voice.md): the microphone, the
// WebRTC connection to the room's media server and the voices it plays. The
// room decides who may talk; the server hands a ticket (ICE servers with
// short-lived TURN credentials) and carries the offer and the answer, so the
// media server is never reached but through the room. Thin: what things mean
// is in voice/voice-words.js, how loud the video is in voice/ducking.js.

import { DUCKING_DEFAULTS, duckingStep, quietState, rmsLevel } from './ducking.js';
import { microphoneRefusal, offerLines } from './voice-words.js';

/** How long the page gathers its ICE candidates before it offers what it has. */
const GATHERING_LIMIT_MS = 5000;
/** How often the voices' level is read, for smart volume. */
const LEVEL_EVERY_MS = 50;

export class VoiceCall extends EventTarget {
  /**
   * @param {object} p
   * @param {(line: string) => void} p.send a command to the room
   * @param {(text: string) => void} p.problem says what went wrong, in words
   * @param {HTMLAudioElement} p.audio where the voices play
   * @param {(factor: number) => void} p.duck the video's volume, as a share of the viewer's
   * @param {() => typeof DUCKING_DEFAULTS} p.ducking the person's smart-volume choice
   * @param {() => boolean} p.relay whether this page's media goes through TURN alone
   * @param {() => number} p.lineBytes the longest line the room takes (its welcome's limit)
   */
  constructor({ send, problem, audio, duck, ducking, relay, lineBytes }) {
    super();
    Object.assign(this, { sendLine: send, problem, audio, duck, ducking, relay, lineBytes });
    this.phase = 'off';
    this.muted = false;
    this.pushToTalk = false;
    this.talking = false;
    this.microphone = null;
    this.peer = null;
    this.meter = null;
  }

  changed() { this.dispatchEvent(new Event('change')); }

  /** Joins: the microphone first (asked only now), then the room's ticket. */
  async join() {
    if (this.phase !== 'off') return;
    this.phase = 'microphone';
    this.changed();
    try {
      if (!navigator.mediaDevices?.getUserMedia) throw Object.assign(new Error('no media devices'), { name: 'NoMediaDevices' });
      this.microphone = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      });
    } catch (error) {
      this.phase = 'off';
      this.problem(microphoneRefusal(error));
      this.changed();
      return;
    }
    this.applyMute();
    this.phase = 'connecting';
    this.changed();
    this.sendLine('/voice join');
  }

  /** The room's ticket: the connection is made and offered. */
  async ticket(event) {
    if (this.phase !== 'connecting' || this.peer) return;
    const peer = new RTCPeerConnection({
      iceServers: event.iceServers,
      iceTransportPolicy: this.relay() ? 'relay' : 'all',
    });
    this.peer = peer;
    for (const track of this.microphone.getAudioTracks()) peer.addTrack(track, this.microphone);
    peer.addEventListener('track', ({ streams }) => this.hear(streams[0]));
    peer.addEventListener('connectionstatechange', () => {
      if (peer !== this.peer) return;
      if (peer.connectionState === 'failed') {
        this.problem('Voice lost its connection to the room\'s media server. Join again to try once more.');
        this.leave();
      }
    });
    try {
      await peer.setLocalDescription(await peer.createOffer());
      await gathered(peer, GATHERING_LIMIT_MS);
      if (peer !== this.peer) return;
      for (const line of offerLines(peer.localDescription.sdp, this.lineBytes())) this.sendLine(line);
    } catch (error) {
      this.problem(`Voice could not start a call here (${error.message}).`);
      this.leave();
    }
  }

  /** The media server's answer: the call is up. */
  async answer(event) {
    const peer = this.peer;
    if (!peer || this.phase !== 'connecting') return;
    try {
      await peer.setRemoteDescription({ type: 'answer', sdp: event.sdp });
      this.phase = 'on';
    } catch (error) {
      this.problem(`Voice could not take the media server's answer (${error.message}).`);
      this.leave();
    }
    this.changed();
  }

  /** The voices play, and their level lowers the video while someone speaks. */
  hear(stream) {
    this.audio.srcObject = stream;
    this.audio.play().catch(() => {});
    this.stream = stream;
    this.meterFollows();
  }

  /** The voices' level is read only while smart volume is on: off, no audio
   *  graph runs in the page at all. */
  meterFollows() {
    const wanted = this.stream != null && this.phase !== 'off' && this.ducking().enabled;
    if (!wanted) {
      this.stopMeter();
      return;
    }
    if (this.meter) return;
    const stream = this.stream;
    const context = new AudioContext();
    const analyser = context.createAnalyser();
    analyser.fftSize = 1024;
    context.createMediaStreamSource(stream).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    let state = quietState();
    const timer = setInterval(() => {
      analyser.getFloatTimeDomainData(samples);
      const step = duckingStep(state, { level: rmsLevel(samples), now: performance.now() }, this.ducking());
      state = step.state;
      this.duck(step.factor);
    }, LEVEL_EVERY_MS);
    this.meter = { context, timer };
  }

  stopMeter() {
    if (!this.meter) return;
    clearInterval(this.meter.timer);
    this.meter.context.close().catch(() => {});
    this.meter = null;
    this.duck(1);
  }

  /** Leaves: the room is told (unless it already let the seat go), and everything here stops. */
  leave({ tellRoom = true } = {}) {
    if (this.phase === 'off') return;
    if (tellRoom) this.sendLine('/voice leave');
    this.peer?.close();
    this.peer = null;
    for (const track of this.microphone?.getTracks() ?? []) track.stop();
    this.microphone = null;
    this.stopMeter();
    this.audio.srcObject = null;
    this.stream = null;
    this.phase = 'off';
    this.talking = false;
    this.changed();
  }

  /** The person's own microphone switch. */
  setMuted(muted) {
    if (this.muted === muted) return;
    this.muted = muted;
    this.applyMute();
    if (this.phase !== 'off') this.sendLine(muted ? '/voice mute' : '/voice unmute');
    this.changed();
  }

  /** Push to talk: on, the microphone is open only while the key is held. */
  setPushToTalk(on) {
    this.pushToTalk = on;
    this.talking = false;
    this.setMuted(on);
    this.applyMute();
    this.changed();
  }

  talk(down) {
    if (!this.pushToTalk || this.phase !== 'on' || this.talking === down) return;
    this.talking = down;
    this.muted = !down;
    this.applyMute();
    this.sendLine(down ? '/voice unmute' : '/voice mute');
    this.changed();
  }

  applyMute() {
    for (const track of this.microphone?.getAudioTracks() ?? []) track.enabled = !this.muted;
  }
}

/** Resolves once the connection has gathered its candidates, or after `limit` ms. */
function gathered(peer, limit) {
  if (peer.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      peer.removeEventListener('icegatheringstatechange', check);
      resolve();
    };
    const check = () => { if (peer.iceGatheringState === 'complete') done(); };
    const timer = setTimeout(done, limit);
    peer.addEventListener('icegatheringstatechange', check);
  });
}
