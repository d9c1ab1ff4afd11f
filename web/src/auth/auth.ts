/** Who is signed in. */
export interface Session {
  email: string;
}

/**
 * The one interface the UI uses for sign-in, so Cognito (deployed) and the
 * local sign-in of `make dev` share the same screens. Errors thrown by these
 * methods are shown with userMessage().
 */
export interface Auth {
  signUp(email: string, password: string): Promise<void>;
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
