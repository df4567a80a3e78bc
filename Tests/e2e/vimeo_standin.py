"""A stand-in for Vimeo's player, served on loopback, for the browser tests.

There is no internet here, so the page's Vimeo adapter (static/players/vimeo.js)
is pointed (the `vimeo-api-url` setting) at this server instead of
https://player.vimeo.com/api/player.js. It implements the surface Vimeo
documents for its Player SDK (the README of github.com/vimeo/player.js and
developer.vimeo.com/player/sdk/reference), written here from that description:

- `/api/player.js` defines `window.Vimeo.Player(element, { id, autoplay,
  muted, controls })`. Like the real one, it first asks an oEmbed endpoint
  about the video (`/api/oembed.json?url=https://vimeo.com/ID`): a 404 makes
  `ready()` reject with "“URL” was not found.", a 403 with "“URL” is not
  embeddable.", and no player is made. Then it puts an iframe of its own
  origin (this server's `/video/ID`) into the element and speaks to it only by
  postMessage: `{ method, value }` out, `{ method, value }` replies and
  `{ event, data }` events back, an `error` event naming a method rejecting
  that method's pending promise with an Error of that `name`, as the real
  library does. Every method returns a Promise; `on(event, callback)` /
  `off(...)` as documented.
- `/video/ID` is the player: a <video> of the local test file, which answers
  play, pause, getCurrentTime, setCurrentTime (resolved with the time it
  landed on; RangeError outside 0..duration), getDuration, getPaused,
  getEnded, getSeeking, getBuffered, getPlaybackRate, setPlaybackRate,
  getVolume/setVolume, getMuted/setMuted, getVideoId, unload, and sends the
  documented events with `{ seconds, percent, duration }`: loaded, play,
  playing, pause, ended, timeupdate (at most every 250 ms, as documented),
  progress, seeking, seeked, bufferstart/bufferend (also around seeks, as
  documented), playbackratechange, durationchange, volumechange, error.
- Limits, as documented: the rate is 0.5 to 2 (RangeError otherwise); a video
  of an account without speed controls rejects every setPlaybackRate with an
  Error (`rate_locked_ids`); a private video (PRIVATE_ID) rejects play() with
  PrivacyError; NOT_FOUND_ID and NOT_EMBEDDABLE_ID answer oEmbed with 404 and
  403. A play() the browser refuses (autoplay policy) is rejected with the
  browser's error name (NotAllowedError).

A test hook of its own (not Vimeo's): the message `{ standin: 'stall', ms }`
to the player's frame makes it run out of data for `ms`.

What it cannot reproduce is listed in docs/browser.md ("The Vimeo stand-in").

    with VimeoStandIn(media_path, rate_locked_ids={"1000000"}) as vimeo:
        vimeo.api_url        # http://127.0.0.1:PORT/api/player.js
"""

import json
import re
import sys
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.media_server import LoopbackSite, RangeRequestHandler  # noqa: E402

NOT_FOUND_ID = "404"
NOT_EMBEDDABLE_ID = "403"
PRIVATE_ID = "401"
RATE_RANGE = (0.5, 2.0)
TIMEUPDATE_MS = 250

