import { describe, expect, it } from 'vitest';
import { campaignsConfig, ConfigError, loadConfig, parseConfig } from './config';

describe('parseConfig', () => {
  it('accepts local mode', () => {
    expect(parseConfig({ mode: 'local', apiUrl: 'http://localhost:8080' })).toEqual({ mode: 'local', apiUrl: 'http://localhost:8080' });
  });
  it('accepts cognito mode and drops unknown keys', () => {
    const raw = {
      mode: 'cognito',
      apiUrl: 'https://x.example.test/prod',
      region: 'eu-west-1',
      userPoolId: 'eu-west-1_abc',
      userPoolClientId: 'client',
      extra: true,
    };
    expect(parseConfig(raw)).toEqual({
      mode: 'cognito',
      apiUrl: 'https://x.example.test/prod',
      region: 'eu-west-1',
      userPoolId: 'eu-west-1_abc',
      userPoolClientId: 'client',
    });
  });
  const bad: { name: string; raw: unknown; msg: RegExp }[] = [
    { name: 'not an object', raw: [], msg: /JSON object/ },
    { name: 'no apiUrl', raw: { mode: 'local' }, msg: /apiUrl/ },
    { name: 'unknown mode', raw: { mode: 'aws', apiUrl: '' }, msg: /mode must be "cognito" or "local" \(given "aws"\)/ },
    { name: 'cognito without a pool', raw: { mode: 'cognito', apiUrl: 'x', region: 'r', userPoolClientId: 'c' }, msg: /userPoolId/ },
    { name: 'cognito with an empty client id', raw: { mode: 'cognito', apiUrl: 'x', region: 'r', userPoolId: 'p', userPoolClientId: '' }, msg: /userPoolClientId/ },
  ];
  for (const c of bad) {
    it(`rejects ${c.name}`, () => {
      expect(() => parseConfig(c.raw)).toThrow(ConfigError);
      expect(() => parseConfig(c.raw)).toThrow(c.msg);
    });
  }
});

describe('loadConfig', () => {
  it('fetches the given URL without the HTTP cache', async () => {
    const seen: { url: string; init?: RequestInit }[] = [];
    const cfg = await loadConfig(async (url, init) => {
      seen.push({ url, ...(init ? { init } : {}) });
      return new Response('{"mode":"local","apiUrl":""}', { status: 200 });
    }, './config.json');
    expect(cfg).toEqual({ mode: 'local', apiUrl: '' });
    expect(seen).toEqual([{ url: './config.json', init: { cache: 'no-store' } }]);
  });
});

describe('loadConfig failures', () => {
  it('names the file and status when the server has no config', async () => {
    const err = await loadConfig(async () => new Response('not found', { status: 404 }), '/config.json').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe('/config.json could not be loaded (HTTP 404)');
  });
  it('rejects a config that is not valid', async () => {
    await expect(loadConfig(async () => new Response('{"mode":"x","apiUrl":""}'), '/config.json')).rejects.toThrow(ConfigError);
  });
});

describe('campaign keys', () => {
  const cognito = { mode: 'cognito', apiUrl: 'https://x/prod', region: 'r', userPoolId: 'p', userPoolClientId: 'c' };
  const cases: { name: string; raw: Record<string, unknown>; want: ReturnType<typeof campaignsConfig> }[] = [
    { name: 'local: always on, SSE at apiUrl', raw: { mode: 'local', apiUrl: '' }, want: { apiUrl: '', live: { kind: 'sse' } } },
    { name: 'cognito without campaignsApiUrl: off', raw: cognito, want: null },
    { name: 'cognito with the API only: polling', raw: { ...cognito, campaignsApiUrl: 'https://c/prod' }, want: { apiUrl: 'https://c/prod', live: { kind: 'none' } } },
    {
      name: 'cognito with AppSync Events names (schemes and paths dropped)',
      raw: { ...cognito, campaignsApiUrl: 'https://c/prod', campaignEventsHttp: 'https://abc.appsync-api.eu-west-1.amazonaws.com/event', campaignEventsRealtime: 'abc.appsync-realtime-api.eu-west-1.amazonaws.com' },
      want: { apiUrl: 'https://c/prod', live: { kind: 'appsync', httpHost: 'abc.appsync-api.eu-west-1.amazonaws.com', realtimeHost: 'abc.appsync-realtime-api.eu-west-1.amazonaws.com' } },
    },
  ];
  for (const c of cases) {
    it(c.name, () => expect(campaignsConfig(parseConfig(c.raw))).toEqual(c.want));
  }
  const bad: { name: string; raw: Record<string, unknown>; msg: RegExp }[] = [
    { name: 'an empty campaignsApiUrl', raw: { ...cognito, campaignsApiUrl: '' }, msg: /campaignsApiUrl must be a non-empty string/ },
    { name: 'a number', raw: { mode: 'local', apiUrl: '', campaignEventsHttp: 3 }, msg: /campaignEventsHttp/ },
    { name: 'one AppSync name without the other', raw: { ...cognito, campaignsApiUrl: 'x', campaignEventsHttp: 'h' }, msg: /go together/ },
  ];
  for (const c of bad) {
    it(`rejects ${c.name}`, () => expect(() => parseConfig(c.raw)).toThrow(c.msg));
  }
  it('keeps the old shapes without the keys', () => {
    expect(parseConfig(cognito)).not.toHaveProperty('campaignsApiUrl');
  });
});
