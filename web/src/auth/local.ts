import { type FetchFn, joinUrl, requestJson, UserFacingError } from '../http';
import type { Auth, Session } from './auth';

/** The minimal Storage this needs; window.sessionStorage fits. */
export interface TokenStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

const KEY = 'unschedule.localSession';

/**
 * The email_verified claim of a local ID token (its payload, base64url
 * JSON); false when the token cannot be read. The server checks the
 * token; this only decides what the page shows.
 */
export function tokenEmailVerified(idToken: string): boolean {
  const payload = idToken.split('.')[1];
  if (!payload) return false;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    return (JSON.parse(json) as { email_verified?: unknown }).email_verified === true;
  } catch {
    return false;
  }
}

const sessionOf = (s: Stored): Session => ({ email: s.email, emailVerified: tokenEmailVerified(s.idToken) });

interface Stored {
  email: string;
  idToken: string;
}

/**
 * Sign-in against the local server of `make dev`: POST {apiUrl}/local-auth/signup
 * and /signin with {"email","password"}; signin answers {"idToken"}. Password
 * reset: /forgot-password {"email"} puts a code in the outbox, and
 * /reset-password {"email","code","password"} sets the new password. Email
 * verification (with the token): /verify-email/code puts a code in the
 * outbox, and /verify-email {"code"} verifies the address and answers a new
 * {"idToken"}. The token is kept in the given store so a reload stays
 * signed in.
 */
export function createLocalAuth(apiUrl: string, fetchFn: FetchFn, store: TokenStore): Auth {
  function postJson<T>(path: string, body: unknown): Promise<T> {
    return requestJson<T>(fetchFn, joinUrl(apiUrl, path), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
    });
  }
  const post = <T>(path: string, email: string, password: string) => postJson<T>(path, { email, password });

  function postSignedIn<T>(path: string, body: unknown): Promise<T> {
    const s = read();
    if (!s) return Promise.reject(new UserFacingError('You are signed out. Please sign in again.'));
    return requestJson<T>(fetchFn, joinUrl(apiUrl, path), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: s.idToken },
      body: JSON.stringify(body),
    });
  }

  function read(): Stored | null {
    const raw = store.getItem(KEY);
    if (!raw) return null;
    try {
      const s = JSON.parse(raw) as Partial<Stored>;
      if (typeof s.email === 'string' && typeof s.idToken === 'string' && s.idToken !== '') {
        return { email: s.email, idToken: s.idToken };
      }
    } catch {
      // fall through: a broken entry counts as signed out
    }
    store.removeItem(KEY);
    return null;
  }

  return {
    async signUp(email, password) {
      // The local sign-in confirms every account at once (it sends no code).
      const res = await post<{ confirmed?: unknown } | undefined>('/local-auth/signup', email, password);
      return { confirmed: res?.confirmed !== false };
    },
    async confirmSignUp() {
      throw new UserFacingError('The local sign-in confirms every account at once: sign in.');
    },
    async resendSignUpCode() {
      throw new UserFacingError('The local sign-in confirms every account at once: sign in.');
    },
    async signIn(email, password): Promise<Session> {
      const res = await post<{ idToken?: unknown } | undefined>('/local-auth/signin', email, password);
      if (!res || typeof res.idToken !== 'string' || res.idToken === '') {
        throw new UserFacingError('Sign-in failed: the server sent no token.');
      }
      const stored: Stored = { email, idToken: res.idToken };
      store.setItem(KEY, JSON.stringify(stored));
      return sessionOf(stored);
    },
    async signOut() {
      store.removeItem(KEY);
    },
    async requestPasswordReset(email) {
      await postJson<unknown>('/local-auth/forgot-password', { email });
    },
    async confirmPasswordReset(email, code, password) {
      await postJson<unknown>('/local-auth/reset-password', { email, code: code.trim(), password });
    },
    async requestEmailVerification() {
      await postSignedIn<unknown>('/local-auth/verify-email/code', {});
    },
    async verifyEmail(code) {
      const res = await postSignedIn<{ idToken?: unknown } | undefined>('/local-auth/verify-email', { code: code.trim() });
      const s = read();
      if (s && res && typeof res.idToken === 'string' && res.idToken !== '') {
        store.setItem(KEY, JSON.stringify({ email: s.email, idToken: res.idToken } satisfies Stored));
      }
    },
    async currentSession() {
      const s = read();
      return s ? sessionOf(s) : null;
    },
    async getIdToken() {
      const s = read();
      if (!s) throw new UserFacingError('You are signed out. Please sign in again.');
      return s.idToken;
    },
  };
}
