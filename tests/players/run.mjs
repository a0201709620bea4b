#!/usr/bin/env node
// run.mjs: play HLS and DASH streams with real web players (hls.js, dash.js, Shaka Player) in
// Debian's headless Chromium, driven by playwright-core, and say for each job whether it
// played cleanly. Driven by tests/players/ (web_runner.rs); usable alone:
//
//     node tests/players/run.mjs JOBS.json      (or the JSON on stdin)
//
// JOBS.json is {"jobs": [JOB, ...], "parallel": 1, "deadline_s": 540} (or just [JOB, ...]).
// A JOB is
//     {"name": "...", "player": "hlsjs" | "dashjs" | "shaka", "url": "http://...",
//      "steps": [STEP, ...], "timeout_s": 90 (optional), "trace": true (optional: list
//      every request, response and failed request, with ms since the job began, in the
//      report), "media": ["video", "audio"] (optional: the kinds
//      that must reach the browser's decoders, so a track a player silently drops fails),
//      "known_failures": [{"matches": "TEXT", "reason": "why"}, ...] (optional),
//      "clearkey_licence": "http://..." (optional, hls.js: EME on, W3C ClearKey licences
//      from this URL, for SAMPLE-AES playlists with KEYFORMAT="org.w3.clearkey")}
// and a STEP is one of
//     {"play": N}          play until the media time has moved N seconds on (or the end)
//     {"play_to_end": true} play until the media element reports `ended` (or stops with
//                          the playhead at the duration)
//     {"seek": T}          seek to T seconds; must land within 0.5 s of T
//     {"variant": K}       force video rendition K (0 = lowest bandwidth), ABR off
//     {"trick": R}         trick play at rate R (Shaka only: `trickPlay`), until the media
//                          time has moved 2*R s on and key-frame resources (`ifr-*.m4s`,
//                          from the HLS I-frame playlist or the DASH trick-play set) were
//                          fetched; then back to normal play
//     {"av_start": {"offset": E, "tolerance": T}}
//                          lip sync at the start (before any seek): the earliest audio the
//                          browser buffered starts E seconds after the earliest video (the
//                          source's own difference, ffprobe's start times), within T
//     {"audio": "fra"}     switch to the audio track of that language
//     {"thumbnail": {"at": S, "url": "storyboard-1.jpg", "x": X, "y": Y}}
//                          the player's thumbnail for media time S (from the manifest's
//                          image set or stream: dash.js, Shaka) is that sheet's tile at X,Y
//     {"interstitial": {"id": "mid-1", "asset": "/vod/ad.mp4/", "resume_at": T}}
//                          (hls.js only: its HLS Interstitials) play on until the
//                          interstitial of that EXT-X-DATERANGE ID has started, played an
//                          asset whose URL holds `asset` and ended, and the title has
//                          resumed within 0.5 s of T on its own timeline; then the title
//                          must play on a second past T
//     {"cues": [{"start": S, "end": E, "text": "..."}], "lang": "eng", "tolerance": 0.2}
//                          show the text track (of that language, or the first), and for
//                          each cue: paused at its middle, a cue with that text is active
//                          and, joined with the same text's cues next to it (a cue cut at
//                          segment edges), starts and ends within the tolerance of S and E;
//                          text compares without tags, entities decoded, spaces collapsed;
//                          an IMSC1 cue dash.js renders into its TTML div (`#ttml`) must
//                          also be there, with that text
//
// Strict: any player error event (fatal or recovered), a media element error, an HTTP status
// >= 400 or a failed request seen by the page fails the job. Stalls (the player waiting for
// data) are counted and reported, not failed on: on a busy machine they say nothing about the
// stream; nor are requests and loads the player cancels itself (on a seek or a switch). Every wait is bounded. Jobs run in fresh browser contexts, `parallel` at a time, in
// one browser that is closed at the end, also on failure or timeout.
//
// A known failure is a fault traced to the packager and reported: a job whose faults (step
// failures, player errors, HTTP failures) each contain the `matches` text of one of its
// known failures is a "known-failure"; any other fault still fails it; a run without the
// faults passes (some player faults are intermittent).
//
// Output: one JSON line per job, {"verdict": "pass" | "fail" | "known-failure", "name",
// "player", "url", "reason", "steps", "errors", "http", ...}. Exit 0 when no job failed
// (known failures aside), 1 when one did, 2 when the runner itself could not work (bad
// jobs, browser would not start, the whole run over its deadline).

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const requireHere = createRequire(path.join(HERE, 'package.json'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// Flags needed on a closed network: no update checks, sync, QUIC or sandbox (root in CI).
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];

// Where each player's browser build lives inside its npm package.
const PLAYER_FILES = {
  hlsjs: ['hls.js', 'dist/hls.min.js'],
  dashjs: ['dashjs', 'dist/modern/umd/dash.all.min.js'],
  shaka: ['shaka-player', 'dist/shaka-player.compiled.js'],
};

const STEP_KINDS = ['play', 'play_to_end', 'seek', 'variant', 'audio', 'av_start', 'cues', 'trick', 'thumbnail', 'interstitial'];
// The key-frame resources trick play fetches.
const KEY_FRAME_URL = /\/ifr-[^/?]*\.m4s(\?|$)/;
const SEEK_TOLERANCE_S = 0.5;
const END_TOLERANCE_S = 0.05;
const DEFAULT_CUE_TOLERANCE_S = 0.2;
// Cues of the same text closer than this read as one to a viewer.
const CUE_JOIN_GAP_S = 0.05;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Packages are read from tests/players/node_modules (installed by `npm ci` there); some do
// not export their package.json, so paths are joined rather than resolved.
function packageRoot(name) {
  return path.join(HERE, 'node_modules', name);
}

function packageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(packageRoot(name), 'package.json'), 'utf8')).version;
}

