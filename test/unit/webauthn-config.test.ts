import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

// Contract §8, "Passkeys": the relying-party ID is the host name of BASE_URL; WEBAUTHN_RP_ID overrides it.
describe('passkey relying-party ID', () => {
  it('is the host name of BASE_URL by default', () => {
    expect(loadConfig({}).webauthnRpId).toBe('localhost');
    expect(loadConfig({ BASE_URL: 'https://files.example.com:8443' }).webauthnRpId).toBe('files.example.com');
  });

  it('is WEBAUTHN_RP_ID when set: the host or a domain it belongs to', () => {
    expect(loadConfig({ BASE_URL: 'https://files.example.com', WEBAUTHN_RP_ID: 'example.com' }).webauthnRpId).toBe('example.com');
    expect(loadConfig({ BASE_URL: 'https://files.example.com', WEBAUTHN_RP_ID: 'files.example.com' }).webauthnRpId).toBe('files.example.com');
  });

  it.each(['other.example', 'le.com', 'https://example.com', 'Example.com', 'example.com:443'])('refuses WEBAUTHN_RP_ID=%s for https://files.example.com', (value) => {
    expect(() => loadConfig({ BASE_URL: 'https://files.example.com', WEBAUTHN_RP_ID: value })).toThrow(ConfigError);
    expect(() => loadConfig({ BASE_URL: 'https://files.example.com', WEBAUTHN_RP_ID: value })).toThrow(/^WEBAUTHN_RP_ID=/);
  });
});
