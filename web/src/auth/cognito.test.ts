import { beforeEach, describe, expect, it, vi } from 'vitest';
import { GENERIC_SERVER_MESSAGE, userMessage } from '../http';

const amplify = vi.hoisted(() => ({
  configure: vi.fn(),
  signUp: vi.fn(),
  signIn: vi.fn(),
  signOut: vi.fn(),
  fetchAuthSession: vi.fn(),
  fetchUserAttributes: vi.fn(),
  getCurrentUser: vi.fn(),
  resetPassword: vi.fn(),
  confirmResetPassword: vi.fn(),
  confirmSignUp: vi.fn(),
  resendSignUpCode: vi.fn(),
  sendUserAttributeVerificationCode: vi.fn(),
  confirmUserAttribute: vi.fn(),
  setKeyValueStorage: vi.fn(),
}));
const tabStorage = vi.hoisted(() => ({ name: 'amplify sessionStorage' }));

vi.mock('aws-amplify', () => ({ Amplify: { configure: amplify.configure } }));
vi.mock('aws-amplify/auth', () => ({
  signUp: amplify.signUp,
  signIn: amplify.signIn,
  signOut: amplify.signOut,
  fetchAuthSession: amplify.fetchAuthSession,
  fetchUserAttributes: amplify.fetchUserAttributes,
  getCurrentUser: amplify.getCurrentUser,
  resetPassword: amplify.resetPassword,
  confirmResetPassword: amplify.confirmResetPassword,
  confirmSignUp: amplify.confirmSignUp,
  resendSignUpCode: amplify.resendSignUpCode,
  sendUserAttributeVerificationCode: amplify.sendUserAttributeVerificationCode,
  confirmUserAttribute: amplify.confirmUserAttribute,
}));

vi.mock('aws-amplify/auth/cognito', () => ({ cognitoUserPoolsTokenProvider: { setKeyValueStorage: amplify.setKeyValueStorage } }));
vi.mock('aws-amplify/utils', () => ({ sessionStorage: tabStorage }));

const { createCognitoAuth, keepTokensInTab, mapAuthError } = await import('./cognito');
const { ConfirmSignUpRequired } = await import('./auth');

function named(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}

const settings = { userPoolId: 'eu-west-1_pool', userPoolClientId: 'client-1' };

beforeEach(() => {
  for (const f of Object.values(amplify)) f.mockReset();
  amplify.signOut.mockResolvedValue(undefined);
  amplify.fetchUserAttributes.mockResolvedValue({ email: 'a@example.test' });
});

