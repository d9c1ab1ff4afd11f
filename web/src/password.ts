// The user pool's password policy (constructs/userauth: 12+ characters,
// upper, lower, digit, symbol), shown as a live checklist on sign-up and
// enforced the same way by the dev server (internal/tooling/devserver/password.go).
// Cognito's symbols are the set below; a space counts when it is neither
// first nor last, and a password may not start or end with one.

const SYMBOLS = '^$*.[]{}()?"!@#%&/\\,><\':;|_~`=+-';
export const MIN_PASSWORD_LENGTH = 12;

export interface PasswordRule {
  id: 'length' | 'upper' | 'lower' | 'digit' | 'symbol' | 'edges';
  label: string;
  met: boolean;
}

/** Each rule of the policy and whether pw meets it, in the order shown. */
export function passwordRules(pw: string): PasswordRule[] {
  const chars = [...pw];
  const inner = (i: number) => i > 0 && i < chars.length - 1;
  return [
    { id: 'length', label: `At least ${MIN_PASSWORD_LENGTH} characters`, met: chars.length >= MIN_PASSWORD_LENGTH && chars.length <= 256 },
    { id: 'upper', label: 'An uppercase letter (A–Z)', met: /[A-Z]/.test(pw) },
    { id: 'lower', label: 'A lowercase letter (a–z)', met: /[a-z]/.test(pw) },
    { id: 'digit', label: 'A digit (0–9)', met: /[0-9]/.test(pw) },
    { id: 'symbol', label: 'A symbol such as ! ? # or a space', met: chars.some((c, i) => SYMBOLS.includes(c) || (c === ' ' && inner(i))) },
    { id: 'edges', label: 'No space at the start or end', met: pw === '' || (!pw.startsWith(' ') && !pw.endsWith(' ')) },
  ];
}

/** True when pw meets every rule. */
export function passwordOk(pw: string): boolean {
  return passwordRules(pw).every((r) => r.met);
}