// ------------------------------------------------------------------------------ jobs

function readJobs(argv) {
  const text = argv[2] && argv[2] !== '-' ? fs.readFileSync(argv[2], 'utf8') : fs.readFileSync(0, 'utf8');
  const parsed = JSON.parse(text);
  const doc = Array.isArray(parsed) ? { jobs: parsed } : parsed;
  if (!Array.isArray(doc.jobs) || doc.jobs.length === 0) throw new Error('no jobs given');
  doc.jobs.forEach((job, i) => {
    const where = `job ${i} (${job.name || 'unnamed'})`;
    if (!PLAYER_FILES[job.player]) throw new Error(`${where}: unknown player ${JSON.stringify(job.player)}`);
    if (typeof job.url !== 'string' || !/^https?:\/\//.test(job.url)) throw new Error(`${where}: url must be http(s)`);
    if (job.known_failures !== undefined && !(Array.isArray(job.known_failures) && job.known_failures.every((k) => k && typeof k.matches === 'string' && k.matches))) {
      throw new Error(`${where}: known_failures must be a list of {"matches": "TEXT", "reason": "..."}`);
    }
    for (const step of job.steps || []) {
      const kinds = Object.keys(step).filter((k) => STEP_KINDS.includes(k));
      if (kinds.length !== 1) throw new Error(`${where}: step ${JSON.stringify(step)} must have exactly one of ${STEP_KINDS.join(', ')}`);
    }
  });
  return {
    jobs: doc.jobs,
    parallel: Math.max(1, Math.min(4, Number(doc.parallel) || 1)),
    deadlineS: Number(doc.deadline_s) || 540,
  };
}

// ------------------------------------------------------------------------------ the page

// The test page loads one player and this harness. `window.vp` is a small adapter that gives
// the three players one interface, and records every error they report.
const HARNESS_JS = String.raw`
(function () {
  const video = document.getElementById('video');
  video.muted = true;
  const state = window.vpState = { errors: [], stalls: 0, cancelled: 0, ended: false, audioSwitched: null };
  // Settles when the first fatal error is noted, so a player that will never get ready
  // (a 404 manifest, a CORS refusal) does not leave startup waiting.
  let fatalNoted;
  const fatal = new Promise((resolve) => { fatalNoted = resolve; });
  const ready = (promise) => Promise.race([promise, fatal.then(() => { throw new Error('a fatal error before the player was ready'); })]);
  const note = (source, fatal, name, detail) => {
    if (state.errors.length < 50) state.errors.push({ source, fatal: !!fatal, name: String(name), detail: String(detail || '').slice(0, 300) });
    if (fatal) fatalNoted();
  };
  state.note = note;
  video.addEventListener('error', () => {
    const e = video.error || {};
    note('video', true, 'MediaError ' + e.code, e.message);
  });
  video.addEventListener('waiting', () => { state.stalls += 1; });
  // What reaches the decoders: every SourceBuffer a player makes, with the bytes appended
  // to it. A player that drops a track it cannot play (dash.js does, silently) shows here.
  state.media = [];
  for (const Source of [window.MediaSource, window.ManagedMediaSource]) {
    if (!Source) continue;
    const addSourceBuffer = Source.prototype.addSourceBuffer;
    Source.prototype.addSourceBuffer = function (mime) {
      const buffer = addSourceBuffer.call(this, mime);
      buffer.vpRecord = { mime: String(mime), bytes: 0 };
      state.media.push(buffer.vpRecord);
      (state.buffers = state.buffers || []).push(buffer);
      return buffer;
    };
  }
  if (window.SourceBuffer) {
    const appendBuffer = SourceBuffer.prototype.appendBuffer;
    SourceBuffer.prototype.appendBuffer = function (data) {
      if (this.vpRecord) this.vpRecord.bytes += (data && data.byteLength) || 0;
      return appendBuffer.call(this, data);
    };
  }
  // The media element's story, reported with a failed job.
  state.events = [];
  for (const name of ['loadedmetadata', 'canplay', 'playing', 'waiting', 'seeking', 'seeked', 'pause', 'ended', 'durationchange']) {
    video.addEventListener(name, () => { if (state.events.length < 100) state.events.push(name + '@' + video.currentTime.toFixed(3)); });
  }
  video.addEventListener('ended', () => { state.ended = true; });
  window.addEventListener('error', (e) => note('page', true, 'exception', e.message));
  window.addEventListener('unhandledrejection', (e) => note('page', true, 'rejection', e.reason && (e.reason.message || e.reason.code || e.reason)));

  const byBandwidth = (a, b) => (a.bandwidth - b.bandwidth) || ((a.height || 0) - (b.height || 0));
  const adapters = {};

  adapters.hlsjs = async (url, textLanguage, clearkeyLicence) => {
    if (!Hls.isSupported()) throw new Error('hls.js: MediaSource is not available');
    const eme = clearkeyLicence
      ? { emeEnabled: true, drmSystems: { 'org.w3.clearkey': { licenseUrl: clearkeyLicence } } }
      : {};
    const hls = new Hls({ enableWorker: true, ...eme });
    // hls.js reports a stall as a non-fatal error event; a stall is a wait, not a fault.
    // It also reports a load it cancels itself (a seek, a switch) as a non-fatal "aborted"
    // (ErrorDetails.INTERNAL_ABORTED), like a request the page aborts: no fault either.
    const STALLS = ['bufferStalledError', 'bufferNudgeOnStall'];
    hls.on(Hls.Events.ERROR, (_, d) => {
      if (!d.fatal && STALLS.includes(d.details)) { state.stalls += 1; return; }
      if (!d.fatal && d.details === ((Hls.ErrorDetails && Hls.ErrorDetails.INTERNAL_ABORTED) || 'aborted')) { state.cancelled += 1; return; }
      note('hls.js', d.fatal, d.details, (d.error && d.error.message) || d.reason || (d.frag && d.frag.url) || d.type);
    });
    hls.on(Hls.Events.AUDIO_TRACK_SWITCHED, (_, d) => { state.audioSwitched = d.id; });
    // HLS Interstitials (ad breaks): what started, which assets played, what ended, and
    // where on the title's own timeline it resumed.
    const breaks = state.interstitials = { started: [], assets: [], ended: [], resumed: [] };
    const primaryTime = () => {
      const manager = hls.interstitialsManager;
      return manager ? manager.primary.currentTime : video.currentTime;
    };
    if (Hls.Events.INTERSTITIAL_STARTED) {
      hls.on(Hls.Events.INTERSTITIAL_STARTED, (_, d) => breaks.started.push(d.event.identifier));
      hls.on(Hls.Events.INTERSTITIAL_ASSET_STARTED, (_, d) => breaks.assets.push(String(d.asset && d.asset.uri)));
      hls.on(Hls.Events.INTERSTITIAL_ENDED, (_, d) => breaks.ended.push(d.event.identifier));
      // The asset's own 'ended' is not the title's.
      hls.on(Hls.Events.INTERSTITIALS_PRIMARY_RESUMED, () => { breaks.resumed.push(primaryTime()); state.ended = false; });
    }
    const parsed = new Promise((resolve) => hls.once(Hls.Events.MANIFEST_PARSED, resolve));
    hls.attachMedia(video);
    hls.loadSource(url);
    await ready(parsed);
    return {
      variants: () => hls.levels.map((l, i) => ({ id: i, bandwidth: l.bitrate, height: l.height })).sort(byBandwidth),
      activeVariant: () => hls.currentLevel,
      selectVariant: (id) => { hls.currentLevel = id; },
      audioTracks: () => hls.audioTracks.map((t) => ({ id: t.id, lang: t.lang || '' })),
      activeAudio: () => (state.audioSwitched === hls.audioTrack ? hls.audioTrack : null),
      selectAudio: (id) => { hls.audioTrack = id; },
      textTracks: () => hls.subtitleTracks.map((t) => ({ id: t.id, lang: t.lang || '' })),
      selectText: (id) => { hls.subtitleDisplay = true; hls.subtitleTrack = id; },
      activeText: () => hls.subtitleTrack,
      interstitials: () => ({ ...breaks, primaryTime: primaryTime() }),
    };
  };

  adapters.dashjs = async (url) => {
    const player = dashjs.MediaPlayer().create();
    player.updateSettings({ debug: { logLevel: dashjs.Debug.LOG_LEVEL_NONE } });
    // dash.js only emits 'error' for faults; it has no separate recovered-error event.
    player.on('error', (e) => {
      const err = (e && e.error) || {};
      note('dash.js', true, typeof err === 'object' ? 'code ' + err.code : err, typeof err === 'object' ? err.message : '');
    });
    player.on('playbackError', (e) => note('dash.js', true, 'playbackError', e && e.error && (e.error.message || e.error)));
    // dash.js says the stream ended when its playhead reaches the Period's end, also before
    // the element fires 'ended' (a race on a busy machine): its ended handler then seeks to
    // the end and pauses, and its clamp of seeks at the end (streaming.seekDurationBackoff,
    // 0.5 s) leaves the element paused half a second before it. Its word counts as 'ended'.
    player.on('playbackEnded', () => {
      state.ended = true;
      if (state.events.length < 100) state.events.push('dash.js playbackEnded@' + video.currentTime.toFixed(3));
    });
    const initialized = new Promise((resolve) => player.on('streamInitialized', resolve));
    player.initialize(video, url, false);
    // dash.js renders IMSC1 (TTML) only into a div of the page, over the video.
    player.attachTTMLRenderingDiv(document.getElementById('ttml'));
    await ready(initialized);
    return {
      variants: () => (player.getRepresentationsByType('video') || []).map((r) => ({ id: r.id, bandwidth: r.bandwidth, height: r.height })).sort(byBandwidth),
      activeVariant: () => { const r = player.getCurrentRepresentationForType('video'); return r ? r.id : null; },
      selectVariant: (id) => {
        player.updateSettings({ streaming: { abr: { autoSwitchBitrate: { video: false } } } });
        player.setRepresentationForTypeById('video', id, true);
      },
      audioTracks: () => (player.getTracksFor('audio') || []).map((t) => ({ id: t.id, lang: t.lang || '' })),
      activeAudio: () => { const t = player.getCurrentTrackFor('audio'); return t ? t.id : null; },
      selectAudio: (id) => {
        const track = (player.getTracksFor('audio') || []).find((t) => t.id === id);
        player.setCurrentTrack(track);
      },
      textTracks: () => (player.getTracksFor('text') || []).map((t, i) => ({ id: i, lang: t.lang || '' })),
      selectText: (id) => { player.enableText(true); player.setTextTrack(id); },
      activeText: () => player.getCurrentTextTrackIndex(),
      thumbnail: (t) => new Promise((resolve) => player.provideThumbnail(t, (th) => resolve(th
        ? { url: th.url, x: th.x, y: th.y, width: th.width, height: th.height } : null))),
    };
  };

  adapters.shaka = async (url, textLanguage) => {
    shaka.polyfill.installAll();
    if (!shaka.Player.isBrowserSupported()) throw new Error('shaka: browser not supported');
    const player = new shaka.Player();
    // Shaka reports recoverable errors too (severity 1); both count.
    player.addEventListener('error', (e) => {
      const d = e.detail || {};
      note('shaka', d.severity === 2, 'code ' + d.code, JSON.stringify(d.data || []).slice(0, 300));
    });
    await player.attach(video);
    // HLS text is chosen at load when a job will check cues: selecting it later, while the
    // first segments stream, sometimes leaves Shaka's HLS text track without cues. DASH text
    // is chosen by the cues step, once playing: streamed from load, Shaka's small seek into
    // the first buffered range at start (its gap jumper) can abort the text init and first
    // segment in flight, and Shaka then fetches the segment again without its init and shows
    // no cues for the rest of the session (seen 1-3 times in 96 loads on a busy 2-core
    // machine, never once the text is chosen after start).
    if (textLanguage && /\.m3u8(\?|$)/.test(url)) player.configure('preferredText', [{ language: textLanguage, role: '', forced: false }]);
    try {
      await player.load(url);
    } catch (e) {
      note('shaka', true, 'load failed, code ' + (e && e.code), JSON.stringify((e && e.data) || String(e)).slice(0, 300));
      throw new Error('shaka: load failed');
    }
    return {
      variants: () => player.getVideoTracks().map((t) => ({ id: t.id, bandwidth: t.bandwidth, height: t.height })).sort(byBandwidth),
      activeVariant: () => { const t = player.getVideoTracks().find((t) => t.active); return t ? t.id : null; },
      selectVariant: (id) => {
        player.configure('abr.enabled', false);
        player.selectVideoTrack(player.getVideoTracks().find((t) => t.id === id), true);
      },
      audioTracks: () => player.getAudioTracks().map((t, i) => ({ id: i, lang: t.language || '' })),
      activeAudio: () => player.getAudioTracks().findIndex((t) => t.active),
      selectAudio: (id) => player.selectAudioTrack(player.getAudioTracks()[id]),
      textTracks: () => player.getTextTracks().map((t) => ({ id: t.id, lang: t.language || '' })),
      selectText: (id) => player.selectTextTrack(player.getTextTracks().find((t) => t.id === id)),
      activeText: () => { const t = player.getTextTracks().find((t) => t.active); return t ? t.id : null; },
      trickPlay: (rate) => player.trickPlay(rate, true),
      thumbnail: async (t) => {
        const track = player.getImageTracks()[0];
        if (!track) return null;
        const th = await player.getThumbnails(track.id, t);
        return th ? { url: (th.uris || [])[0], x: th.positionX, y: th.positionY, width: th.width, height: th.height } : null;
      },
      cancelTrickPlay: () => player.cancelTrickPlay(),
    };
  };

  // Languages compare by their primary subtag, with ISO 639-2 and 639-1 codes as one
  // (Shaka turns "fra" into "fr"; the others keep what the manifest says).
  const ALIASES = { eng: 'en', fra: 'fr', fre: 'fr', deu: 'de', ger: 'de', spa: 'es', ita: 'it', por: 'pt', jpn: 'ja', zho: 'zh', chi: 'zh', nld: 'nl', dut: 'nl', rus: 'ru', ara: 'ar', kor: 'ko', pol: 'pl', swe: 'sv' };
  const primary = (lang) => { const p = String(lang || '').toLowerCase().split('-')[0]; return ALIASES[p] || p; };
  window.vpSameLanguage = (a, b) => primary(a) === primary(b);

  window.vpStart = async (player, url, textLanguage, clearkeyLicence) => {
    try {
      window.vp = await adapters[player](url, textLanguage, clearkeyLicence);
      return null;
    } catch (e) {
      note('harness', true, 'start', e && e.message || e);
      return String(e && e.message || e);
    }
  };

  // Where playback is, for the runner's bounded polls.
  window.vpSnapshot = () => ({
    time: video.currentTime, duration: video.duration, paused: video.paused, ended: state.ended,
    readyState: video.readyState, fatal: state.errors.some((e) => e.fatal), errors: state.errors.length,
  });

  // Cue text as a viewer reads it: no WebVTT tags, entities decoded, white space collapsed.
  const ENTITIES = { amp: '&', lt: '<', gt: '>', nbsp: ' ', lrm: '', rlm: '' };
  const normalize = (text) => String(text || '')
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|nbsp|lrm|rlm);/g, (_, name) => ENTITIES[name])
    .replace(/\s+/g, ' ')
    .trim();

  // The texts a cue shows: its text, or for a cue dash.js renders from IMSC1 (TTML) into
  // its rendering div, the text of each paragraph (p) of its intermediate synchronic
  // document (IMSC 1 ISD), spans joined and br as a line break. One such cue spans the
  // time between two changes of what is shown, so it may show several paragraphs.
  const cueTexts = (cue) => {
    if (cue.text || !cue.isd) return [normalize(cue.text)];
    const texts = [];
    const walk = (node, inP) => {
      if (!node || typeof node !== 'object') return '';
      if (node.kind === 'br') return '\n';
      let text = typeof node.text === 'string' ? node.text : '';
      for (const child of node.contents || []) text += walk(child, inP || node.kind === 'p');
      if (node.kind === 'p' && !inP) texts.push(normalize(text));
      return text;
    };
    walk(cue.isd, false);
    return texts;
  };
  const shows = (cue, want) => cueTexts(cue).includes(want);

  // The cue with this text that is active now (in a text track that is not disabled), as
  // a viewer sees it: joined with the cues of the same text that follow or precede it
  // without a visible gap (a packager may cut a cue at segment edges, or repeat it).
  window.vpShownCue = (text, gapS) => {
    const want = normalize(text);
    for (const track of Array.from(video.textTracks)) {
      if (track.mode === 'disabled' || !track.activeCues || !track.cues) continue;
      const active = Array.from(track.activeCues).find((c) => shows(c, want));
      if (!active) continue;
      const same = Array.from(track.cues).filter((c) => shows(c, want)).sort((a, b) => a.startTime - b.startTime);
      let start = active.startTime, end = active.endTime, parts = 1, grew = true;
      while (grew) {
        grew = false;
        for (const c of same) {
          const overlaps = c.startTime <= end + gapS && c.endTime >= start - gapS;
          if (overlaps && (c.startTime < start || c.endTime > end)) {
            start = Math.min(start, c.startTime); end = Math.max(end, c.endTime); parts += 1; grew = true;
          }
        }
      }
      // A cue rendered into the page (dash.js's IMSC1) must be there to read.
      const div = active.isd ? document.getElementById('ttml') : null;
      const shown = div && div.cloneNode(true);
      if (shown) shown.querySelectorAll('br').forEach((br) => br.replaceWith(' '));
      const rendered = shown ? normalize(shown.textContent).includes(want) : null;
      return { start, end, text: active.text || want, parts, rendered };
    }
    return null;
  };

  // How many cues the shown (not disabled) text tracks hold.
  window.vpCueCount = () => Array.from(video.textTracks)
    .filter((track) => track.mode !== 'disabled' && track.cues)
    .reduce((n, track) => n + track.cues.length, 0);

  // Text of every active cue, to explain a cue that was not shown.
  window.vpActiveCues = () => {
    const out = [];
    for (const track of Array.from(video.textTracks)) {
      if (track.mode === 'disabled' || !track.activeCues) continue;
      for (const cue of Array.from(track.activeCues)) out.push({ start: cue.startTime, end: cue.endTime, text: cueTexts(cue).join(' | ') });
    }
    return out;
  };

  // Every text track with its mode and first cues, to explain a cue that was not shown.
  window.vpTextTracks = () => Array.from(video.textTracks).map((track) => ({
    label: track.label, language: track.language, mode: track.mode,
    cues: track.cues ? Array.from(track.cues).slice(0, 5).map((c) => [round3(c.startTime), round3(c.endTime), cueTexts(c).join(' | ')]) : null,
  }));
  const round3 = (x) => Math.round(x * 1000) / 1000;
})();
`;

function pageHtml(player) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>vodpack ${player}</title></head>
<body><video id="video" muted playsinline width="640" height="360"></video><div id="ttml"></div>
<script src="/player/${player}.js"></script><script src="/harness.js"></script></body></html>`;
}

// Serves the page and the players' files on its own loopback port, another origin than the
// packager's, so every media request is a cross-origin one and CORS is exercised.
function startPageServer() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const player = url.searchParams.get('player');
    if (url.pathname === '/' && PLAYER_FILES[player]) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(pageHtml(player));
    }
    if (url.pathname === '/harness.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return res.end(HARNESS_JS);
    }
    const m = /^\/player\/(\w+)\.js$/.exec(url.pathname);
    if (m && PLAYER_FILES[m[1]]) {
      const [pkg, file] = PLAYER_FILES[m[1]];
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return fs.createReadStream(path.join(packageRoot(pkg), file)).pipe(res);
    }
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      return res.end();
    }
    res.writeHead(404);
    return res.end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// ------------------------------------------------------------------------------ one job

class StepFailure extends Error {}

// Polls `probe` every 100 ms until it returns a truthy value, a fatal player error shows
// up, or `seconds` pass. Returns the last value of `probe`.
async function pollUntil(page, seconds, probe) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    const snap = await page.evaluate(() => window.vpSnapshot());
    if (snap.fatal) throw new StepFailure('a fatal player error (see errors)');
    if (Date.now() > deadline) return value;
    await sleep(100);
  }
}

const snapshot = (page) => page.evaluate(() => window.vpSnapshot());
const play = (page) => page.evaluate(() => {
  const p = document.getElementById('video').play();
  if (p) p.catch((e) => window.vpState.note('video', true, 'play() refused', e && e.message));
});

// Each step returns a short detail object for the report, or throws StepFailure.
const STEPS = {
  async play(page, seconds) {
    const from = (await snapshot(page)).time;
    await play(page);
    const snap = await pollUntil(page, Math.max(20, seconds * 6), async () => {
      const s = await snapshot(page);
      return (s.ended || s.time >= from + seconds) && s;
    });
    const now = await snapshot(page);
    if (!snap) throw new StepFailure(`media time stayed near ${now.time.toFixed(3)} s (from ${from.toFixed(3)} s, wanted +${seconds} s)`);
    return { from: round(from), to: round(now.time), ended: now.ended };
  },

  // The end is reached when the element says `ended`, or when it has stopped with the
  // playhead at the duration: dash.js sometimes pauses there itself before Chromium's
  // `ended`, which says nothing about the stream.
  async play_to_end(page) {
    const from = (await snapshot(page)).time;
    await play(page);
    const atEnd = (s) => s.ended || (s.paused && Number.isFinite(s.duration) && s.time >= s.duration - END_TOLERANCE_S);
    const snap = await pollUntil(page, 30, async () => {
      const s = await snapshot(page);
      return atEnd(s) && s;
    });
    const now = await snapshot(page);
    if (!snap) throw new StepFailure(`never reached the end: media time ${now.time.toFixed(3)} s of ${now.duration} s, ${now.paused ? 'paused' : 'playing'}`);
    return { from: round(from), to: round(now.time), duration: round(now.duration), ended: now.ended };
  },

  async seek(page, target) {
    await page.evaluate((t) => {
      const video = document.getElementById('video');
      window.vpState.seeked = false;
      window.vpState.ended = false;
      video.addEventListener('seeked', () => { window.vpState.seeked = true; }, { once: true });
      video.currentTime = t;
    }, target);
    const seeked = await pollUntil(page, 20, () => page.evaluate(() => window.vpState.seeked));
    const landed = (await snapshot(page)).time;
    if (!seeked) throw new StepFailure(`no seeked event (media time ${landed.toFixed(3)} s)`);
    if (Math.abs(landed - target) > SEEK_TOLERANCE_S) throw new StepFailure(`landed at ${landed.toFixed(3)} s, asked ${target} s`);
    return { landed: round(landed) };
  },

  // Where each SourceBuffer's first buffered range starts, by the kind of media it takes:
  // a player that places audio against video by anything but their media times shows here.
  async av_start(page, spec) {
    const starts = await page.evaluate(() => (window.vpState.buffers || []).map((b) => ({
      mime: b.vpRecord.mime,
      start: b.buffered.length ? b.buffered.start(0) : null,
    })));
    const first = (kind) => starts
      .filter((b) => b.start !== null && mediaKinds(b.mime).length === 1 && mediaKinds(b.mime)[0] === kind)
      .map((b) => b.start)
      .sort((x, y) => x - y)[0];
    const video = first('video');
    const audio = first('audio');
    if (video === undefined || audio === undefined) throw new StepFailure(`no separate audio and video buffered: ${JSON.stringify(starts)}`);
    const offset = audio - video;
    const tolerance = spec.tolerance === undefined ? 0.025 : spec.tolerance;
    if (Math.abs(offset - spec.offset) > tolerance) {
      throw new StepFailure(`audio starts ${offset.toFixed(4)} s after video, the source ${spec.offset} s (tolerance ${tolerance} s): ${JSON.stringify(starts)}`);
    }
    return { video: round(video), audio: round(audio) };
  },

  async variant(page, index) {
    const variants = await page.evaluate(() => window.vp.variants());
    const chosen = variants[index];
    if (!chosen) throw new StepFailure(`no variant ${index}: the player lists ${variants.length}`);
    await page.evaluate((id) => window.vp.selectVariant(id), chosen.id);
    await play(page);
    const active = await pollUntil(page, 20, () => page.evaluate((id) => window.vp.activeVariant() === id, chosen.id));
    if (!active) throw new StepFailure(`variant ${index} (${JSON.stringify(chosen)}) never became active; active: ${JSON.stringify(await page.evaluate(() => window.vp.activeVariant()))}`);
    return { variants: variants.length, active: chosen };
  },

  async trick(page, rate) {
    const supported = await page.evaluate(() => typeof window.vp.trickPlay === 'function');
    if (!supported) throw new StepFailure('this player has no trick play in the harness');
    const from = (await snapshot(page)).time;
    const fetchedBefore = page.vpKeyFrames || 0;
    await play(page);
    await page.evaluate((r) => window.vp.trickPlay(r), rate);
    const moved = await pollUntil(page, 30, async () => {
      const s = await snapshot(page);
      return (s.ended || s.time >= from + 2 * rate) && (page.vpKeyFrames || 0) > fetchedBefore && s;
    });
    const now = await snapshot(page);
    await page.evaluate(() => window.vp.cancelTrickPlay());
    const fetched = (page.vpKeyFrames || 0) - fetchedBefore;
    if (!moved) throw new StepFailure(`trick play at ${rate}x: media time ${from.toFixed(3)} -> ${now.time.toFixed(3)} s, ${fetched} key frame(s) fetched`);
    return { from: round(from), to: round(now.time), key_frames_fetched: fetched };
  },

  async thumbnail(page, want) {
    const supported = await page.evaluate(() => typeof window.vp.thumbnail === 'function');
    if (!supported) throw new StepFailure('this player has no thumbnail API in the harness');
    const got = await pollUntil(page, 20, () => page.evaluate((t) => window.vp.thumbnail(t), want.at));
    if (!got) throw new StepFailure(`no thumbnail at ${want.at} s`);
    const sheet = String(got.url || '').split('?')[0].split('/').pop();
    if (sheet !== want.url || got.x !== want.x || got.y !== want.y) {
      throw new StepFailure(`thumbnail at ${want.at} s is ${JSON.stringify(got)}, expected ${want.url} at ${want.x},${want.y}`);
    }
    return got;
  },

  async interstitial(page, want) {
    const supported = await page.evaluate(() => typeof window.vp.interstitials === 'function');
    if (!supported) throw new StepFailure('this player has no HLS Interstitials in the harness');
    await play(page);
    const done = await pollUntil(page, 60, () => page.evaluate((id) => {
      const s = window.vp.interstitials();
      return s.started.includes(id) && s.ended.includes(id) && s.resumed.length > 0;
    }, want.id));
    const seen = await page.evaluate(() => window.vp.interstitials());
    if (!done) throw new StepFailure(`interstitial ${want.id} did not start, play and end: ${JSON.stringify(seen)}`);
    if (!seen.assets.some((uri) => uri.includes(want.asset))) throw new StepFailure(`no asset ${want.asset} played: ${JSON.stringify(seen.assets)}`);
    const resumedAt = seen.resumed[0];
    if (Math.abs(resumedAt - want.resume_at) > 0.5) throw new StepFailure(`the title resumed at ${resumedAt} s of its own timeline, not ${want.resume_at} s`);
    const onward = await pollUntil(page, 20, () => page.evaluate((t) => window.vp.interstitials().primaryTime >= t + 1, want.resume_at));
    const after = await page.evaluate(() => window.vp.interstitials());
    if (!onward) throw new StepFailure(`the title did not play on after the break: at ${after.primaryTime} s`);
    return { started: seen.started, assets: seen.assets, ended: seen.ended, resumed_at: round(resumedAt), then: round(after.primaryTime) };
  },

  async audio(page, lang) {
    const tracks = await page.evaluate(() => window.vp.audioTracks());
    const index = await page.evaluate(([ts, l]) => ts.findIndex((t) => window.vpSameLanguage(t.lang, l)), [tracks, lang]);
    if (index < 0) throw new StepFailure(`no audio track in ${lang}: the player lists ${JSON.stringify(tracks)}`);
    const chosen = tracks[index];
    await page.evaluate((id) => window.vp.selectAudio(id), chosen.id);
    await play(page);
    const active = await pollUntil(page, 20, () => page.evaluate((id) => window.vp.activeAudio() === id, chosen.id));
    if (!active) throw new StepFailure(`audio track ${JSON.stringify(chosen)} never became active`);
    return { tracks: tracks.map((t) => t.lang), active: chosen.lang };
  },

  async cues(page, expected, step) {
    const tolerance = Number(step.tolerance) || DEFAULT_CUE_TOLERANCE_S;
    const tracks = await page.evaluate(() => window.vp.textTracks());
    const track = step.lang
      ? await page.evaluate(([ts, l]) => ts.find((t) => window.vpSameLanguage(t.lang, l)) || null, [tracks, step.lang])
      : tracks[0];
    if (!track) throw new StepFailure(`no text track${step.lang ? ' in ' + step.lang : ''}: the player lists ${JSON.stringify(tracks)}`);
    await page.evaluate((id) => window.vp.selectText(id), track.id);
    const selected = await pollUntil(page, 20, () => page.evaluate((id) => window.vp.activeText() === id, track.id));
    if (!selected) throw new StepFailure(`text track ${JSON.stringify(track)} never became active`);
    // Seeking while a text track's first segments are in flight is the same abort as above:
    // let the first cues arrive (bounded; a title whose cues all lie further on goes on).
    await pollUntil(page, 5, () => page.evaluate(() => window.vpCueCount() > 0));
    const shown = [];
    for (const cue of expected) {
      const middle = (cue.start + cue.end) / 2;
      await page.evaluate((t) => {
        const video = document.getElementById('video');
        video.pause();
        video.currentTime = t;
      }, middle);
      const within = (c) => c && c.rendered !== false && Math.abs(c.start - cue.start) <= tolerance && Math.abs(c.end - cue.end) <= tolerance;
      const shownCue = () => page.evaluate(([text, gap]) => window.vpShownCue(text, gap), [cue.text, CUE_JOIN_GAP_S]);
      // Polled until right, as the players may still be loading the cue's other parts.
      const found = await pollUntil(page, 20, async () => {
        const c = await shownCue();
        return within(c) && c;
      });
      if (!found) {
        const last = await shownCue();
        if (last && last.rendered === false) throw new StepFailure(`cue "${cue.text}" active but not rendered in dash.js's TTML div`);
        if (last) throw new StepFailure(`cue "${cue.text}" shown ${last.start.toFixed(3)}-${last.end.toFixed(3)} s (${last.parts} part(s)), expected ${cue.start}-${cue.end} s (tolerance ${tolerance} s)`);
        const active = await page.evaluate(() => window.vpActiveCues());
        const all = await page.evaluate(() => window.vpTextTracks());
        throw new StepFailure(`at ${middle.toFixed(3)} s no active cue "${cue.text}"; active: ${JSON.stringify(active)}; text tracks: ${JSON.stringify(all)}`);
      }
      shown.push({ start: round(found.start), end: round(found.end), parts: found.parts, text: found.text });
    }
    return { track: track.lang, shown };
  },
};

