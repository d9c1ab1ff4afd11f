import { ApiError, type FetchFn, requestJson } from './http';

/**
 * Optional keys of the campaign page (written by the todoapp stack when
 * campaigns are on): the campaign REST API's base URL, and the AWS AppSync
 * Events API's HTTP and realtime DNS names that push campaign progress.
 */
export interface CampaignKeys {
  campaignsApiUrl?: string;
  campaignEventsHttp?: string;
  campaignEventsRealtime?: string;
}

/** The runtime configuration served next to the app as /config.json. */
export type AppConfig =
  | ({ mode: 'local'; apiUrl: string } & CampaignKeys)
  | ({ mode: 'cognito'; apiUrl: string; region: string; userPoolId: string; userPoolClientId: string } & CampaignKeys);

/** How the campaign page reaches its API and its live updates. */
export interface CampaignsConfig {
  apiUrl: string;
  live:
    | { kind: 'sse' } // make dev: GET {apiUrl}/campaigns/{id}/events
    | { kind: 'appsync'; httpHost: string; realtimeHost: string }
    | { kind: 'none' }; // polling only
}

/**
 * The campaign page's settings, or null when the page is off. In local mode
 * the dev server serves the campaign routes at apiUrl and pushes progress as
 * server-sent events: the page is always on. In cognito mode it needs
 * campaignsApiUrl; without both AppSync names it polls.
 */
export function campaignsConfig(c: AppConfig): CampaignsConfig | null {
  if (c.mode === 'local') return { apiUrl: c.campaignsApiUrl ?? c.apiUrl, live: { kind: 'sse' } };
  if (!c.campaignsApiUrl) return null;
  if (c.campaignEventsHttp && c.campaignEventsRealtime) {
    return { apiUrl: c.campaignsApiUrl, live: { kind: 'appsync', httpHost: hostOf(c.campaignEventsHttp), realtimeHost: hostOf(c.campaignEventsRealtime) } };
  }
  return { apiUrl: c.campaignsApiUrl, live: { kind: 'none' } };
}

/** A DNS name given with or without a scheme and path ("https://x/event" → "x"). */
function hostOf(v: string): string {
  return v.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
}

/** Reads the optional campaign keys: absent is fine, present must be a non-empty string. */
function campaignKeys(c: Record<string, unknown>): CampaignKeys {
  const out: CampaignKeys = {};
  for (const key of ['campaignsApiUrl', 'campaignEventsHttp', 'campaignEventsRealtime'] as const) {
    if (c[key] === undefined) continue;
    if (typeof c[key] !== 'string' || c[key] === '') {
      throw new ConfigError(`config.json: ${key} must be a non-empty string when present (given ${JSON.stringify(c[key])})`);
    }
    out[key] = c[key] as string;
  }
  if ((out.campaignEventsHttp === undefined) !== (out.campaignEventsRealtime === undefined)) {
    throw new ConfigError('config.json: campaignEventsHttp and campaignEventsRealtime go together: set both AppSync Events names, or neither');
  }
  return out;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Checks a decoded /config.json, with a message that names the bad field. */
export function parseConfig(raw: unknown): AppConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError('config.json must be a JSON object');
  }
  const c = raw as Record<string, unknown>;
  if (typeof c.apiUrl !== 'string') {
    throw new ConfigError('config.json: apiUrl must be a string (the API base URL, e.g. https://…/prod)');
  }
  if (c.mode === 'local') return { mode: 'local', apiUrl: c.apiUrl, ...campaignKeys(c) };
  if (c.mode !== 'cognito') {
    throw new ConfigError(`config.json: mode must be "cognito" or "local" (given ${JSON.stringify(c.mode)})`);
  }
  for (const key of ['region', 'userPoolId', 'userPoolClientId'] as const) {
    if (typeof c[key] !== 'string' || c[key] === '') {
      throw new ConfigError(`config.json: ${key} must be a non-empty string in cognito mode`);
    }
  }
  return {
    mode: 'cognito',
    apiUrl: c.apiUrl,
    region: c.region as string,
    userPoolId: c.userPoolId as string,
    userPoolClientId: c.userPoolClientId as string,
    ...campaignKeys(c),
  };
}

/** Fetches and checks the runtime configuration. */
export async function loadConfig(fetchFn: FetchFn, url: string): Promise<AppConfig> {
  let raw: unknown;
  try {
    raw = await requestJson<unknown>(fetchFn, url, { cache: 'no-store' });
  } catch (err) {
    if (err instanceof ApiError) throw new ConfigError(`${url} could not be loaded (HTTP ${err.status})`);
    throw err;
  }
  return parseConfig(raw);
}
