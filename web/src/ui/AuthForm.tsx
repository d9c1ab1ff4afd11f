import { type FormEvent, useId, useRef, useState } from 'react';
import type { Auth, Session } from '../auth';
import { userMessage } from '../http';
import { useMounted } from './hooks';

interface Props {
  auth: Auth;
  onSignedIn: (s: Session) => void;
  /** A message to show when the form opens, e.g. after a session ended. */
  notice?: string;
}

/** One form for both signing up and signing in: Enter signs in. */
export function AuthForm({ auth, onSignedIn, notice }: Props) {
  const id = useId();
  const formRef = useRef<HTMLFormElement>(null);
  const mounted = useMounted();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [info, setInfo] = useState(notice ?? '');

  async function run(action: 'signIn' | 'signUp') {
    if (busy) return;
    setBusy(true);
    setError('');
    setInfo('');
    try {
      if (action === 'signUp') {
        await auth.signUp(email.trim(), password);
        if (mounted.current) setInfo(`Account created for ${email.trim()}. You can sign in now.`);
      } else {
        const session = await auth.signIn(email.trim(), password);
        if (mounted.current) onSignedIn(session);
      }
    } catch (err) {
      if (mounted.current) setError(userMessage(err));
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    void run('signIn');
  }

  function onSignUp() {
    if (formRef.current && !formRef.current.reportValidity()) return;
    void run('signUp');
  }

  return (
    <section className="card auth" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Sign in or sign up</h2>
      <form ref={formRef} onSubmit={onSubmit} aria-labelledby={`${id}-h`} data-testid="auth-form">
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
            aria-describedby={error ? `${id}-err` : undefined}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-password`}>Password</label>
          <input
            id={`${id}-password`}
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            aria-describedby={error ? `${id}-err` : undefined}
          />
        </div>
        <p id={`${id}-err`} className="error" role="alert" data-testid="auth-error">
          {error}
        </p>
        <p className="info" role="status" data-testid="auth-info">
          {info}
        </p>
        <div className="actions">
          <button type="submit" className="primary" aria-busy={busy}>
            Sign in
          </button>
          <button type="button" onClick={onSignUp} aria-busy={busy}>
            Sign up
          </button>
        </div>
      </form>
    </section>
  );
}
