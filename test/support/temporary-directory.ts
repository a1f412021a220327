import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

// Every test file gets a temporary directory of its own, removed when the file is done, and
// `os.tmpdir()` points into it for the file and every process it starts (servers, the CLI,
// Chromium, s3rver): a data directory, upload or fixture a test makes there cannot outlive the
// run. Before, each run of the suite left about 400 data directories (gigabytes) behind.
const outer = os.tmpdir();
const own = fs.mkdtempSync(path.join(outer, 'hoard-file-'));
// A throwaway PostgreSQL cluster made inside runs as the postgres user, who must pass through.
fs.chmodSync(own, 0o755);
process.env.TMPDIR = own;
// Where a test keeps what must outlive it, such as the input of a failure to replay.
process.env.HOARD_OUTER_TMPDIR = outer;
// The servers and command-line runs a test starts compile the same sources: with Node's compile
// cache, kept beside the directories of all files, a run of the command-line tool starts in about
// half the second it took.
process.env.NODE_COMPILE_CACHE ??= path.join(outer, 'node-compile-cache');

afterAll(async () => {
  process.env.TMPDIR = outer;
  await fs.promises.rm(own, { recursive: true, force: true, maxRetries: 5 });
});
