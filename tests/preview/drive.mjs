#!/usr/bin/env node
// drive.mjs: open vodpack's preview page in Debian's headless Chromium (playwright-core
// from tests/players/node_modules, as tests/players/run.mjs does) and report what a person
// would see: the catalogue's cards and whether every poster loaded; a title's players
// played to the end (hls.js on CMAF and MPEG-TS, dash.js), its storyboard strip and
// bit-rate chart; a title document's break marks on the timeline; a broken file's reason.
// Every request the page makes is logged, and one outside the origin is aborted and
// reported. Driven by tests/preview.rs; usable alone:
//
//     node tests/preview/drive.mjs '{"base": "http://127.0.0.1:8080", "play": "a.mp4",
//                                    "breaks": "b.json", "broken": "c.mp4",
//                                    "token": null, "screenshots": "/tmp/shots"}'
//
// Prints one JSON object (see `result` below). Every wait is bounded; the browser is
// closed at the end, also on failure. Exit 0 when the run completed (the test judges the
// result), 2 when the runner itself failed.

import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const requirePlayers = createRequire(path.join(HERE, '..', 'players', 'package.json'));
const { chromium } = requirePlayers('playwright-core');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--autoplay-policy=no-user-gesture-required'];
const WAIT_MS = 90000;

async function main() {
  const job = JSON.parse(process.argv[2]);
  const origin = new URL(job.base).origin;
  const result = {
    titles: [], cards: [], posters: { count: 0, loaded: 0, failed: [] },
    played: null, player_errors: [], chart: null, storyboard: null,
    breaks: [], reason: null, players_on_broken: null,
    requests: 0, outside: [], errors: [],
  };
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60000 });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // Nothing leaves the origin: such a request is aborted and reported.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      result.requests += 1;
      if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) return route.continue();
      result.outside.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (e) => result.errors.push(`page error: ${e.message}`));
    // The page's content security policy must not stop anything it needs.
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) result.errors.push(`csp: ${m.text()}`); });
    page.on('requestfailed', (r) => {
      // A player aborting its own request on a switch is not a failure of the page.
      if (!/ERR_ABORTED/.test(r.failure()?.errorText || '')) result.errors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => { if (r.status() >= 400) result.errors.push(`HTTP ${r.status()} ${r.url()}`); });

    // The catalogue: its cards, and every poster loaded (each scrolled into view, as the
    // page asks for them as they come into view; data-state says how each ended).
    // With signed URLs the job gives the token, which the page carries into its links.
    const token = job.token ? `&token=${encodeURIComponent(job.token)}` : '';
    await page.goto(`${job.base}/${job.token ? `?token=${encodeURIComponent(job.token)}` : ''}`);
    result.titles = await page.$$eval('a.title', (links) => links.map((a) => a.textContent));
    result.cards = await page.$$eval('li.card', (cards) => cards.map((c) => ({
      key: c.dataset.key,
      facts: c.querySelector('.facts')?.textContent || '',
      why: c.querySelector('.why')?.textContent || null,
      poster: !!c.querySelector('img.poster'),
    })));
    const posters = await page.$$('img.poster');
    result.posters.count = posters.length;
    for (const img of posters) {
      await img.scrollIntoViewIfNeeded();
      await img.evaluate((i) => new Promise((done) => {
        const check = () => (i.dataset.state === 'loaded' || i.dataset.state === 'failed' ? done() : setTimeout(check, 100));
        check();
      }));
      const ok = await img.evaluate((i) => i.dataset.state === 'loaded' && i.naturalWidth > 0);
      if (ok) result.posters.loaded += 1;
      else result.posters.failed.push(await img.getAttribute('data-src'));
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    if (job.screenshots) await page.screenshot({ path: path.join(job.screenshots, 'preview-list.png'), fullPage: true });

    // A click on a title opens it; every player plays it to the end.
    await Promise.all([page.waitForURL(/[?&]key=/), page.getByText(job.play, { exact: true }).click()]);
    const videos = await page.$$eval('#players video', (vs) => vs.map((v) => v.id));
    await page.waitForFunction((ids) => ids.every((id) => {
      const v = document.getElementById(id);
      return v.ended || (v.duration > 0 && v.currentTime >= v.duration - 0.25);
    }) || (window.vodpackPreview?.errors || []).length > 0, videos, { timeout: WAIT_MS, polling: 200 });
    result.played = await page.evaluate((ids) => Object.fromEntries(ids.map((id) => {
      const v = document.getElementById(id);
      return [id, { time: v.currentTime, duration: v.duration, ended: v.ended }];
    })), videos);
    // The storyboard strip's tiles and the chart's bars.
    await page.waitForFunction(() => document.querySelectorAll('#strip img').length > 0
      || (window.vodpackPreview?.errors || []).length > 0, null, { timeout: WAIT_MS });
    result.storyboard = await page.$$eval('#strip img', (imgs) => Promise.all(imgs.map((i) => new Promise((done) => {
      const settle = () => done(i.complete && i.naturalWidth > 0);
      if (i.complete) settle(); else { i.addEventListener('load', settle); i.addEventListener('error', settle); }
    })))).then((loaded) => ({ tiles: loaded.length, loaded: loaded.filter(Boolean).length }));
    result.chart = await page.evaluate(() => ({
      rungs: document.querySelectorAll('#bitrates g.rung').length,
      bars: document.querySelectorAll('#bitrates rect.seg').length,
      declared: document.querySelectorAll('#bitrates line.declared').length,
    }));
    result.player_errors = await page.evaluate(() => window.vodpackPreview?.errors || ['no page script']);
    result.variants = await page.$$eval('#variants tr', (rows) => rows.length - 1);
    if (job.screenshots) {
      // The picture a person gets: players a second in, the storyboard tile under the pointer.
      await page.$$eval('#players video', (vs) => vs.forEach((v) => { v.pause(); v.currentTime = 1; }));
      const box = await page.locator('#track').boundingBox();
      if (box) await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 3);
      await page.waitForTimeout(500);
      await page.screenshot({ path: path.join(job.screenshots, 'preview-title.png'), fullPage: true });
    }

    // A title document's breaks, marked on the timeline.
    if (job.breaks) {
      await page.goto(`${job.base}/?key=${encodeURIComponent(job.breaks)}${token}`);
      result.breaks = await page.$$eval('#marks g.mark.break', (gs) => gs.map((g) => ({
        ms: Number(g.dataset.ms), x: Number(g.dataset.x), label: g.querySelector('text')?.textContent,
      })));
      result.breaks_duration_ms = await page.$eval('#timeline', (t) => Number(t.dataset.durationMs));
      if (job.screenshots) {
        await page.waitForFunction(() => document.querySelectorAll('#strip img').length > 0, null, { timeout: WAIT_MS }).catch(() => {});
        await page.$$eval('#players video', (vs) => vs.forEach((v) => v.pause()));
        await page.locator('#timeline').screenshot({ path: path.join(job.screenshots, 'preview-timeline.png') });
      }
    }

    // A broken file shows the server's reason, and no players.
    await page.goto(`${job.base}/?key=${encodeURIComponent(job.broken)}${token}`);
    result.reason = await page.$eval('#reason', (e) => e.textContent);
    result.players_on_broken = await page.$$eval('video', (v) => v.length);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => {
  process.stderr.write(`drive.mjs: ${e.stack || e}\n`);
  process.exit(2);
});