PLAYER_JS = r"""(function () {
  'use strict';
  var script = document.currentScript;
  var ORIGIN = new URL(script.src).origin;
  var OPTIONS = ['autoplay', 'muted', 'controls', 'loop', 'autopause', 'playsinline'];

  function Player(element, options) {
    if (typeof element === 'string') element = document.getElementById(element);
    if (!element) throw new TypeError('You must pass either a valid element or a valid id.');
    options = options || {};
    this.element = null;
    this.origin = ORIGIN;
    this.pending = {}; // method -> [{ resolve, reject }]
    this.listeners = {}; // event -> [callback]
    var self = this;
    var readyResolve, readyReject;
    this.readyPromise = new Promise(function (resolve, reject) { readyResolve = resolve; readyReject = reject; });
    this.onMessage = function (e) {
      if (!self.element || e.source !== self.element.contentWindow || e.origin !== ORIGIN) return;
      var data = typeof e.data === 'string' ? JSON.parse(e.data) : e.data;
      if (data.event === 'ready') { readyResolve(); return; }
      if (data.event) {
        if (data.event === 'error' && data.data && data.data.method) {
          var waiting = self.pending[data.data.method] || [];
          var first = waiting.shift();
          if (first) { var error = new Error(data.data.message); error.name = data.data.name; first.reject(error); }
        }
        (self.listeners[data.event] || []).slice().forEach(function (cb) { try { cb.call(self, data.data); } catch (x) { setTimeout(function () { throw x; }); } });
        return;
      }
      if (data.method) {
        var queue = self.pending[data.method] || [];
        var next = queue.shift();
        if (next) next.resolve(data.value);
      }
    };
    window.addEventListener('message', this.onMessage);
    if (element.tagName === 'IFRAME') {
      this.element = element;
      return;
    }
    var id = String(options.id || '');
    var url = 'https://vimeo.com/' + id;
    fetch(ORIGIN + '/api/oembed.json?url=' + encodeURIComponent(url)).then(function (response) {
      if (response.status === 404) throw new Error('\u201c' + url + '\u201d was not found.');
      if (response.status === 403) throw new Error('\u201c' + url + '\u201d is not embeddable.');
      if (!response.ok) throw new Error('There was an error fetching the embed code from Vimeo (' + response.status + ').');
      return response.json();
    }).then(function () {
      var query = OPTIONS.filter(function (k) { return k in options; }).map(function (k) {
        var v = options[k]; return k + '=' + (v === true ? 1 : v === false ? 0 : encodeURIComponent(v));
      }).join('&');
      var iframe = document.createElement('iframe');
      iframe.src = ORIGIN + '/video/' + encodeURIComponent(id) + (query ? '?' + query : '');
      iframe.setAttribute('allow', 'autoplay; fullscreen; picture-in-picture');
      iframe.setAttribute('frameborder', '0');
      iframe.width = options.width || 640;
      iframe.height = options.height || 360;
      element.appendChild(iframe);
      element.setAttribute('data-vimeo-initialized', 'true');
      self.element = iframe;
    }).catch(function (error) { readyReject(error); });
  }

  Player.prototype.post = function (method, value) {
    var message = { method: method };
    if (value !== undefined) message.value = value;
    this.element.contentWindow.postMessage(message, this.origin);
  };
  Player.prototype.call = function (method, value) {
    var self = this;
    return this.readyPromise.then(function () {
      return new Promise(function (resolve, reject) {
        (self.pending[method] = self.pending[method] || []).push({ resolve: resolve, reject: reject });
        self.post(method, value);
      });
    });
  };
  Player.prototype.ready = function () { return this.readyPromise; };
  Player.prototype.on = function (event, callback) {
    if (!event) throw new TypeError('You must pass an event name.');
    if (typeof callback !== 'function') throw new TypeError('The callback must be a function.');
    var list = this.listeners[event] = this.listeners[event] || [];
    var self = this;
    if (list.length === 0) this.readyPromise.then(function () { self.post('addEventListener', event); }, function () {});
    list.push(callback);
  };
  Player.prototype.off = function (event, callback) {
    var list = this.listeners[event] || [];
    this.listeners[event] = callback ? list.filter(function (cb) { return cb !== callback; }) : [];
    var self = this;
    if (this.listeners[event].length === 0 && this.element) this.readyPromise.then(function () { self.post('removeEventListener', event); }, function () {});
  };
  Player.prototype.destroy = function () {
    window.removeEventListener('message', this.onMessage);
    if (this.element && this.element.parentNode) this.element.parentNode.removeChild(this.element);
    this.element = null;
    return Promise.resolve();
  };
  ['play', 'pause', 'unload'].forEach(function (name) {
    Player.prototype[name] = function () { return this.call(name); };
  });
  ['CurrentTime', 'Duration', 'Paused', 'Ended', 'Seeking', 'Buffered', 'PlaybackRate', 'Volume', 'Muted', 'VideoId'].forEach(function (name) {
    Player.prototype['get' + name] = function () { return this.call('get' + name); };
  });
  ['CurrentTime', 'PlaybackRate', 'Volume', 'Muted'].forEach(function (name) {
    Player.prototype['set' + name] = function (value) { return this.call('set' + name, value); };
  });

  window.Vimeo = window.Vimeo || {};
  window.Vimeo.Player = Player;
})();
"""