// The kinds of media ("video", "audio") a SourceBuffer MIME type carries, by its codecs.
function mediaKinds(mime) {
  const m = /codecs\s*=\s*"?([^"]*)"?/i.exec(mime);
  const codecs = m ? m[1].toLowerCase() : '';
  const kinds = [];
  if (/avc|hvc|hev|av01|vp0?9|vp8|dvh|dva/.test(codecs)) kinds.push('video');
  if (/mp4a|opus|ac-3|ec-3|flac|mp3|vorbis|alac/.test(codecs)) kinds.push('audio');
  if (!kinds.length) kinds.push(String(mime).split('/')[0].toLowerCase());
  return kinds;
}

function round(x) {
  return Number.isFinite(x) ? Math.round(x * 1000) / 1000 : x;
}

async function runJob(browser, pageOrigin, job) {
  const started = Date.now();
  const report = { verdict: 'fail', name: job.name || `${job.player} ${job.url}`, player: job.player, url: job.url, reason: null, steps: [], errors: [], http: { requests: 0, failures: [] }, stalls: 0 };
  if (job.known_failures) report.known_failures = job.known_failures.map((k) => k.reason);
  const mediaFaults = [];
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    // With `trace`, each request, response and failure, at ms since the job began.
    const trace = (line) => { if (job.trace) (report.http.trace = report.http.trace || []).push(`${Date.now() - started} ms ${line}`); };
    page.on('response', (response) => {
      report.http.requests += 1;
      if (KEY_FRAME_URL.test(response.url()) && response.status() < 400) page.vpKeyFrames = (page.vpKeyFrames || 0) + 1;
      trace(`${response.status()} ${response.url()}`);
      if (response.status() >= 400 && report.http.failures.length < 20) report.http.failures.push({ url: response.url(), status: response.status() });
    });
    page.on('request', (request) => trace(`asked ${request.url()}`));
    page.on('requestfailed', (request) => {
      const why = request.failure() ? request.failure().errorText : 'failed';
      trace(`${why} ${request.url()}`);
      // A request the player cancels itself (a seek, a switch) is not a fault of the origin.
      if (why === 'net::ERR_ABORTED') return;
      if (report.http.failures.length < 20) report.http.failures.push({ url: request.url(), failure: why });
    });
    const work = (async () => {
      await page.goto(`${pageOrigin}/?player=${job.player}`, { waitUntil: 'load', timeout: 20000 });
      const cueStep = (job.steps || []).find((step) => step.cues);
      const textLanguage = cueStep ? cueStep.lang || null : null;
      const licence = job.clearkey_licence || null;
      const startError = await page.evaluate(([player, url, lang, ck]) => window.vpStart(player, url, lang, ck), [job.player, job.url, textLanguage, licence]);
      if (startError) throw new StepFailure(`player did not start: ${startError}`);
      for (const step of job.steps || []) {
        const kind = Object.keys(step).find((k) => STEP_KINDS.includes(k));
        const entry = { step: kind, arg: step[kind] };
        report.steps.push(entry);
        entry.detail = await STEPS[kind](page, step[kind], step);
        entry.ok = true;
      }
      await sleep(300); // let errors of the last requests arrive
    })();
    const limit = (Number(job.timeout_s) || 90) * 1000;
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new StepFailure(`job took longer than ${limit / 1000} s`)), limit); });
    try {
      await Promise.race([work, timeout]);
    } catch (e) {
      const last = report.steps[report.steps.length - 1];
      if (last && last.ok === undefined) last.ok = false;
      report.reason = e instanceof StepFailure ? `${last && last.ok === false ? last.step + ': ' : ''}${e.message}` : `runner error: ${e && e.message || e}`;
    } finally {
      clearTimeout(timer);
      work.catch(() => {});
    }
    const state = await page.evaluate(() => {
      const video = document.getElementById('video');
      const buffered = [];
      for (let i = 0; i < video.buffered.length; i++) buffered.push([video.buffered.start(i), video.buffered.end(i)]);
      return { errors: window.vpState.errors, stalls: window.vpState.stalls, cancelled: window.vpState.cancelled, events: window.vpState.events, buffered, readyState: video.readyState, media: window.vpState.media };
    }).catch(() => ({ errors: [], stalls: 0 }));
    report.errors = state.errors || [];
    report.stalls = state.stalls;
    report.cancelled = state.cancelled;
    report.media = state.media || [];
    for (const kind of job.media || []) {
      if (!report.media.some((m) => m.bytes > 0 && mediaKinds(m.mime).includes(kind))) {
        mediaFaults.push(`no ${kind} reached the browser's decoders (SourceBuffers: ${JSON.stringify(report.media)})`);
      }
    }
    if (report.reason || report.errors.length) Object.assign(report, { events: state.events, buffered: state.buffered, readyState: state.readyState });
  } finally {
    await context.close().catch(() => {});
  }
  const faults = [
    ...(report.reason ? [report.reason] : []),
    ...mediaFaults,
    ...report.errors.map((e) => `player error: ${e.source} ${e.name} ${e.detail}`.trim()),
    ...report.http.failures.map((f) => `HTTP failure: ${JSON.stringify(f)}`),
  ];
  report.reason = faults[0] || null;
  const known = (job.known_failures || []).map((k) => k.matches);
  report.verdict = !faults.length ? 'pass' : faults.every((f) => known.some((m) => f.includes(m))) ? 'known-failure' : 'fail';
  report.wall_s = Math.round((Date.now() - started) / 100) / 10;
  return report;
}