describe('cognito auth', () => {
  it('configures Amplify with the pool from config.json', () => {
    createCognitoAuth(settings);
    expect(amplify.configure).toHaveBeenCalledWith({
      Auth: { Cognito: { userPoolId: 'eu-west-1_pool', userPoolClientId: 'client-1', loginWith: { email: true } } },
    });
  });

  it('reports whether a sign-up still needs the emailed code, and confirms with it', async () => {
    const auth = createCognitoAuth(settings);
    amplify.signUp.mockResolvedValueOnce({ isSignUpComplete: true, nextStep: { signUpStep: 'DONE' } });
    expect(await auth.signUp('a@example.test', 'Secret-123')).toEqual({ confirmed: true });
    amplify.signUp.mockResolvedValueOnce({ isSignUpComplete: false, nextStep: { signUpStep: 'CONFIRM_SIGN_UP' } });
    expect(await auth.signUp('a@example.test', 'Secret-123')).toEqual({ confirmed: false });
    amplify.confirmSignUp.mockResolvedValue({ isSignUpComplete: true, nextStep: { signUpStep: 'DONE' } });
    await auth.confirmSignUp('a@example.test', ' 123456 ');
    expect(amplify.confirmSignUp).toHaveBeenCalledWith({ username: 'a@example.test', confirmationCode: '123456' });
    amplify.resendSignUpCode.mockResolvedValue({});
    await auth.resendSignUpCode('a@example.test');
    expect(amplify.resendSignUpCode).toHaveBeenCalledWith({ username: 'a@example.test' });
    amplify.confirmSignUp.mockRejectedValue(named('CodeMismatchException', 'Invalid verification code provided, please try again.'));
    await expect(auth.confirmSignUp('a@example.test', '1')).rejects.toThrow('Invalid verification code provided');
  });

  it('turns an unconfirmed sign-in into the code step', async () => {
    const auth = createCognitoAuth(settings);
    amplify.signIn.mockResolvedValueOnce({ isSignedIn: false, nextStep: { signInStep: 'CONFIRM_SIGN_UP' } });
    await expect(auth.signIn('a@example.test', 'Secret-123')).rejects.toBeInstanceOf(ConfirmSignUpRequired);
    amplify.signIn.mockRejectedValueOnce(named('UserNotConfirmedException', 'User is not confirmed.'));
    await expect(auth.signIn('a@example.test', 'Secret-123')).rejects.toBeInstanceOf(ConfirmSignUpRequired);
  });

  it('signs up with the email as username and attribute', async () => {
    amplify.signUp.mockResolvedValue({ isSignUpComplete: true, nextStep: { signUpStep: 'DONE' } });
    await createCognitoAuth(settings).signUp('a@example.test', 'Secret-123');
    expect(amplify.signUp).toHaveBeenCalledWith({
      username: 'a@example.test',
      password: 'Secret-123',
      options: { userAttributes: { email: 'a@example.test' } },
    });
  });

  it('signs in and reports the email', async () => {
    amplify.signIn.mockResolvedValue({ isSignedIn: true, nextStep: { signInStep: 'DONE' } });
    expect(await createCognitoAuth(settings).signIn('a@example.test', 'pw')).toEqual({ email: 'a@example.test' });
  });

  it('signs the previous user out when someone is already signed in', async () => {
    amplify.signIn
      .mockRejectedValueOnce(named('UserAlreadyAuthenticatedException', 'There is already a signed in user.'))
      .mockResolvedValueOnce({ isSignedIn: true, nextStep: { signInStep: 'DONE' } });
    await createCognitoAuth(settings).signIn('a@example.test', 'pw');
    expect(amplify.signOut).toHaveBeenCalledTimes(1);
    expect(amplify.signIn).toHaveBeenCalledTimes(2);
  });

  it('refuses a sign-in that needs another step', async () => {
    amplify.signIn.mockResolvedValue({ isSignedIn: false, nextStep: { signInStep: 'CONTINUE_SIGN_IN_WITH_TOTP_SETUP' } });
    const err = await createCognitoAuth(settings).signIn('a@example.test', 'pw').catch((e: unknown) => e);
    expect(userMessage(err)).toBe('Sign-in needs a step this app does not support (CONTINUE_SIGN_IN_WITH_TOTP_SETUP).');
  });

  it('resets a password through ForgotPassword and ConfirmForgotPassword', async () => {
    amplify.resetPassword.mockResolvedValue({ isPasswordReset: false });
    amplify.confirmResetPassword.mockResolvedValue(undefined);
    const auth = createCognitoAuth(settings);
    await auth.requestPasswordReset('a@example.test');
    await auth.confirmPasswordReset('a@example.test', ' 123456 ', 'New-password-2');
    expect(amplify.resetPassword).toHaveBeenCalledWith({ username: 'a@example.test' });
    expect(amplify.confirmResetPassword).toHaveBeenCalledWith({ username: 'a@example.test', confirmationCode: '123456', newPassword: 'New-password-2' });
    amplify.confirmResetPassword.mockRejectedValue(named('CodeMismatchException', 'Invalid verification code provided, please try again.'));
    await expect(auth.confirmPasswordReset('a@example.test', '1', 'New-password-2')).rejects.toThrow('Invalid verification code provided, please try again.');
  });

  it('hands out the id token as a string', async () => {
    amplify.fetchAuthSession.mockResolvedValue({ tokens: { idToken: { toString: () => 'eyJ.id.token' } } });
    expect(await createCognitoAuth(settings).getIdToken()).toBe('eyJ.id.token');
  });

  it('fails to hand out a token when signed out', async () => {
    amplify.fetchAuthSession.mockResolvedValue({ tokens: undefined });
    const err = await createCognitoAuth(settings).getIdToken().catch((e: unknown) => e);
    expect(userMessage(err)).toBe('You are signed out. Please sign in again.');
  });

  it('reports whether the address is verified, as the pool says (GetUser)', async () => {
    amplify.signIn.mockResolvedValue({ isSignedIn: true, nextStep: { signInStep: 'DONE' } });
    const auth = createCognitoAuth(settings);
    for (const [attrs, want] of [
      [{ email: 'a@example.test', email_verified: 'false' }, { email: 'a@example.test', emailVerified: false }],
      [{ email: 'a@example.test', email_verified: 'true' }, { email: 'a@example.test', emailVerified: true }],
      [{ email: 'a@example.test' }, { email: 'a@example.test' }],
    ] as const) {
      amplify.fetchUserAttributes.mockResolvedValueOnce(attrs);
      expect(await auth.signIn('a@example.test', 'pw')).toEqual(want);
    }
    amplify.fetchUserAttributes.mockRejectedValueOnce(named('NetworkError', 'offline'));
    expect(await auth.signIn('a@example.test', 'pw')).toEqual({ email: 'a@example.test' });
  });

  it('verifies the address through GetUserAttributeVerificationCode and VerifyUserAttribute, then renews the tokens', async () => {
    const auth = createCognitoAuth(settings);
    amplify.sendUserAttributeVerificationCode.mockResolvedValue({ destination: 'a***@e***', deliveryMedium: 'EMAIL', attributeName: 'email' });
    amplify.confirmUserAttribute.mockResolvedValue(undefined);
    amplify.fetchAuthSession.mockResolvedValue({ tokens: {} });
    await auth.requestEmailVerification();
    expect(amplify.sendUserAttributeVerificationCode).toHaveBeenCalledWith({ userAttributeKey: 'email' });
    await auth.verifyEmail(' 123456 ');
    expect(amplify.confirmUserAttribute).toHaveBeenCalledWith({ userAttributeKey: 'email', confirmationCode: '123456' });
    expect(amplify.fetchAuthSession).toHaveBeenCalledWith({ forceRefresh: true });
    // A failed renewal does not undo the verification.
    amplify.fetchAuthSession.mockRejectedValueOnce(named('NetworkError', 'offline'));
    await expect(auth.verifyEmail('123456')).resolves.toBeUndefined();
    amplify.confirmUserAttribute.mockRejectedValue(named('CodeMismatchException', 'Invalid verification code provided, please try again.'));
    const err = await auth.verifyEmail('1').catch((e: unknown) => e);
    expect(userMessage(err)).toBe('Invalid verification code provided, please try again.');
    amplify.sendUserAttributeVerificationCode.mockRejectedValue(named('LimitExceededException', 'Attempt limit exceeded, please try after some time.'));
    expect(userMessage(await auth.requestEmailVerification().catch((e: unknown) => e))).toBe('Attempt limit exceeded, please try after some time.');
  });

  it('restores the current session, or null when there is none', async () => {
    const auth = createCognitoAuth(settings);
    amplify.getCurrentUser.mockResolvedValueOnce({ username: 'uuid-1', signInDetails: { loginId: 'a@example.test' } });
    expect(await auth.currentSession()).toEqual({ email: 'a@example.test' });
    amplify.getCurrentUser.mockRejectedValueOnce(named('UserUnAuthenticatedException', 'not signed in'));
    expect(await auth.currentSession()).toBeNull();
  });
});

