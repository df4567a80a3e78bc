// The voice panel's decisions, pure: what a refused microphone means in words,
// the line that carries an offer, and what the panel shows for a call and the
// room's roster (room/voice.js draws it; voice/voice-call.js makes the call).

/**
 * Why the microphone could not be had, in words a person can act on
 * (`getUserMedia`'s errors, by name).
 * @param {{ name?: string }|null} error
 */
export function microphoneRefusal(error) {
  switch (error?.name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return 'Voice needs your microphone, and the browser was not allowed to use it. '
        + 'Allow the microphone for this site (the icon in the address bar), then join voice again.';
    case 'NotFoundError':
    case 'OverconstrainedError':
      return 'No microphone was found. Plug one in, or choose one in your system\'s sound settings, then join voice again.';
    case 'NotReadableError':
    case 'AbortError':
      return 'The microphone is in use by another program, or the system would not open it. Close the other program and try again.';
    case 'NoMediaDevices':
      return 'This page cannot use a microphone: voice needs the room opened over https (or on this machine).';
    default:
      return `The microphone could not be opened (${error?.name || 'unknown error'}).`;
  }
}

/**
 * The lines that carry a session description (base64 of its bytes, which are
 * ASCII): one `/voice offer`, or, when it is longer than a line may be
 * (`lineBytes`, the welcome's limit), `/voice offer part` lines before the last.
 */
export function offerLines(sdp, lineBytes = 4096) {
  const encoded = btoa(sdp);
  const room = Math.max(64, lineBytes - '/voice offer part '.length - 8);
  const lines = [];
  for (let at = 0; at < encoded.length; at += room) {
    const last = at + room >= encoded.length;
    lines.push(`/voice offer ${last ? '' : 'part '}${encoded.slice(at, at + room)}`);
  }
  return lines;
}

/**
 * What the voice panel shows.
 * @param {{ phase: string, muted: boolean, pushToTalk: boolean, talking: boolean }} call this page's call
 * @param {{ mode: string, seats: { id: string, muted: boolean }[] }|null} roster
 * @param {{ id: string, role: string, muted?: boolean }|null} me
 */
export function voicePanel(call, roster, me) {
  if (!roster) return { shown: false };
  const seat = roster.seats.find((s) => s.id === me?.id) ?? null;
  const inCall = call.phase !== 'off';
  const mayJoin = roster.mode === 'on' || (roster.mode === 'hosts' && me?.role === 'host');
  let status;
  if (call.phase === 'microphone') status = 'Asking for your microphone…';
  else if (call.phase === 'connecting') status = 'Connecting to the room\'s voice…';
  else if (call.phase === 'on' && me?.muted) status = 'In voice, muted by a host: the others do not hear you.';
  else if (call.phase === 'on' && call.pushToTalk) status = call.talking ? 'In voice: talking.' : 'In voice: hold T to talk.';
  else if (call.phase === 'on') status = call.muted ? 'In voice, your microphone is off.' : 'In voice: the others hear you.';
  else if (roster.mode === 'off') status = 'A host turned voice off in this room.';
  else if (!mayJoin) status = 'Voice is for hosts only in this room.';
  else status = roster.seats.length ? `${roster.seats.length} in voice.` : 'Nobody is in voice yet.';
  return {
    shown: true,
    // Hosts set who may join, beside their own call.
    mode: me?.role === 'host' ? roster.mode : null,
    status,
    join: !inCall && mayJoin,
    leave: inCall,
    mute: call.phase === 'on' && !call.pushToTalk,
    muteLabel: call.muted ? 'Unmute microphone' : 'Mute microphone',
    seated: seat != null,
  };
}
