import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import type { ChildServer } from './child.ts';
import { ensureWebBuild } from '../../scripts/web-build.ts';
import { startHoard } from './hoard.ts';
import { signIn } from './archives.ts';
import { figure, type Figure } from './report.ts';
import { median, round } from './stats.ts';

/**
 * The "web" section (`npm run bench -- --only web`): what the first page of the web app costs a
 * visitor, in a real Chromium with an empty cache, signed in to an account of 33 files:
 * - the JavaScript transferred (compressed bytes on the wire, from the Resource Timing entries);
 * - the cumulative layout shift while it loads (a `layout-shift` PerformanceObserver installed
 *   before the page's own scripts, summed over the shifts without recent input), at 1280 and 390 px.
 * Each figure is the median of 5 loads, each in a new browser profile.
 */
export interface WebBenchOptions {
  workDir: string;
  log: (message: string) => void;
  children: ChildServer[];
}

const LOADS = 5;

function chromiumPath(): string | null {
  for (const candidate of [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (candidate && fs.existsSync(candidate)) return candidate;
  }
  const found = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).stdout.trim();
  return found || null;
}

/** A 1×1 PNG, so the grid has pictures to lay out. */
const PNG_1X1 = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f0fbbb0000000049454e44ae426082', 'hex');

export async function webSection(options: WebBenchOptions): Promise<Figure[]> {
  const executablePath = chromiumPath();
  if (!executablePath) {
    options.log('web: no Chromium on this machine (apt-get install chromium); section skipped');
    return [];
  }
  // The server answers /app with 503 until the app is built, and a clean clone has no build: build
  // it as `npm start` does, or the page waited on below never shows a file.
  if (!ensureWebBuild(options.log)) throw new Error('web: the web app could not be built (see above); npm run build:web shows why');
  const hoard = await startHoard({ workDir: path.join(options.workDir, 'web') });
  options.children.push(hoard.server);
  const base = hoard.server.url;
  for (let i = 0; i < 33; i++) {
    const png = i % 3 === 1;
    const name = png ? `screenshot-${i}.png` : `notes-${i}.txt`;
    const body = new FormData();
    body.append('file', new Blob([png ? PNG_1X1 : `line ${i}\n`], { type: png ? 'image/png' : 'text/plain' }), name);
    const answer = await fetch(`${base}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${hoard.token}` }, body });
    if (answer.status !== 200) throw new Error(`web: upload failed: ${answer.status} ${await answer.text()}`);
  }
  const session = await signIn(base);
  const cookie = session.cookie.split('=');

  const load = async (width: number) => {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-bench-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      chromiumSandbox: false,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width, height: 860 },
    });
    try {
      await context.addCookies([{ name: cookie[0]!, value: cookie.slice(1).join('='), url: base }]);
      const page = context.pages()[0] ?? (await context.newPage());
      // Through the DevTools protocol, before the page's scripts: the app's CSP stays as it is.
      await page.addInitScript(`window.__shift = 0; new PerformanceObserver((list) => { for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shift += e.value; }).observe({ type: 'layout-shift', buffered: true });`);
      await page.goto(`${base}/app/files`);
      await page.getByTestId('file-card').first().waitFor();
      await page.waitForLoadState('networkidle');
      await page.waitForTimeout(1000);
      return (await page.evaluate(`({
        js: performance.getEntriesByType('resource').filter((e) => /\\.js(\\?|$)/.test(e.name)).reduce((sum, e) => sum + e.transferSize, 0),
        decoded: performance.getEntriesByType('resource').filter((e) => /\\.js(\\?|$)/.test(e.name)).reduce((sum, e) => sum + e.decodedBodySize, 0),
        shift: window.__shift,
      })`)) as { js: number; decoded: number; shift: number };
    } finally {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  };

  const desktop: Array<{ js: number; decoded: number; shift: number }> = [];
  const phone: Array<{ js: number; decoded: number; shift: number }> = [];
  for (let i = 0; i < LOADS; i++) {
    desktop.push(await load(1280));
    phone.push(await load(390));
  }
  await hoard.server.stop();
  options.children.splice(options.children.indexOf(hoard.server), 1);
  const kb = (bytes: number) => bytes / 1000;
  const jsKb = median(desktop.map((r) => kb(r.js)));
  options.log(`web: first page JavaScript ${jsKb.toFixed(1)} kB transferred (${median(desktop.map((r) => kb(r.decoded))).toFixed(1)} kB decoded); layout shift ${median(desktop.map((r) => r.shift)).toFixed(3)} at 1280 px, ${median(phone.map((r) => r.shift)).toFixed(3)} at 390 px`);
  return [
    figure({
      id: 'web.firstPageJs',
      label: 'web app: JavaScript transferred for the first page (/app/files, empty cache)',
      unit: 'kB',
      value: jsKb,
      baseline: null,
      baselineLabel: null,
      target: { on: 'value', op: '<', value: 120 },
      detail: { transferredKb: desktop.map((r) => round(kb(r.js), 1)), decodedKb: desktop.map((r) => round(kb(r.decoded), 1)) },
    }),
    figure({
      id: 'web.layoutShift.desktop',
      label: 'web app: cumulative layout shift while /app/files loads, 1280 px',
      unit: '',
      value: median(desktop.map((r) => r.shift)),
      baseline: null,
      baselineLabel: null,
      target: { on: 'value', op: '<', value: 0.02 },
      detail: { shifts: desktop.map((r) => round(r.shift, 4)) },
    }),
    figure({
      id: 'web.layoutShift.phone',
      label: 'web app: cumulative layout shift while /app/files loads, 390 px',
      unit: '',
      value: median(phone.map((r) => r.shift)),
      baseline: null,
      baselineLabel: null,
      target: { on: 'value', op: '<', value: 0.02 },
      detail: { shifts: phone.map((r) => round(r.shift, 4)) },
    }),
  ];
}
