import { describe, expect, it } from '@jest/globals';
import { loadSettings, SettingsError } from './settings.js';

/** A production environment that is valid apart from the binding switch. */
const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_JWKS_URI: 'https://issuer.example/jwks.json',
  JWT_ISSUER: 'https://issuer.example',
  CONTROLLER_HOST_ID: 'h1',
  DATABASE_URL: 'postgres://u:p@db:5432/bindery',
};

describe('ENFORCE_SID_HOST_MATCH (DESIGN 6.4)', () => {
  it('defaults to enforcing', () => {
    expect(loadSettings({}).enforceSidHostMatch).toBe(true);
    expect(loadSettings(PRODUCTION).enforceSidHostMatch).toBe(true);
    expect(loadSettings({}).allowUnenforcedBinding).toBe(false);
  });

  it('may be switched off outside production', () => {
    const settings = loadSettings({ ENFORCE_SID_HOST_MATCH: 'false' });
    expect(settings.enforceSidHostMatch).toBe(false);
    expect(loadSettings({ NODE_ENV: 'test', ENFORCE_SID_HOST_MATCH: '0' }).enforceSidHostMatch).toBe(false);
  });

  it('is refused off in production without ALLOW_UNENFORCED_BINDING=true', () => {
    expect(() => loadSettings({ ...PRODUCTION, ENFORCE_SID_HOST_MATCH: 'false' })).toThrow(SettingsError);
    expect(() => loadSettings({ ...PRODUCTION, ENFORCE_SID_HOST_MATCH: 'false' })).toThrow(
      /ENFORCE_SID_HOST_MATCH.*ALLOW_UNENFORCED_BINDING=true/,
    );
    expect(() =>
      loadSettings({ ...PRODUCTION, ENFORCE_SID_HOST_MATCH: 'false', ALLOW_UNENFORCED_BINDING: 'false' }),
    ).toThrow(SettingsError);
  });

  it('is accepted off in production with ALLOW_UNENFORCED_BINDING=true', () => {
    const settings = loadSettings({ ...PRODUCTION, ENFORCE_SID_HOST_MATCH: 'false', ALLOW_UNENFORCED_BINDING: 'true' });
    expect(settings.enforceSidHostMatch).toBe(false);
    expect(settings.allowUnenforcedBinding).toBe(true);
  });

  it('refuses values that are not booleans', () => {
    expect(() => loadSettings({ ENFORCE_SID_HOST_MATCH: 'no' })).toThrow(/ENFORCE_SID_HOST_MATCH/);
    expect(() => loadSettings({ ALLOW_UNENFORCED_BINDING: 'yes' })).toThrow(/ALLOW_UNENFORCED_BINDING/);
  });
});
