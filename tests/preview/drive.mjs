#!/usr/bin/env node
// drive.mjs: open vodpack's preview page in Debian's headless Chromium (playwright-core
// from tests/players/node_modules, as tests/players/run.mjs does), list the titles, click
// one and wait for both players (hls.js and dash.js) to play it, then click a broken one
// and read its reason. Driven by tests/preview.rs; usable alone:
//
//     node tests/preview/drive.mjs '{"base": "http://127.0.0.1:8080", "play": "a.mp4",
//                                    "broken": "b.mp4", "screenshot": "/tmp/p.png"}'
//
// Prints one JSON object: {"titles": [...], "played": {"hls": T, "dash": T, "hls_state",
// "dash_state"}, "variants": N, "reason": "...", "errors": [...]}. Every wait is bounded;
// the browser is closed at the end, also on failure. Exit 0 when the run completed (the
// test judges the result), 2 when the runner itself failed.

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
const PLAY_SECONDS = 1.0;
const WAIT_MS = 90000;

async function main() {
  const job = JSON.parse(process.argv[2]);
  const result = { titles: [], played: null, variants: 0, reason: null, errors: [] };
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60000 });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (e) => result.errors.push(`page error: ${e.message}`));
    // The page's content security policy must not stop anything it needs.
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) result.errors.push(`csp: ${m.text()}`); });
    page.on('requestfailed', (r) => {
      // A player aborting its own request on a switch is not a failure of the page.
      if (!/ERR_ABORTED/.test(r.failure()?.errorText || '')) result.errors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => { if (r.status() >= 400) result.errors.push(`HTTP ${r.status()} ${r.url()}`); });

    await page.goto(`${job.base}/`);
    result.titles = await page.$$eval('a.title', (links) => links.map((a) => a.textContent));

    // A click on a title opens it, and both players play it.
    await Promise.all([page.waitForURL(/[?&]key=/), page.getByText(job.play, { exact: true }).click()]);
    await page.waitForFunction((seconds) => {
      const t = (id) => document.getElementById(id)?.currentTime || 0;
      const failed = (id) => (document.getElementById(id)?.textContent || '').startsWith('error');
      return (t('hls-video') > seconds && t('dash-video') > seconds) || failed('hls-state') || failed('dash-state');
    }, PLAY_SECONDS, { timeout: WAIT_MS, polling: 200 });
    result.played = await page.evaluate(() => ({
      hls: document.getElementById('hls-video').currentTime,
      dash: document.getElementById('dash-video').currentTime,
      hls_state: document.getElementById('hls-state').textContent,
      dash_state: document.getElementById('dash-state').textContent,
    }));
    result.variants = await page.$$eval('#variants tr', (rows) => rows.length - 1);
    result.inspect = await page.$eval('#inspect', (e) => e.textContent).catch(() => null);
    if (job.screenshot) await page.screenshot({ path: job.screenshot, fullPage: true });

    // A broken file shows the server's reason.
    await page.goto(`${job.base}/`);
    await Promise.all([page.waitForURL(/[?&]key=/), page.getByText(job.broken, { exact: true }).click()]);
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