VIDEO_HTML = r"""<!doctype html>
<html><head><meta charset="utf-8"><title>Vimeo stand-in</title>
<style>html,body{margin:0;height:100%;background:#000}video{width:100%;height:100%}p{color:#fff;font:16px sans-serif;padding:1em}</style>
</head><body>
<video id="v" playsinline preload="auto" crossorigin="anonymous"></video>
<script>
(function () {
  'use strict';
  var CONFIG = __CONFIG__;
  var params = new URLSearchParams(location.search);
  var video = document.getElementById('v');
  var parentOrigin = '*'; // the embedding page's origin, learnt from its first message
  var listening = {};
  var buffering = false;
  var lastTimeupdate = -Infinity;
  var pendingSeek = null;
  var loaded = false;
  video.muted = params.get('muted') === '1';
  video.controls = params.get('controls') !== '0';
  video.loop = params.get('loop') === '1';

  function post(message) { parent.postMessage(message, parentOrigin); }
  function timing() {
    var d = isFinite(video.duration) ? video.duration : 0;
    var s = Math.round(video.currentTime * 1000) / 1000;
    return { seconds: s, percent: d ? Math.round((s / d) * 1000) / 1000 : 0, duration: Math.round(d * 1000) / 1000 };
  }
  function emit(event, data) { if (listening[event]) post({ event: event, data: data }); }
  function fail(method, name, message) { post({ event: 'error', data: { method: method, name: name, message: message } }); }
  function reply(method, value) { post({ method: method, value: value }); }
  function bufferStart() { if (!buffering) { buffering = true; emit('bufferstart'); } }
  function bufferEnd() { if (buffering) { buffering = false; emit('bufferend'); } }
  function ranges(r) { var out = []; for (var i = 0; i < r.length; i++) out.push({ start: r.start(i), end: r.end(i) }); return out; }

  if (CONFIG.private) {
    document.body.innerHTML = '<p>Because of its privacy settings, this video cannot be played here.</p>';
  } else {
    video.src = CONFIG.media;
  }

  video.addEventListener('loadedmetadata', function () { loaded = true; emit('loaded', { id: Number(CONFIG.id) }); emit('durationchange', { duration: video.duration }); });
  video.addEventListener('play', function () { emit('play', timing()); });
  video.addEventListener('playing', function () { bufferEnd(); emit('playing', timing()); });
  video.addEventListener('pause', function () { if (!stalled) emit('pause', timing()); });
  video.addEventListener('ended', function () { emit('ended', timing()); });
  video.addEventListener('waiting', bufferStart);
  video.addEventListener('canplay', function () { if (!video.seeking) bufferEnd(); });
  video.addEventListener('progress', function () {
    var b = video.buffered; if (!b.length) return;
    var t = timing(); t.seconds = Math.round(b.end(b.length - 1) * 1000) / 1000;
    emit('progress', t);
  });
  video.addEventListener('timeupdate', function () {
    var now = performance.now();
    if (now - lastTimeupdate < CONFIG.timeupdateMs) return;
    lastTimeupdate = now;
    emit('timeupdate', timing());
  });
  video.addEventListener('seeking', function () { bufferStart(); emit('seeking', timing()); emit('timeupdate', timing()); });
  video.addEventListener('seeked', function () {
    emit('seeked', timing()); emit('timeupdate', timing());
    if (video.readyState >= 3) bufferEnd();
    if (pendingSeek) { var m = pendingSeek; pendingSeek = null; reply(m, video.currentTime); }
  });
  video.addEventListener('ratechange', function () { emit('playbackratechange', { playbackRate: video.playbackRate }); });
  video.addEventListener('volumechange', function () { emit('volumechange', { volume: video.volume }); });
  video.addEventListener('error', function () {
    emit('error', { name: 'Error', message: 'The video could not be played (media error ' + (video.error ? video.error.code : '?') + ').', method: '' });
  });

  var methods = {
    play: function () {
      if (CONFIG.private) return fail('play', 'PrivacyError', 'The video is private.');
      video.play().then(function () { reply('play'); }, function (e) { fail('play', e.name || 'Error', e.message || 'play() was refused'); });
    },
    pause: function () { video.pause(); reply('pause'); },
    unload: function () { video.pause(); video.currentTime = 0; reply('unload'); },
    getCurrentTime: function () { reply('getCurrentTime', video.currentTime); },
    setCurrentTime: function (v) {
      var t = Number(v);
      if (!(t >= 0) || (isFinite(video.duration) && t > video.duration)) return fail('setCurrentTime', 'RangeError', 'Seconds must be a positive number less than the duration of the video.');
      if (pendingSeek) reply(pendingSeek, video.currentTime);
      pendingSeek = 'setCurrentTime';
      video.currentTime = t;
    },
    getDuration: function () { reply('getDuration', loaded ? video.duration : 0); },
    getPaused: function () { reply('getPaused', video.paused); },
    getEnded: function () { reply('getEnded', video.ended); },
    getSeeking: function () { reply('getSeeking', video.seeking); },
    getBuffered: function () { reply('getBuffered', ranges(video.buffered).map(function (r) { return [r.start, r.end]; })); },
    getPlaybackRate: function () { reply('getPlaybackRate', video.playbackRate); },
    setPlaybackRate: function (v) {
      var r = Number(v);
      if (CONFIG.rateLocked) return fail('setPlaybackRate', 'Error', 'Speed controls are not available for this video.');
      if (!(r >= CONFIG.rateRange[0] && r <= CONFIG.rateRange[1])) return fail('setPlaybackRate', 'RangeError', 'Playback rate must be a number between ' + CONFIG.rateRange[0] + ' and ' + CONFIG.rateRange[1] + '.');
      video.playbackRate = r; reply('setPlaybackRate', r);
    },
    getVolume: function () { reply('getVolume', video.volume); },
    setVolume: function (v) {
      var x = Number(v);
      if (!(x >= 0 && x <= 1)) return fail('setVolume', 'RangeError', 'Volume must be a number between 0 and 1.');
      video.volume = x; reply('setVolume', x);
    },
    getMuted: function () { reply('getMuted', video.muted); },
    setMuted: function (v) { video.muted = !!v; reply('setMuted', video.muted); },
    getVideoId: function () { reply('getVideoId', Number(CONFIG.id)); },
    addEventListener: function (name) { listening[name] = true; },
    removeEventListener: function (name) { delete listening[name]; },
  };

  // Test hook, not Vimeo's: `{ standin: 'stall', ms }` from the embedding page
  // makes the player run out of data for `ms`, as a slow network would: the
  // video stops without a `pause` event, `bufferstart`, and `bufferend` when it
  // plays again.
  var stalled = false;
  function stall(ms) {
    if (video.paused || stalled) return;
    stalled = true;
    video.pause();
    bufferStart();
    setTimeout(function () {
      stalled = false;
      video.play().catch(function () {});
    }, ms);
  }

  window.addEventListener('message', function (e) {
    if (e.source !== parent) return;
    var data = typeof e.data === 'string' ? JSON.parse(e.data) : e.data;
    if (data && data.standin === 'stall') return stall(Number(data.ms) || 0);
    if (!data || !data.method) return;
    parentOrigin = e.origin;
    var handler = methods[data.method];
    if (!handler) return fail(data.method, 'Error', 'Unknown method “' + data.method + '”.');
    handler(data.value);
  });
  post({ event: 'ready' });
  if (params.get('autoplay') === '1' && !CONFIG.private) video.play().catch(function () {});
})();
</script>
</body></html>
"""


