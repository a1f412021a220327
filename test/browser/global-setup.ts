import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { TestProject } from 'vitest/node';
import { ensureWebBuild } from '../../scripts/web-build.ts';
import '../support/browser.ts';
import { aptInstall } from '../support/apt.ts';

const candidates = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

function findChromium(): string {
  if (process.env.CHROMIUM_PATH && fs.existsSync(process.env.CHROMIUM_PATH)) return process.env.CHROMIUM_PATH;
  const onPath = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser || command -v google-chrome'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  return candidates.find((file) => fs.existsSync(file)) ?? '';
}

/**
 * The browser tests need the built web app (built here when web/dist is missing or stale) and a
 * Chromium: Debian's package, installed with apt when missing and running as root (as the
 * PostgreSQL tests do); otherwise the run fails: a browser test that cannot run is not a pass.
 */
export default function setup(project: TestProject) {
  if (!ensureWebBuild((line) => console.log(line))) throw new Error('The web app could not be built; see the output above');
  let chromium = findChromium();
  if (!chromium && process.getuid?.() === 0 && process.platform === 'linux') {
    console.log('Installing Debian chromium for the browser tests…');
    aptInstall('chromium', 'Chromium');
    chromium = findChromium();
  }
  if (!chromium) throw new Error('No Chromium found for the browser tests: apt-get install chromium, or set CHROMIUM_PATH');
  project.provide('chromiumPath', chromium);
}