// ------------------------------------------------------------------------------ main

async function main() {
  let plan;
  try {
    plan = readJobs(process.argv);
  } catch (e) {
    console.error(`run.mjs: ${e.message}`);
    return 2;
  }
  const { chromium } = requireHere('playwright-core');
  const versions = Object.fromEntries(Object.values(PLAYER_FILES).map(([pkg]) => [pkg, packageVersion(pkg)]));
  const server = await startPageServer();
  const pageOrigin = `http://127.0.0.1:${server.address().port}`;
  let browser;
  let failed = 0;
  const stop = async () => {
    if (browser) await browser.close().catch(() => {});
    server.close();
  };
  // Stopped from outside (the Rust test's timeout sends SIGTERM first): close the browser.
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => { stop().finally(() => process.exit(2)); });
  const overall = setTimeout(() => {
    console.error(`run.mjs: the whole run took longer than ${plan.deadlineS} s`);
    stop().finally(() => process.exit(2));
  }, plan.deadlineS * 1000);
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60000 });
    console.error(`run.mjs: chromium ${browser.version()}, ${JSON.stringify(versions)}, ${plan.jobs.length} jobs, ${plan.parallel} at a time`);
    let next = 0;
    const worker = async () => {
      while (next < plan.jobs.length) {
        const job = plan.jobs[next++];
        const report = await runJob(browser, pageOrigin, job);
        if (report.verdict === 'fail') failed += 1;
        process.stdout.write(JSON.stringify(report) + '\n');
      }
    };
    await Promise.all(Array.from({ length: plan.parallel }, worker));
  } catch (e) {
    console.error(`run.mjs: ${e && e.stack || e}`);
    return 2;
  } finally {
    clearTimeout(overall);
    await stop();
  }
  return failed ? 1 : 0;
}

process.exitCode = await main();
