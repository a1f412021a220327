import { describe, expect, it } from 'vitest';
import { sameStorageTarget } from '../../src/storage/targets.ts';

describe('storage targets', () => {
  it('are one place however the endpoint is spelled', () => {
    const here = 's3:http://127.0.0.1:9000/media';
    for (const other of ['s3:http://localhost:9000/media', 's3:HTTP://LOCALHOST:9000//media', 's3:http://[::1]:9000/media', 's3:http://127.0.0.1:9000/media']) {
      expect(sameStorageTarget(other, here), other).toBe(true);
    }
    expect(sameStorageTarget('s3:https://Minio.example/media', 's3:https://minio.example:443/media')).toBe(true);
    expect(sameStorageTarget('s3:aws:eu-west-1/media', 's3:https://s3.eu-west-1.amazonaws.com/media')).toBe(true);
    expect(sameStorageTarget('s3:aws:us-east-1/media', 's3:https://s3.amazonaws.com/media')).toBe(true);
    expect(sameStorageTarget('s3:aws:eu-west-1/media', 's3:https://s3.dualstack.eu-west-1.amazonaws.com/media')).toBe(true);
  });

  it('are different places for another bucket, host, port, region or kind of storage', () => {
    const here = 's3:http://127.0.0.1:9000/media';
    for (const other of ['s3:http://127.0.0.1:9000/other', 's3:http://127.0.0.1:9001/media', 's3:http://minio.example:9000/media', 'local:/srv/hoard/files', null]) {
      expect(sameStorageTarget(other, here), String(other)).toBe(false);
    }
    expect(sameStorageTarget('s3:aws:eu-west-1/media', 's3:aws:us-east-1/media')).toBe(false);
    expect(sameStorageTarget('local:/srv/a/files', 'local:/srv/b/files')).toBe(false);
    expect(sameStorageTarget('local:/srv/a/files', 'local:/srv/a/files')).toBe(true);
  });
});
