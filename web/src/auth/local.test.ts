import { describe, expect, it } from 'vitest';
import { ApiError, type FetchFn, userMessage } from '../http';
import { createLocalAuth, type TokenStore, tokenEmailVerified } from './local';

function memoryStore(): TokenStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    getItem: (k) => data.get(k) ?? null,
    setItem: (k, v) => void data.set(k, v),
    removeItem: (k) => void data.delete(k),
  };
}

function fakeServer(routes: Record<string, (body: { email: string; password: string }, authorization?: string) => Response>) {
  const calls: { url: string; method?: string; body: unknown; authorization?: string }[] = [];
  const fn: FetchFn = async (url, init) => {
    const body = JSON.parse(String(init?.body)) as { email: string; password: string };
    const authorization = (init?.headers as Record<string, string> | undefined)?.Authorization;
    calls.push({ url, ...(init?.method ? { method: init.method } : {}), body, ...(authorization ? { authorization } : {}) });
    const path = new URL(url).pathname;
    const route = routes[path];
    return route ? route(body, authorization) : new Response('{"error":"not_found","message":"no route"}', { status: 404 });
  };
  return { fn, calls };
}

const ok = (body: unknown) => new Response(JSON.stringify(body), { status: 200 });

/** A token of the dev server's shape (only its payload is read here). */
const token = (claims: Record<string, unknown>) =>
  `eyJhbGciOiJIUzI1NiJ9.${btoa(JSON.stringify(claims)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}.sig`;

describe('local auth', () => {
  it('signs up, signs in, hands out the token, and signs out', async () => {
    const { fn, calls } = fakeServer({
      '/api/local-auth/signup': () => ok({}),
      '/api/local-auth/signin': (b) => ok({ idToken: `token-for-${b.email}` }),
    });
    const store = memoryStore();
    const auth = createLocalAuth('http://localhost:8080/api/', fn, store);

    await auth.signUp('a@example.test', 'pw-123456');
    expect(await auth.currentSession()).toBeNull();
    expect(await auth.signIn('a@example.test', 'pw-123456')).toEqual({ email: 'a@example.test', emailVerified: false });
    expect(await auth.getIdToken()).toBe('token-for-a@example.test');
    expect(calls).toEqual([
      { url: 'http://localhost:8080/api/local-auth/signup', method: 'POST', body: { email: 'a@example.test', password: 'pw-123456' } },
      { url: 'http://localhost:8080/api/local-auth/signin', method: 'POST', body: { email: 'a@example.test', password: 'pw-123456' } },
    ]);

    // A reload builds a new Auth over the same storage and is still signed in.
    const again = createLocalAuth('http://localhost:8080/api', fn, store);
    expect(await again.currentSession()).toEqual({ email: 'a@example.test', emailVerified: false });

    await again.signOut();
    expect(await auth.currentSession()).toBeNull();
    await expect(auth.getIdToken()).rejects.toThrow(/signed out/);
  });

  it('shows the server 4xx message as written', async () => {
    const { fn } = fakeServer({
      '/local-auth/signin': () =>
        new Response('{"error":"not_authorized","message":"Incorrect email or password."}', { status: 401 }),
    });
    const store = memoryStore();
    const err = await createLocalAuth('http://h', fn, store).signIn('a@example.test', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(userMessage(err)).toBe('Incorrect email or password.');
    expect(store.data.size).toBe(0);
  });

  it('refuses a sign-in answer without a token', async () => {
    const { fn } = fakeServer({ '/local-auth/signin': () => ok({}) });
    const store = memoryStore();
    const err = await createLocalAuth('http://h', fn, store).signIn('a@example.test', 'x').catch((e: unknown) => e);
    expect(userMessage(err)).toBe('Sign-in failed: the server sent no token.');
    expect(store.data.size).toBe(0);
  });

  it('treats a corrupt stored session as signed out and clears it', async () => {
    const store = memoryStore();
    store.setItem('unschedule.localSession', '{not json');
    const auth = createLocalAuth('http://h', fakeServer({}).fn, store);
    expect(await auth.currentSession()).toBeNull();
    expect(store.data.size).toBe(0);
  });

  it('asks for a reset code and sets the new password with it', async () => {
    const { fn, calls } = fakeServer({
      '/local-auth/forgot-password': () => ok({ delivery: 'email' }),
      '/local-auth/reset-password': () => ok({ reset: true }),
    });
    const auth = createLocalAuth('http://localhost:8080', fn, memoryStore());
    await auth.requestPasswordReset('a@example.test');
    await auth.confirmPasswordReset('a@example.test', ' 123456 ', 'New-password-2');
    expect(calls.map((c) => [new URL(c.url).pathname, c.body])).toEqual([
      ['/local-auth/forgot-password', { email: 'a@example.test' }],
      ['/local-auth/reset-password', { email: 'a@example.test', code: '123456', password: 'New-password-2' }],
    ]);
  });

  it('reads email_verified from the token', () => {
    for (const [tok, want] of [
      [token({ sub: 's', email_verified: true }), true],
      [token({ sub: 's', email_verified: false }), false],
      [token({ sub: 's', email_verified: 'true' }), false],
      ['not-a-token', false],
      ['a.%%%.c', false],
    ] as const) {
      expect(tokenEmailVerified(tok), tok).toBe(want);
    }
  });

  it('verifies the address with the code from the outbox and keeps the new token', async () => {
    const before = token({ sub: 's', email: 'a@example.test', email_verified: false });
    const after = token({ sub: 's', email: 'a@example.test', email_verified: true });
    const { fn, calls } = fakeServer({
      '/local-auth/signin': () => ok({ idToken: before }),
      '/local-auth/verify-email/code': () => ok({ delivery: 'email' }),
      '/local-auth/verify-email': (b) =>
        (b as unknown as { code: string }).code === '123456'
          ? ok({ emailVerified: true, idToken: after })
          : new Response('{"error":"code_mismatch","message":"That code is wrong or has expired. Ask for a new one."}', { status: 400 }),
    });
    const store = memoryStore();
    const auth = createLocalAuth('http://localhost:8080', fn, store);
    await expect(auth.requestEmailVerification()).rejects.toThrow(/signed out/);
    expect(await auth.signIn('a@example.test', 'pw')).toEqual({ email: 'a@example.test', emailVerified: false });
    await auth.requestEmailVerification();
    expect(userMessage(await auth.verifyEmail('000000').catch((e: unknown) => e))).toBe('That code is wrong or has expired. Ask for a new one.');
    expect(await auth.getIdToken()).toBe(before);
    await auth.verifyEmail(' 123456 ');
    expect(await auth.getIdToken()).toBe(after);
    expect(await auth.currentSession()).toEqual({ email: 'a@example.test', emailVerified: true });
    expect(calls.slice(1).map((c) => [new URL(c.url).pathname, c.body, c.authorization])).toEqual([
      ['/local-auth/verify-email/code', {}, before],
      ['/local-auth/verify-email', { code: '000000' }, before],
      ['/local-auth/verify-email', { code: '123456' }, before],
    ]);
  });
});
