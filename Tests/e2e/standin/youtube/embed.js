// The stand-in's embedded player (Tests/e2e/youtube_standin.py): a <video> of
// a local file behind the messages YT.Player sends (widgetapi.js), with the
// documented behaviours a test needs:
//   * states -1, 0, 1, 2, 3, 5 as the video goes; seekTo on a cued or
//     unstarted video starts playing it, as the reference says;
//   * rates: only [0.25 ... 2] in quarter steps; another is rounded to one of
//     them in the direction of 1;
//   * the position is posted every 250 ms (infoDelivery) and on each change;
//   * errors by video id: badParam__2 → 2, html5Err__5 → 5, notFound100 → 100,
//     notEmbed101 → 101, notEmbed150 → 150 (after onReady, as a cued video
//     fails), and any id not 11 characters of A-Z a-z 0-9 _ - → 2;
//   * a play() the browser refuses (its autoplay policy) → onAutoplayBlocked;
//   * an ad break: the message { event: 'standin', func: 'adBreak', args: [ms] }
//     from the embedding page holds the player in state 3 (buffering) for ms,
//     the video frozen, then plays on;
//   * live: an id starting with "live" is a live stream that began at the
//     stand-in's start: getDuration() is the time since, and the video plays
//     the file at that position.
(function () {
  const RATES = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2];
  const ERRORS = { badParam__2: 2, html5Err__5: 5, notFound100: 100, notEmbed101: 101, notEmbed150: 150 };
  const INFO_MS = 250;
  const params = new URLSearchParams(location.search);
  const parentOrigin = params.get('origin');
  const liveStart = Number(document.body.dataset.liveStart);
  const video = document.querySelector('video');
  video.src = document.body.dataset.media;
  let id = decodeURIComponent(location.pathname.split('/').pop());
  let widget = null; // the YT.Player's id, from its `listening`
  let state = -1;
  let ready = false;
  let adUntil = 0;
  let adTimer = null;
  let resumeAfterAd = false;

  const live = () => id.startsWith('live');
  const duration = () => {
    if (live()) return (Date.now() - liveStart) / 1000;
    return Number.isFinite(video.duration) ? video.duration : 0;
  };
  const loadedFraction = () => {
    const total = video.duration;
    if (!Number.isFinite(total) || total <= 0 || video.buffered.length === 0) return 0;
    return video.buffered.end(video.buffered.length - 1) / total;
  };

  function post(event, info) {
    if (!parentOrigin) return;
    parent.postMessage(JSON.stringify({ event, info, id: widget, channel: 'widget' }), parentOrigin);
  }

  function info() {
    return {
      playerState: state,
      currentTime: video.currentTime,
      currentTimeLastUpdated_: Date.now() / 1000,
      duration: duration(),
      playbackRate: video.playbackRate,
      availablePlaybackRates: RATES,
      videoLoadedFraction: loadedFraction(),
      videoData: { video_id: id, isLive: live() },
    };
  }

  function setState(next) {
    if (next === state) return;
    state = next;
    post('infoDelivery', info());
    post('onStateChange', state);
  }

  function error() {
    if (!/^[A-Za-z0-9_-]{11}$/.test(id)) return 2;
    return ERRORS[id] ?? null;
  }

  function cue(nextId, start) {
    id = nextId;
    video.pause();
    if (error() == null) video.currentTime = live() ? Math.max(0, duration() - 3) : start;
    setState(-1); // a new video: unstarted, then cued
    setState(5);
    if (ready && error() != null) post('onError', error());
  }

  function play() {
    if (error() != null) {
      post('onError', error());
      return;
    }
    if (performance.now() < adUntil) {
      resumeAfterAd = true;
      return;
    }
    video.play().catch((problem) => {
      if (problem.name === 'NotAllowedError') post('onAutoplayBlocked');
    });
  }

  function roundedRate(rate) {
    if (RATES.includes(rate)) return rate;
    // Toward 1: the largest listed rate not above it (from above 1), the
    // smallest not below it (from below 1).
    if (rate > 1) return Math.max(...RATES.filter((r) => r <= rate));
    return Math.min(...RATES.filter((r) => r >= rate));
  }

  function adBreak(ms) {
    resumeAfterAd = !video.paused;
    adUntil = performance.now() + ms;
    video.pause();
    setState(3);
    clearTimeout(adTimer);
    adTimer = setTimeout(() => {
      adUntil = 0;
      if (resumeAfterAd) play();
      else setState(2);
    }, ms);
  }

  const commands = {
    playVideo: play,
    pauseVideo: () => {
      resumeAfterAd = false;
      video.pause();
    },
    stopVideo: () => {
      video.pause();
      video.currentTime = 0;
      setState(5);
    },
    seekTo: (seconds) => {
      video.currentTime = Math.max(0, Number(seconds) || 0);
      if (state === 5 || state === -1) play();
    },
    cueVideoById: (nextId, start) => cue(String(nextId), Number(start) || 0),
    loadVideoById: (nextId, start) => {
      cue(String(nextId), Number(start) || 0);
      play();
    },
    setPlaybackRate: (rate) => {
      const next = roundedRate(Number(rate) || 1);
      if (next === video.playbackRate) return;
      video.playbackRate = next;
    },
    mute: () => { video.muted = true; },
    unMute: () => { video.muted = false; },
    setVolume: (volume) => { video.volume = Math.min(1, Math.max(0, Number(volume) / 100)); },
  };

  window.addEventListener('message', (event) => {
    if (event.source !== parent || event.origin !== parentOrigin) return;
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    if (message.event === 'listening') {
      widget = message.id;
      if (!ready) {
        ready = true;
        post('initialDelivery', info());
        post('onReady');
        setState(5);
        if (error() != null) post('onError', error());
      }
    } else if (message.event === 'command' && Object.hasOwn(commands, message.func)) {
      commands[message.func](...(message.args || []));
    } else if (message.event === 'standin' && message.func === 'adBreak') {
      adBreak(Number(message.args?.[0]) || 0);
    }
  });

  video.addEventListener('playing', () => setState(1));
  video.addEventListener('pause', () => {
    if (performance.now() >= adUntil && !video.ended) setState(2);
  });
  video.addEventListener('waiting', () => setState(3));
  video.addEventListener('seeking', () => {
    if (!video.paused) setState(3);
  });
  video.addEventListener('seeked', () => {
    if (!video.paused && video.readyState >= 3) setState(1);
    post('infoDelivery', info());
  });
  video.addEventListener('ended', () => setState(0));
  video.addEventListener('ratechange', () => {
    post('infoDelivery', info());
    post('onPlaybackRateChange', video.playbackRate);
  });
  setInterval(() => { if (ready) post('infoDelivery', info()); }, INFO_MS);

  // For the test, which reads the true position in this frame.
  window.standin = { video, state: () => state };
}());
