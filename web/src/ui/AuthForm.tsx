import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { type Auth, ConfirmSignUpRequired, type Session } from '../auth';
import { userMessage } from '../http';
import { passwordOk, passwordRules } from '../password';
import { useMounted } from './hooks';

interface Props {
  auth: Auth;
  onSignedIn: (s: Session) => void;
  /** A message to show when the form opens, e.g. after a session ended. */
  notice?: string;
  /** Where reset codes arrive, said to the user ("your inbox"). */
  codeWhere?: string;
}

type Mode = 'signIn' | 'signUp' | 'signUpConfirm' | 'resetRequest' | 'resetConfirm';

const HEADINGS: Record<Mode, string> = {
  signIn: 'Sign in',
  signUp: 'Create an account',
  signUpConfirm: 'Confirm your email',
  resetRequest: 'Reset your password',
  resetConfirm: 'Choose a new password',
};

/**
 * Sign in, sign up (signed in right after, or, where the pool verifies
 * addresses, after confirming with the emailed code), and password reset.
 */
export function AuthForm({ auth, onSignedIn, notice, codeWhere = 'your inbox' }: Props) {
  const id = useId();
  const mounted = useMounted();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const [mode, setMode] = useState<Mode>('signIn');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [info, setInfo] = useState(notice ?? '');
  const [tried, setTried] = useState(false);
  const firstRender = useRef(true);

  // A new step moves focus to its heading so screen readers follow.
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    headingRef.current?.focus();
  }, [mode]);

  function go(next: Mode) {
    setMode(next);
    setError('');
    setTried(false);
    if (next !== 'resetConfirm' && next !== 'signUpConfirm') setInfo('');
    // The sign-up's password signs in once the code is confirmed.
    if (next !== 'signIn' && next !== 'signUpConfirm') setPassword('');
    if (next === 'signUpConfirm' || next === 'resetConfirm') setCode('');
  }

  function askForCode(addr: string) {
    setInfo(`We emailed a code to ${addr}. Enter it to confirm your address.`);
    go('signUpConfirm');
  }

  async function resendCode() {
    const addr = email.trim();
    if (busy) return;
    if (addr === '') return setError('Enter your email address.');
    setBusy(true);
    setError('');
    try {
      await auth.resendSignUpCode(addr);
      if (mounted.current) setInfo(`A new code is on its way to ${addr}.`);
    } catch (err) {
      if (mounted.current) setError(userMessage(err));
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  const newPassword = mode === 'signUp' || mode === 'resetConfirm';

  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const addr = email.trim();
    setTried(true);
    if (addr === '') return setError('Enter your email address.');
    if (newPassword && !passwordOk(password)) return setError('The password does not meet every rule below yet.');
    if (mode === 'signIn' && password === '') return setError('Enter your password.');
    if ((mode === 'resetConfirm' || mode === 'signUpConfirm') && code.trim() === '') return setError('Enter the code from the email.');
    setBusy(true);
    setError('');
    try {
      if (mode === 'resetRequest') {
        await auth.requestPasswordReset(addr);
        if (!mounted.current) return;
        setInfo(`If ${addr} has an account, a code is on its way to ${codeWhere}.`);
        go('resetConfirm');
        return;
      }
      if (mode === 'signUp') {
        const { confirmed } = await auth.signUp(addr, password);
        if (!confirmed) {
          if (mounted.current) askForCode(addr);
          return;
        }
      }
      if (mode === 'signUpConfirm') {
        await auth.confirmSignUp(addr, code);
        if (password === '') {
          if (!mounted.current) return;
          go('signIn');
          setInfo('Your email address is confirmed. Sign in.');
          return;
        }
      }
      if (mode === 'resetConfirm') await auth.confirmPasswordReset(addr, code, password);
      const session = await auth.signIn(addr, password);
      if (mounted.current) onSignedIn(session);
    } catch (err) {
      if (!mounted.current) return;
      if (err instanceof ConfirmSignUpRequired) askForCode(addr);
      else setError(userMessage(err));
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  const rules = passwordRules(password);
  const submit = { signIn: ['Sign in', 'Signing in…'], signUp: ['Sign up', 'Signing up…'], signUpConfirm: ['Confirm and sign in', 'Confirming…'], resetRequest: ['Send code', 'Sending…'], resetConfirm: ['Set password and sign in', 'Saving…'] }[mode];

  return (
    <section className="card auth" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`} ref={headingRef} tabIndex={-1}>
        {HEADINGS[mode]}
      </h2>
      <form onSubmit={onSubmit} noValidate aria-labelledby={`${id}-h`} data-testid="auth-form" data-mode={mode}>
        <div className="field">
          <label htmlFor={`${id}-email`}>Email</label>
          <input
            id={`${id}-email`}
            name="email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            aria-invalid={(tried && email.trim() === '') || undefined}
            aria-describedby={error ? `${id}-err` : undefined}
          />
        </div>
        {mode === 'resetConfirm' || mode === 'signUpConfirm' ? (
          <div className="field">
            <label htmlFor={`${id}-code`}>Code from the email</label>
            <input
              id={`${id}-code`}
              name="code"
              type="text"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          </div>
        ) : null}
        {mode !== 'resetRequest' && mode !== 'signUpConfirm' ? (
          <div className="field">
            <label htmlFor={`${id}-password`}>{mode === 'resetConfirm' ? 'New password' : 'Password'}</label>
            <input
              id={`${id}-password`}
              name="password"
              type="password"
              autoComplete={newPassword ? 'new-password' : 'current-password'}
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-invalid={(tried && newPassword && !passwordOk(password)) || undefined}
              aria-describedby={[newPassword ? `${id}-rules` : '', error ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined}
            />
            {newPassword ? (
              <ul id={`${id}-rules`} className="rules" aria-label="Password rules" data-testid="password-rules">
                {rules.map((r) => (
                  <li key={r.id} className={r.met ? 'rule-met' : 'rule-unmet'} data-rule={r.id} data-met={r.met}>
                    <span aria-hidden="true">{r.met ? '✓' : '○'}</span> {r.label}
                    <span className="visually-hidden">{r.met ? ': done' : ': not yet'}</span>
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
        <p id={`${id}-err`} className="error" role="alert" data-testid="auth-error">
          {error}
        </p>
        <p className="info" role="status" data-testid="auth-info">
          {info}
        </p>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy} aria-busy={busy}>
            {busy ? submit[1] : submit[0]}
          </button>
        </div>
        <div className="auth-switch">
          {mode === 'signIn' ? (
            <>
              <button type="button" className="link" onClick={() => go('signUp')}>
                Create an account
              </button>
              <button type="button" className="link" onClick={() => go('resetRequest')}>
                Forgot your password?
              </button>
            </>
          ) : (
            <button type="button" className="link" onClick={() => go('signIn')}>
              Back to sign in
            </button>
          )}
          {mode === 'resetConfirm' ? (
            <button type="button" className="link" onClick={() => go('resetRequest')}>
              Send a new code
            </button>
          ) : null}
          {mode === 'signUpConfirm' ? (
            <button type="button" className="link" onClick={() => void resendCode()} disabled={busy}>
              Send a new code
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
