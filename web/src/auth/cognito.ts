import { Amplify } from 'aws-amplify';
import {
  confirmResetPassword,
  confirmSignUp,
  fetchAuthSession,
  fetchUserAttributes,
  getCurrentUser,
  resendSignUpCode,
  resetPassword,
  signIn,
  signOut,
  signUp,
} from 'aws-amplify/auth';
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

async function sessionEmail(fallback: string): Promise<string> {
  try {
    const attrs = await fetchUserAttributes();
    return attrs.email ?? fallback;
  } catch {
    return fallback;
  }
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
        return { email: await sessionEmail(email) };
      }),

    signOut: () => guarded(() => signOut()),

    requestPasswordReset: (email) =>
      guarded(async () => {
        await resetPassword({ username: email });
      }),

    confirmPasswordReset: (email, code, newPassword) =>
      guarded(() => confirmResetPassword({ username: email, confirmationCode: code.trim(), newPassword })),

    async currentSession() {
      try {
        const user = await getCurrentUser();
        return { email: await sessionEmail(user.signInDetails?.loginId ?? user.username) };
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
