import { ApiError, type FetchFn, requestJson } from './http';

/** The runtime configuration served next to the app as /config.json. */
export type AppConfig =
  | { mode: 'local'; apiUrl: string }
  | { mode: 'cognito'; apiUrl: string; region: string; userPoolId: string; userPoolClientId: string };

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
  if (c.mode === 'local') return { mode: 'local', apiUrl: c.apiUrl };
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