class VimeoStandIn(LoopbackSite):
    """Serves the stand-in on 127.0.0.1 (`port` 0: any free port) on a daemon thread.
    `media` is the local video every id plays."""

    def __init__(self, media, port=0, rate_locked_ids=(), timeupdate_ms=TIMEUPDATE_MS):
        media = Path(media)
        self.rate_locked_ids = set(rate_locked_ids)
        self.timeupdate_ms = timeupdate_ms
        standin = self

        class Handler(RangeRequestHandler):
            def do_GET(self):  # noqa: N802 - the base class's name
                path = urllib.parse.urlsplit(self.path).path
                if path == "/api/player.js":
                    return self.text(200, "text/javascript; charset=utf-8", PLAYER_JS)
                if path == "/api/oembed.json":
                    return standin.oembed(self)
                match = re.fullmatch(r"/video/([0-9]+)", path)
                if match:
                    return self.text(200, "text/html; charset=utf-8", standin.video_page(match.group(1)))
                if path == "/media/" + media.name:
                    return super().do_GET()
                return self.text(404, "text/plain; charset=utf-8", "not found")

            def do_HEAD(self):  # noqa: N802
                return self.do_GET()

            def translate_path(self, path):
                return str(media)

            def text(self, status, content_type, body):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

        self.media_name = media.name
        super().__init__(Handler, port)

    @property
    def api_url(self):
        return f"{self.origin}/api/player.js"

    def oembed(self, handler):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(handler.path).query)
        url = (query.get("url") or [""])[0]
        match = re.fullmatch(r"https://vimeo\.com/([0-9]+)", url)
        if not match or match.group(1) == NOT_FOUND_ID:
            return handler.text(404, "text/plain; charset=utf-8", "404 Not Found")
        if match.group(1) == NOT_EMBEDDABLE_ID:
            return handler.text(403, "text/plain; charset=utf-8", "403 Forbidden")
        video = match.group(1)
        body = {"type": "video", "version": "1.0", "provider_name": "Vimeo", "video_id": int(video),
                "title": f"Stand-in video {video}", "html": f'<iframe src="{self.origin}/video/{video}"></iframe>'}
        return handler.text(200, "application/json", json.dumps(body))

    def video_page(self, video):
        config = {
            "id": video,
            "media": f"/media/{self.media_name}",
            "private": video == PRIVATE_ID,
            "rateLocked": video in self.rate_locked_ids,
            "rateRange": list(RATE_RANGE),
            "timeupdateMs": self.timeupdate_ms,
        }
        return VIDEO_HTML.replace("__CONFIG__", json.dumps(config))
