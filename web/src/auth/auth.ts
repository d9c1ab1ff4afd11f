import { UserFacingError } from '../http';

/** Who is signed in. */
export interface Session {
  email: string;
  /**
   * Whether the address is verified (a code sent to it came back). false:
   * it is not, and the UI offers to verify it (Cognito sends password
   * reset codes only to a verified address). Absent: not known.
   */
  emailVerified?: boolean;
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
  /**
   * Emails a code to the signed-in user's address (Cognito
   * GetUserAttributeVerificationCode with the access token; locally: the outbox).
   */
  requestEmailVerification(): Promise<void>;
  /**
   * Verifies the signed-in user's address with that code (Cognito
   * VerifyUserAttribute), and renews the tokens so the ID token says
   * email_verified. It records no proof of the address for campaign
   * senders (custom:email_proof): a password reset does.
   */
  verifyEmail(code: string): Promise<void>;
  /** The session restored from a previous visit, or null. */
  currentSession(): Promise<Session | null>;
  /** The id token to send as the Authorization header; throws when signed out. */
  getIdToken(): Promise<string>;
}
