// The stand-in's YT.Player (Tests/e2e/youtube_standin.py): the documented
// surface of the YouTube IFrame Player API, over a frame of the stand-in's own
// origin (/embed/<id>) that plays a local video. As with the real widget, the
// page and the frame are different origins and talk only by postMessage: the
// widget says `listening` until the frame answers, sends `command`s, and keeps
// what the frame posts (`infoDelivery` every 250 ms and on changes) to answer
// the getters; getCurrentTime adds, while playing, the time since the last post
// (at most 1 s), as the real widget does.
(function () {
  const origin = new URL(document.currentScript.src).origin;
  const PlayerState = Object.freeze({ UNSTARTED: -1, ENDED: 0, PLAYING: 1, PAUSED: 2, BUFFERING: 3, CUED: 5 });
  let widgets = 0;

  class Player {
    constructor(elementOrId, options = {}) {
      let element = typeof elementOrId === 'string' ? document.getElementById(elementOrId) : elementOrId;
      if (!element) throw new Error('YT.Player: no such element');
      if (element.tagName !== 'IFRAME') {
        const iframe = document.createElement('iframe');
        const vars = new URLSearchParams({ enablejsapi: '1', origin: location.origin, ...(options.playerVars || {}) });
        iframe.src = `${origin}/embed/${encodeURIComponent(options.videoId || '')}?${vars}`;
        if (options.width) iframe.width = options.width;
        if (options.height) iframe.height = options.height;
        element.replaceWith(iframe);
        element = iframe;
      }
      this.iframe = element;
      this.id = ++widgets;
      this.events = options.events || {};
      this.playerInfo = { playerState: -1, currentTime: 0, currentTimeLastUpdated_: 0, duration: 0, playbackRate: 1,
        availablePlaybackRates: [1], videoLoadedFraction: 0, muted: false, volume: 100 };
      this.listener = (event) => this.receive(event);
      window.addEventListener('message', this.listener);
      this.listening = setInterval(() => this.post({ event: 'listening', id: this.id, channel: 'widget' }), 100);
      this.iframe.addEventListener('load', () => this.post({ event: 'listening', id: this.id, channel: 'widget' }));
    }

    post(message) {
      this.iframe.contentWindow?.postMessage(JSON.stringify(message), origin);
    }

    command(func, args = []) {
      this.post({ event: 'command', func, args, id: this.id, channel: 'widget' });
    }

    emit(name, data) {
      const handler = this.events[name];
      if (typeof handler === 'function') handler({ target: this, data });
    }

    receive(event) {
      if (event.origin !== origin || event.source !== this.iframe.contentWindow) return;
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      switch (message.event) {
        case 'initialDelivery':
        case 'infoDelivery':
          Object.assign(this.playerInfo, message.info);
          break;
        case 'onReady':
          clearInterval(this.listening);
          this.emit('onReady');
          break;
        case 'onStateChange':
          this.playerInfo.playerState = message.info;
          this.emit('onStateChange', message.info);
          break;
        case 'onError':
          this.emit('onError', message.info);
          break;
        case 'onPlaybackRateChange':
          this.playerInfo.playbackRate = message.info;
          this.emit('onPlaybackRateChange', message.info);
          break;
        case 'onAutoplayBlocked':
          this.emit('onAutoplayBlocked');
          break;
        default:
          break;
      }
    }

    playVideo() { this.command('playVideo'); }
    pauseVideo() { this.command('pauseVideo'); }
    stopVideo() { this.command('stopVideo'); }
    seekTo(seconds, allowSeekAhead) { this.command('seekTo', [seconds, allowSeekAhead]); }
    loadVideoById(id, start = 0) { this.command('loadVideoById', typeof id === 'object' ? [id.videoId, id.startSeconds || 0] : [id, start]); }
    cueVideoById(id, start = 0) { this.command('cueVideoById', typeof id === 'object' ? [id.videoId, id.startSeconds || 0] : [id, start]); }
    setPlaybackRate(rate) { this.command('setPlaybackRate', [rate]); }
    mute() { this.playerInfo.muted = true; this.command('mute'); }
    unMute() { this.playerInfo.muted = false; this.command('unMute'); }
    isMuted() { return this.playerInfo.muted; }
    setVolume(volume) { this.playerInfo.volume = volume; this.command('setVolume', [volume]); }
    getVolume() { return this.playerInfo.volume; }

    getCurrentTime() {
      let time = this.playerInfo.currentTime;
      if (this.playerInfo.playerState === 1) {
        const since = (Date.now() / 1000 - this.playerInfo.currentTimeLastUpdated_) * this.playerInfo.playbackRate;
        if (since > 0) time += Math.min(since, 1);
      }
      return time;
    }

    getDuration() { return this.playerInfo.duration; }
    getPlayerState() { return this.playerInfo.playerState; }
    getPlaybackRate() { return this.playerInfo.playbackRate; }
    getAvailablePlaybackRates() { return this.playerInfo.availablePlaybackRates; }
    getVideoLoadedFraction() { return this.playerInfo.videoLoadedFraction; }
    getIframe() { return this.iframe; }

    destroy() {
      clearInterval(this.listening);
      window.removeEventListener('message', this.listener);
      this.iframe.remove();
    }
  }

  window.YT = { Player, PlayerState, loaded: 1 };
  if (typeof window.onYouTubeIframeAPIReady === 'function') window.onYouTubeIframeAPIReady();
}());
