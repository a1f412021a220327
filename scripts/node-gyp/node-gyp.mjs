#!/usr/bin/env node
/**
 * The `node-gyp` that npm finds first on the PATH of install scripts (node_modules/.bin, through the
 * `hoard-node-gyp` devDependency): npm's own node-gyp, told to use the headers of the pinned Node
 * (the `node` devDependency installs them under node_modules/node/node_modules/node-<platform>-<arch>).
 * Native add-ons (better-sqlite3, whose install runs node-gyp even when its prebuilt binary fits)
 * are then built for the Node that runs Hoard, not the machine's own, and without downloading headers,
 * which an offline install cannot do. npm has no setting for this (`nodedir` in .npmrc is not an npm
 * setting: npm warns about it on every command).
 *
 * npm installs it as a copy (.npmrc: install-links): a change here applies after the next `npm ci`.
 * Plain JavaScript: npm may run it with the machine's Node, which need not strip types.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(realpathSync(fileURLToPath(import.meta.url))), '..', '..');
const pinned = join(root, 'node_modules', 'node', 'node_modules', `node-${process.platform}-${process.arch}`);
// node-gyp takes npm_config_* variables as its options; this one wins over a nodedir of the user's.
if (existsSync(join(pinned, 'include', 'node'))) process.env.npm_config_nodedir = pinned;

// npm names the node-gyp it ships with in npm_config_node_gyp (its own node-gyp-bin shim runs that).
const nodeGyp = process.env.npm_config_node_gyp;
if (!nodeGyp || realpathSync(nodeGyp) === realpathSync(fileURLToPath(import.meta.url))) {
  console.error('hoard-node-gyp: npm_config_node_gyp does not name npm’s node-gyp; run this through npm');
  process.exit(1);
}
const result = spawnSync(process.execPath, [nodeGyp, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
