import type { AppConfig } from '../config';
import type { FetchFn } from '../http';
import type { Auth } from './auth';
import { createLocalAuth, type TokenStore } from './local';

export { ConfirmSignUpRequired } from './auth';
export type { Auth, Session, SignUpResult } from './auth';

/** Builds the Auth for the configured mode; aws-amplify is loaded only for Cognito. */
export async function createAuth(config: AppConfig, fetchFn: FetchFn, store: TokenStore): Promise<Auth> {
  if (config.mode === 'local') return createLocalAuth(config.apiUrl, fetchFn, store);
  const { createCognitoAuth } = await import('./cognito');
  return createCognitoAuth(config);
}
