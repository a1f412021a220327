import { spawnSync } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('loadConfig', () => {
  it('uses the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      baseUrl: 'http://localhost:3000',
      databaseUrl: null,
      storage: 'local',
      s3: null,
      maxUploadSize: 1073741824,
      defaultQuota: 0,
      trustProxy: false,
      webhookAllowPrivate: false,
      logLevel: 'info',
      auditRetentionDays: 90,
      listingCacheBytes: 32 * 1024 * 1024,
      chunkedUploadTempLimit: 20 * 1024 * 1024 * 1024,
      workers: 1,
    });
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it('derives BASE_URL from PORT and reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgresql://u:p@db/hoard',
      STORAGE: 's3',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_BUCKET: 'files',
      S3_FORCE_PATH_STYLE: 'true',
      MAX_UPLOAD_SIZE: '1000',
      DEFAULT_QUOTA: '5000',
      TRUST_PROXY: 'true',
      WEBHOOK_ALLOW_PRIVATE: '1',
      LOG_LEVEL: 'warn',
      AUDIT_RETENTION_DAYS: '0',
      LISTING_CACHE_MB: '4',
      CHUNKED_UPLOAD_TEMP_LIMIT: '0',
    });
    expect(config.baseUrl).toBe('http://localhost:8080');
    expect(config).toMatchObject({ auditRetentionDays: 0, listingCacheBytes: 4 * 1024 * 1024, chunkedUploadTempLimit: 0 });
    expect(config.s3).toMatchObject({ endpoint: 'http://127.0.0.1:9000', bucket: 'files', forcePathStyle: true, region: 'us-east-1' });
    expect(config).toMatchObject({ maxUploadSize: 1000, defaultQuota: 5000, trustProxy: true, webhookAllowPrivate: true, logLevel: 'warn' });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['STORAGE', 'ftp'],
    ['BASE_URL', 'http://example.com/'],
    ['BASE_URL', 'example.com'],
    ['MAX_UPLOAD_SIZE', '-1'],
    // No file could be uploaded, and the value would be kept as the instance setting's first value.
    ['MAX_UPLOAD_SIZE', '0'],
    ['DEFAULT_QUOTA', '1.5'],
    ['TRUST_PROXY', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['AUDIT_RETENTION_DAYS', '-3'],
    ['LISTING_CACHE_MB', 'lots'],
    ['CHUNKED_UPLOAD_TEMP_LIMIT', '20G'],
    ['WORKERS', '0'],
    ['WORKERS', 'all'],
    // Past what Node's timers hold, a time-out would fire at once.
    ['REQUEST_IDLE_TIMEOUT_MS', '3000000000'],
    ['REQUEST_IDLE_TIMEOUT_MS', '99'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}=`));
  });

  it('reads WORKERS as a number of processes, or auto for one per CPU', () => {
    expect(loadConfig({ WORKERS: '3' }).workers).toBe(3);
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(os.availableParallelism());
  });

  it('requires a bucket for S3 storage', () => {
    expect(() => loadConfig({ STORAGE: 's3' })).toThrow(/S3_BUCKET/);
  });

  it('takes S3 credentials as a pair: one alone would leave the other to whatever AWS credentials the machine has', () => {
    for (const [name, other] of [['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'], ['S3_SECRET_ACCESS_KEY', 'S3_ACCESS_KEY_ID']] as const) {
      expect(() => loadConfig({ STORAGE: 's3', S3_BUCKET: 'files', [name]: 'value' })).toThrow(new ConfigError(`${name} is set without ${other}: set both, or neither (then the AWS SDK's own: AWS_* variables, a profile, an instance role)`));
    }
    expect(loadConfig({ STORAGE: 's3', S3_BUCKET: 'files', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret' }).s3).toMatchObject({ accessKeyId: 'id', secretAccessKey: 'secret' });
    expect(loadConfig({ STORAGE: 's3', S3_BUCKET: 'files' }).s3).toMatchObject({ accessKeyId: undefined, secretAccessKey: undefined });
  });
});

describe('start-up with a bad configuration', () => {
  it('names a .env it cannot read in one line, for the server and the command-line tool', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-dotenv-'));
    fs.mkdirSync(path.join(dir, '.env'));
    for (const script of ['src/main.ts', 'src/cli/main.ts']) {
      const result = spawnSync(process.execPath, [path.resolve(script), 'migrate'], { cwd: dir, env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 20_000 });
      expect(result.status, script).toBe(1);
      expect(result.stderr.trim().split('\n'), script).toEqual([expect.stringMatching(/^hoard: invalid configuration: \.env in .* cannot be read \(EISDIR\)$/)]);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['PORT', 'abc'],
    ['DATABASE_URL', 'mysql://x'],
    ['STORAGE', 'ftp'],
  ])('%s=%s exits with one line naming the variable', (name, value) => {
    const result = spawnSync(process.execPath, ['src/main.ts'], { env: { PATH: process.env.PATH, [name]: value }, encoding: 'utf8', timeout: 20_000 });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${name}=`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
