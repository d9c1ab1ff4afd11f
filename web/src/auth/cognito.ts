import { Amplify } from 'aws-amplify';
import {
  confirmResetPassword,
  confirmSignUp,
  confirmUserAttribute,
  fetchAuthSession,
  fetchUserAttributes,
  getCurrentUser,
  resendSignUpCode,
  resetPassword,
  sendUserAttributeVerificationCode,
  signIn,
  signOut,
  signUp,
} from 'aws-amplify/auth';
import { cognitoUserPoolsTokenProvider } from 'aws-amplify/auth/cognito';
import { sessionStorage as tabStorage } from 'aws-amplify/utils';
import { UserFacingError } from '../http';
import { type Auth, ConfirmSignUpRequired, type Session } from './auth';

export interface CognitoSettings {
  userPoolId: string;
  userPoolClientId: string;
}

// Cognito answers these for things the user can fix; their messages are
// written for people ("Incorrect username or password."), like the API's 4xx.
const USER_ERRORS = new Set([
  'NotAuthorizedException',
  'UserNotFoundException',
  'UsernameExistsException',
  'InvalidPasswordException',
  'InvalidParameterException',
  'UserNotConfirmedException',
  'PasswordResetRequiredException',
  'TooManyRequestsException',
  'TooManyFailedAttemptsException',
  'LimitExceededException',
  'UserLambdaValidationException',
  'EmptySignInUsername',
  'EmptySignInPassword',
  'EmptySignUpUsername',
  'EmptySignUpPassword',
  'CodeMismatchException',
  'ExpiredCodeException',
  'EmptyResetPasswordUsername',
  'EmptyConfirmResetPasswordUsername',
  'EmptyConfirmResetPasswordNewPassword',
  'EmptyConfirmResetPasswordConfirmationCode',
  'EmptyConfirmUserAttributeCode',
]);

/** Maps an Amplify error to one the UI shows: user errors as written, the rest generic. */
export function mapAuthError(err: unknown): Error {
  if (err instanceof Error && USER_ERRORS.has(err.name) && err.message) {
    return new UserFacingError(err.message);
  }
  return err instanceof Error ? err : new Error(String(err));
}

async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapAuthError(err);
  }
}

/**
 * The signed-in user's address and whether it is verified, read from the
 * pool (GetUser), so a verification made since the last token shows. When
 * that fails: the fallback address, verification not known.
 */
async function sessionOf(fallback: string): Promise<Session> {
  try {
    const attrs = await fetchUserAttributes();
    const s: Session = { email: attrs.email ?? fallback };
    if (attrs.email_verified !== undefined) s.emailVerified = attrs.email_verified === 'true';
    return s;
  } catch {
    return { email: fallback };
  }
}

/** The prefix of the keys aws-amplify keeps its Cognito tokens under. */
export const AMPLIFY_TOKEN_PREFIX = 'CognitoIdentityServiceProvider.';

/** The part of Storage that clearing old tokens needs; window.localStorage fits. */
export interface LegacyStore {
  readonly length: number;
  key(index: number): string | null;
  removeItem(key: string): void;
}

/**
 * Keeps the Cognito tokens (ID, access and the 30-day refresh token) in
 * this tab's sessionStorage instead of aws-amplify's default, localStorage
 * ("Tokens and credentials", token storage:
 * https://docs.amplify.aws/react/build-a-backend/auth/concepts/tokens-and-credentials/).
 * They go when the tab closes, and a script injected into the page can
 * only take them while the tab is open. A reload stays signed in; a new
 * tab or a browser restart signs in again (README, Security). Tokens an
 * earlier version left in localStorage are removed.
 */
export function keepTokensInTab(legacy: LegacyStore | undefined) {
  cognitoUserPoolsTokenProvider.setKeyValueStorage(tabStorage);
  if (!legacy) return;
  const stale: string[] = [];
  for (let i = 0; i < legacy.length; i++) {
    const key = legacy.key(i);
    if (key?.startsWith(AMPLIFY_TOKEN_PREFIX)) stale.push(key);
  }
  for (const key of stale) legacy.removeItem(key);
}

/** Sign-in with the Cognito user pool through aws-amplify v6. */
export function createCognitoAuth(settings: CognitoSettings): Auth {
  Amplify.configure({
    Auth: {
      Cognito: {
        userPoolId: settings.userPoolId,
        userPoolClientId: settings.userPoolClientId,
        loginWith: { email: true },
      },
    },
  });
  // After configure, which sets its default storage on every call.
  keepTokensInTab(typeof window === 'undefined' ? undefined : window.localStorage);

  return {
    signUp: (email, password) =>
      guarded(async () => {
        // An open pool's PreSignUp trigger confirms new users at once; a pool
        // that verifies addresses (an allow-list, or campaigns on) leaves the
        // sign-up to be confirmed with the code Cognito emails.
        const out = await signUp({ username: email, password, options: { userAttributes: { email } } });
        return { confirmed: out.nextStep.signUpStep !== 'CONFIRM_SIGN_UP' };
      }),

    confirmSignUp: (email, code) =>
      guarded(async () => {
        await confirmSignUp({ username: email, confirmationCode: code.trim() });
      }),

    resendSignUpCode: (email) =>
      guarded(async () => {
        await resendSignUpCode({ username: email });
      }),

    signIn: (email, password) =>
      guarded(async (): Promise<Session> => {
        const attempt = async () => {
          try {
            return await signIn({ username: email, password });
          } catch (err) {
            if (err instanceof Error && err.name === 'UserNotConfirmedException') throw new ConfirmSignUpRequired();
            throw err;
          }
        };
        let out;
        try {
          out = await attempt();
        } catch (err) {
          if (!(err instanceof Error) || err.name !== 'UserAlreadyAuthenticatedException') throw err;
          await signOut();
          out = await attempt();
        }
        if (!out.isSignedIn && out.nextStep.signInStep === 'CONFIRM_SIGN_UP') throw new ConfirmSignUpRequired();
        if (!out.isSignedIn) {
          await signOut().catch(() => undefined);
          throw new UserFacingError(`Sign-in needs a step this app does not support (${out.nextStep.signInStep}).`);
        }
        return sessionOf(email);
      }),

    signOut: () => guarded(() => signOut()),

    requestPasswordReset: (email) =>
      guarded(async () => {
        await resetPassword({ username: email });
      }),

    confirmPasswordReset: (email, code, newPassword) =>
      guarded(() => confirmResetPassword({ username: email, confirmationCode: code.trim(), newPassword })),

    requestEmailVerification: () =>
      guarded(async () => {
        await sendUserAttributeVerificationCode({ userAttributeKey: 'email' });
      }),

    verifyEmail: (code) =>
      guarded(async () => {
        await confirmUserAttribute({ userAttributeKey: 'email', confirmationCode: code.trim() });
        // The ID token in hand still says email_verified false; a refresh
        // gets one that says true. The address is verified either way, so
        // a failed refresh is left to the next one Amplify makes.
        await fetchAuthSession({ forceRefresh: true }).catch(() => undefined);
      }),

    async currentSession() {
      try {
        const user = await getCurrentUser();
        return await sessionOf(user.signInDetails?.loginId ?? user.username);
      } catch {
        return null;
      }
    },

    getIdToken: () =>
      guarded(async () => {
        const session = await fetchAuthSession();
        const token = session.tokens?.idToken?.toString();
        if (!token) throw new UserFacingError('You are signed out. Please sign in again.');
        return token;
      }),
  };
}
