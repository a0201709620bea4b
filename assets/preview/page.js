// vodpack's preview page: starts the players on the URLs the server wrote into data
// attributes, fills the timeline's storyboard strip from the title's storyboard.vtt, and
// lets a click on the timeline seek every player. Served by vodpack itself
// (src/server/preview/assets.rs); no library, no request outside the origin. Every
// player error, even one the player recovered from, is written next to the player and
// kept in window.vodpackPreview.errors, so a look (or a test) sees it.
(function () {
  'use strict';
  var state = { errors: [] };
  window.vodpackPreview = state;
  function $(id) { return document.getElementById(id); }
  function note(id, text) {
    var el = $(id);
    if (el) el.textContent = text;
  }
  function failed(id, text) {
    state.errors.push(id + ': ' + text);
    note(id, 'error: ' + text);
  }

  var STALLS = ['bufferStalledError', 'bufferNudgeOnStall', 'bufferSeekOverHole'];
  function startHls(videoId, stateId, url) {
    var video = $(videoId);
    if (!video || !url) return;
    if (window.Hls && window.Hls.isSupported()) {
      var hls = new window.Hls();
      // The levels ABR switched to after the first (which is where it starts).
      var switchedTo = {};
      var started = false;
      hls.on(window.Hls.Events.LEVEL_SWITCHING, function (_e, data) {
        if (started) switchedTo[data.level] = true;
        started = true;
      });
      hls.on(window.Hls.Events.ERROR, function (_e, data) {
        // A stall, and hls.js's way out of one (a nudge, a seek over a hole in the
        // buffer), is a wait, not a fault; a load hls.js cancels itself (a seek, a switch)
        // neither. Counted, not reported, as tests/players/run.mjs counts them.
        if (!data.fatal && STALLS.indexOf(data.details) >= 0) {
          state.stalls = (state.stalls || 0) + 1;
          return;
        }
        if (!data.fatal && data.details === 'aborted') {
          state.cancelled = (state.cancelled || 0) + 1;
          return;
        }
        // After an ABR switch hls.js loads the new level's segment over the old one's
        // time: appending it grows nothing, and hls.js says so as a non-fatal error. That
        // is the switch, not a fault of the stream (counted, not reported).
        if (!data.fatal && data.details === 'bufferAppendNoProgress' && data.frag && switchedTo[data.frag.level]) {
          state.reappends = (state.reappends || 0) + 1;
          return;
        }
        var frag = data.frag ? ' (' + data.frag.type + ' level ' + data.frag.level + ' segment ' + data.frag.sn + ')' : '';
        failed(stateId, (data.fatal ? 'fatal ' : '') + data.details + frag);
      });
      hls.loadSource(url);
      hls.attachMedia(video);
    } else if (video.canPlayType('application/vnd.apple.mpegurl')) {
      video.src = url;
    } else {
      failed(stateId, 'hls.js did not load');
    }
  }

  function startDash(videoId, stateId, url) {
    var video = $(videoId);
    if (!video || !url) return;
    if (!window.dashjs) {
      failed(stateId, 'dash.js did not load');
      return;
    }
    var player = window.dashjs.MediaPlayer().create();
    player.on('error', function (e) {
      failed(stateId, (e.error && e.error.message) || 'playback failed');
    });
    player.initialize(video, url, true);
  }

  // The catalogue's posters: asked for as they come into view, two at a time (a poster
  // is a thumbnail decode, and the server decodes two at once by default), each tried
  // again after a 503 or a network error. `data-state` says how it ended.
  var posters = Array.prototype.slice.call(document.querySelectorAll('img.poster[data-src]'));
  if (posters.length) {
    var queue = [];
    var running = 0;
    var pump = function () {
      while (running < 2 && queue.length) {
        var img = queue.shift();
        running += 1;
        load(img, 0);
      }
    };
    var load = function (img, tries) {
      var done = function (ok) {
        if (ok || tries >= 3) {
          img.dataset.state = ok ? 'loaded' : 'failed';
          if (!ok) img.parentNode.classList.add('noposter');
          running -= 1;
          pump();
        } else {
          setTimeout(function () { load(img, tries + 1); }, 1000 * (tries + 1));
        }
      };
      img.onload = function () { done(true); };
      img.onerror = function () { done(false); };
      img.removeAttribute('src');
      img.src = img.dataset.src;
    };
    var seen = function (img) {
      if (img.dataset.state) return;
      img.dataset.state = 'queued';
      queue.push(img);
      pump();
    };
    if ('IntersectionObserver' in window) {
      var watch = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) { if (e.isIntersecting) { watch.unobserve(e.target); seen(e.target); } });
      }, { rootMargin: '200px' });
      posters.forEach(function (img) { watch.observe(img); });
    } else {
      posters.forEach(seen);
    }
  }

  var players = $('players');
  if (players) {
    startHls('hls-video', 'hls-state', players.dataset.hls);
    startDash('dash-video', 'dash-state', players.dataset.dash);
    startHls('ts-video', 'ts-state', players.dataset.ts);
  }

  // The timeline: seek every player to a time; a playhead following the first one.
  var timeline = $('timeline');
  if (!timeline) return;
  var durationMs = Number(timeline.dataset.durationMs) || 0;
  var videos = Array.prototype.slice.call(document.querySelectorAll('#players video'));
  var track = $('track');
  function msAt(event) {
    var box = track.getBoundingClientRect();
    var f = Math.min(1, Math.max(0, (event.clientX - box.left) / Math.max(1, box.width)));
    return f * durationMs;
  }
  function withToken(url) {
    var token = timeline.dataset.token;
    if (!token) return url;
    var u = new URL(url, location.href);
    u.searchParams.set('token', token);
    return u.pathname + u.search + u.hash;
  }
  track.addEventListener('click', function (event) {
    var seconds = msAt(event) / 1000;
    videos.forEach(function (v) { if (v.readyState > 0) v.currentTime = seconds; });
  });
  var head = $('playhead');
  if (head && videos.length) {
    videos[0].addEventListener('timeupdate', function () {
      var f = durationMs ? (videos[0].currentTime * 1000) / durationMs : 0;
      head.style.left = (Math.min(1, f) * 100) + '%';
    });
  }

  // The storyboard: tiles at their times along the strip, and the tile under the pointer.
  var vtt = timeline.dataset.storyboard;
  var strip = $('strip');
  var pop = $('tile-pop');
  if (!vtt || !strip || !durationMs) return;
  function seconds(text) {
    var parts = text.trim().split(':').map(Number);
    return parts.reduce(function (total, p) { return total * 60 + p; }, 0);
  }
  function tileOf(cue, height) {
    var box = document.createElement('div');
    box.className = 'tile';
    var scale = height / cue.h;
    box.style.width = Math.round(cue.w * scale) + 'px';
    box.style.height = height + 'px';
    var img = document.createElement('img');
    img.alt = '';
    img.src = cue.sheet;
    img.style.transformOrigin = '0 0';
    img.style.transform = 'scale(' + scale + ') translate(' + -cue.x + 'px,' + -cue.y + 'px)';
    box.appendChild(img);
    return box;
  }
  fetch(withToken(vtt)).then(function (r) {
    if (!r.ok) throw new Error('storyboard.vtt ' + r.status);
    return r.text();
  }).then(function (text) {
    var cues = [];
    var blocks = text.split(/\r?\n\r?\n/);
    blocks.forEach(function (block) {
      var lines = block.split(/\r?\n/);
      var timing = lines.findIndex(function (l) { return l.indexOf('-->') >= 0; });
      if (timing < 0 || !lines[timing + 1]) return;
      var times = lines[timing].split('-->');
      var ref = lines[timing + 1].trim();
      var hash = ref.split('#xywh=');
      if (hash.length !== 2) return;
      var xywh = hash[1].split(',').map(Number);
      cues.push({
        start: seconds(times[0]) * 1000,
        end: seconds(times[1]) * 1000,
        sheet: withToken(new URL(hash[0], new URL(vtt, location.href)).href),
        x: xywh[0], y: xywh[1], w: xywh[2], h: xywh[3],
      });
    });
    state.storyboardCues = cues.length;
    var height = strip.clientHeight || 54;
    // A film strip: as many tiles as fit side by side, each the storyboard's tile for the
    // time at its middle.
    var width = strip.clientWidth || 900;
    var first = cues[0];
    var tileWidth = first ? Math.max(1, Math.round(first.w * height / Math.max(1, first.h))) : height;
    var room = Math.max(1, Math.ceil(width / tileWidth));
    var cueAt = function (ms) {
      return cues.find(function (c) { return ms >= c.start && ms < c.end; }) || cues[cues.length - 1];
    };
    for (var i = 0; i < room && cues.length; i += 1) {
      var ms = ((i + 0.5) / room) * durationMs;
      var tile = tileOf(cueAt(ms), height);
      tile.style.left = (100 * i / room) + '%';
      tile.title = (ms / 1000).toFixed(1) + ' s';
      strip.appendChild(tile);
    }
    track.addEventListener('mousemove', function (event) {
      var ms = msAt(event);
      var cue = cueAt(ms);
      if (!cue || !pop) return;
      pop.textContent = '';
      pop.appendChild(tileOf(cue, 90));
      pop.style.left = (100 * ms / durationMs) + '%';
      pop.hidden = false;
    });
    track.addEventListener('mouseleave', function () { if (pop) pop.hidden = true; });
  }).catch(function (e) {
    state.errors.push('storyboard: ' + e.message);
    note('storyboard-state', 'storyboard: ' + e.message);
  });
})();
