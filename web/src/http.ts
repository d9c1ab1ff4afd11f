// The one place that turns HTTP responses into values or errors, shared by the
// task API client and the local sign-in endpoints (both answer errors as
// {"error": "<code>", "message": "<human text>"}).

export type FetchFn = (input: string, init?: RequestInit) => Promise<Response>;

export const GENERIC_SERVER_MESSAGE = 'Something went wrong on our side. Please try again.';
export const GENERIC_NETWORK_MESSAGE = 'Could not reach the server. Check your connection and try again.';

/** An error response from the server: status 4xx or 5xx. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** The request never produced a response (offline, DNS, CORS, aborted). */
export class NetworkError extends Error {
  constructor(cause: unknown) {
    super(GENERIC_NETWORK_MESSAGE, { cause });
    this.name = 'NetworkError';
  }
}

/** An error whose message was written for the user and is shown as it is. */
export class UserFacingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserFacingError';
  }
}

/**
 * The text to show a person for any error thrown by this app's clients: a 4xx
 * message as the server wrote it, and a generic message for 5xx, network
 * failures and anything unexpected.
 */
export function userMessage(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status >= 400 && err.status < 500 && err.message.trim() !== '') return err.message;
    return GENERIC_SERVER_MESSAGE;
  }
  if (err instanceof NetworkError) return GENERIC_NETWORK_MESSAGE;
  if (err instanceof UserFacingError) return err.message;
  return GENERIC_SERVER_MESSAGE;
}

/**
 * Sends a request and returns the decoded JSON body, or undefined for 204 and
 * other empty bodies. Throws NetworkError when there is no response, and
 * ApiError for any status outside 2xx.
 */
export async function requestJson<T>(fetchFn: FetchFn, url: string, init: RequestInit = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetchFn(url, init);
  } catch (err) {
    throw new NetworkError(err);
  }
  const text = await readText(res);
  if (!res.ok) throw errorFromBody(res.status, text);
  if (res.status === 204 || text.trim() === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(res.status, 'invalid_response', GENERIC_SERVER_MESSAGE);
  }
}

async function readText(res: Response): Promise<string> {
  try {
    return await res.text();
  } catch (err) {
    if (res.ok) throw new NetworkError(err);
    return '';
  }
}

function errorFromBody(status: number, text: string): ApiError {
  let code = `http_${status}`;
  let message = '';
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object') {
      const b = body as Record<string, unknown>;
      if (typeof b.error === 'string' && b.error !== '') code = b.error;
      // API Gateway's own responses (e.g. from the authorizer) carry only "message".
      if (typeof b.message === 'string') message = b.message;
    }
  } catch {
    // Not JSON: keep the generic message for the status.
  }
  if (message.trim() === '') message = fallbackMessage(status);
  return new ApiError(status, code, message);
}

function fallbackMessage(status: number): string {
  if (status === 401) return 'Your session has ended. Please sign in again.';
  if (status === 403) return 'You are not allowed to do that.';
  if (status === 404) return 'That task no longer exists.';
  if (status === 409) return 'That task can no longer be changed.';
  if (status === 429) return 'Too many requests. Please wait a moment and try again.';
  if (status >= 400 && status < 500) return 'The request was not accepted.';
  return GENERIC_SERVER_MESSAGE;
}

/** Joins a base URL ("https://x/prod", "https://x/prod/", "" or "/api") and a path. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}