/** A localStorage stand-in over a Map. */
function memoryStore(entries: Record<string, string>) {
  const m = new Map(Object.entries(entries));
  return {
    get length() {
      return m.size;
    },
    key: (i: number) => [...m.keys()][i] ?? null,
    removeItem: (k: string) => void m.delete(k),
    keys: () => [...m.keys()],
  };
}

describe('token storage', () => {
  it('keeps the tokens in the tab (sessionStorage), not in localStorage', () => {
    createCognitoAuth(settings);
    expect(amplify.setKeyValueStorage).toHaveBeenCalledWith(tabStorage);
    // After configure: Amplify.configure sets its default storage (localStorage) on every call.
    const [configured] = amplify.configure.mock.invocationCallOrder;
    const [stored] = amplify.setKeyValueStorage.mock.invocationCallOrder;
    expect(stored).toBeGreaterThan(configured ?? Infinity);
  });

  it('removes the tokens an earlier version left in localStorage, and nothing else', () => {
    const legacy = memoryStore({
      'CognitoIdentityServiceProvider.client-1.LastAuthUser': 'uuid-1',
      'CognitoIdentityServiceProvider.client-1.uuid-1.refreshToken': 'eyJ.refresh',
      'CognitoIdentityServiceProvider.client-1.uuid-1.idToken': 'eyJ.id',
      'unschedule.theme': 'dark',
    });
    keepTokensInTab(legacy);
    expect(legacy.keys()).toEqual(['unschedule.theme']);
    expect(amplify.setKeyValueStorage).toHaveBeenCalledWith(tabStorage);
  });
});

describe('mapAuthError', () => {
  const cases: { name: string; err: unknown; shown: string }[] = [
    { name: 'wrong password', err: named('NotAuthorizedException', 'Incorrect username or password.'), shown: 'Incorrect username or password.' },
    { name: 'existing user', err: named('UsernameExistsException', 'User already exists'), shown: 'User already exists' },
    {
      name: 'weak password',
      err: named('InvalidPasswordException', 'Password did not conform with policy: Password not long enough'),
      shown: 'Password did not conform with policy: Password not long enough',
    },
    { name: 'network', err: named('NetworkError', 'A network error has occurred.'), shown: GENERIC_SERVER_MESSAGE },
    { name: 'service failure', err: named('InternalErrorException', 'stack trace here'), shown: GENERIC_SERVER_MESSAGE },
    { name: 'not an Error', err: 'weird', shown: GENERIC_SERVER_MESSAGE },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(userMessage(mapAuthError(c.err))).toBe(c.shown);
    });
  }
});
