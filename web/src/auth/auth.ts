import { UserFacingError } from '../http';

/** Who is signed in. */
export interface Session {
  email: string;
}

/** What a sign-up leaves to do: nothing (confirmed), or confirm with the emailed code. */
export interface SignUpResult {
  confirmed: boolean;
}

/**
 * Thrown by signIn when the account exists but its sign-up was never
 * confirmed with the emailed code: the UI then asks for the code.
 */
export class ConfirmSignUpRequired extends UserFacingError {
  constructor() {
    super('Confirm your email address with the code we sent to it.');
    this.name = 'ConfirmSignUpRequired';
  }
}

/**
 * The one interface the UI uses for sign-in, so Cognito (deployed) and the
 * local sign-in of `make dev` share the same screens. Errors thrown by these
 * methods are shown with userMessage().
 */
export interface Auth {
  /**
   * Creates the account. Where the pool verifies addresses by code (an
   * allow-list of domains, or campaigns on) it is not confirmed yet: a code
   * is on its way to the address, for confirmSignUp.
   */
  signUp(email: string, password: string): Promise<SignUpResult>;
  /** Confirms a sign-up with the emailed code, which verifies the address (Cognito ConfirmSignUp). */
  confirmSignUp(email: string, code: string): Promise<void>;
  /** Emails a new sign-up code (Cognito ResendConfirmationCode). */
  resendSignUpCode(email: string): Promise<void>;
  /** Throws ConfirmSignUpRequired for an account whose sign-up is not confirmed. */
  signIn(email: string, password: string): Promise<Session>;
  signOut(): Promise<void>;
  /** Sends a reset code to the address (Cognito ForgotPassword; locally: the outbox). */
  requestPasswordReset(email: string): Promise<void>;
  /** Sets a new password with the code (Cognito ConfirmForgotPassword). */
  confirmPasswordReset(email: string, code: string, newPassword: string): Promise<void>;
  /** The session restored from a previous visit, or null. */
  currentSession(): Promise<Session | null>;
  /** The id token to send as the Authorization header; throws when signed out. */
  getIdToken(): Promise<string>;
}
