import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import type { Auth } from '../auth';
import { userMessage } from '../http';
import { useMounted } from './hooks';

interface Props {
  auth: Auth;
  /** The signed-in user's address. */
  email: string;
  /** Called once the address is verified. */
  onVerified: () => void;
  announce: (text: string) => void;
  /** Where codes arrive, said to the user. Default: "your inbox". */
  codeWhere?: string;
}

type Step = 'ask' | 'code' | 'verified';

/**
 * "Verify your email address": shown to a signed-in user whose address is
 * not verified (an open pool confirms a sign-up without any code). Cognito
 * sends password reset codes only to a verified address, so without this
 * such a user could never reset their password. Send a code
 * (GetUserAttributeVerificationCode), enter it (VerifyUserAttribute).
 */
export function VerifyEmail({ auth, email, onVerified, announce, codeWhere = 'your inbox' }: Props) {
  const id = useId();
  const mounted = useMounted();
  const codeRef = useRef<HTMLInputElement>(null);
  const [step, setStep] = useState<Step>('ask');
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [info, setInfo] = useState('');

  // The code field takes focus when it appears, so the user types at once.
  useEffect(() => {
    if (step === 'code') codeRef.current?.focus();
  }, [step]);

  async function sendCode() {
    setBusy(true);
    setError('');
    try {
      await auth.requestEmailVerification();
      if (!mounted.current) return;
      setCode('');
      setStep('code');
      setInfo(`We sent a code to ${email}: look in ${codeWhere}.`);
    } catch (err) {
      if (mounted.current) setError(userMessage(err));
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (code.trim() === '') return setError('Enter the code from the email.');
    setBusy(true);
    setError('');
    try {
      await auth.verifyEmail(code);
      if (!mounted.current) return;
      setStep('verified');
      setInfo('');
      announce(`Your email address ${email} is verified.`);
      onVerified();
    } catch (err) {
      if (mounted.current) setError(userMessage(err));
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  if (step === 'verified') {
    return (
      <section className="card verify-email" aria-labelledby={`${id}-h`} data-testid="verify-email" data-status="verified">
        <h2 id={`${id}-h`}>Email address verified</h2>
        <p>{email} is verified: password reset codes can reach it.</p>
      </section>
    );
  }

  return (
    <section className="card verify-email" aria-labelledby={`${id}-h`} data-testid="verify-email" data-status="unverified">
      <h2 id={`${id}-h`}>Verify your email address</h2>
      <p id={`${id}-why`}>
        {email} is not verified yet. Verify it with a code we email to it: until then you cannot reset your password if you forget it.
      </p>
      {step === 'code' ? (
        <form onSubmit={onSubmit} noValidate aria-labelledby={`${id}-h`} data-testid="verify-email-form">
          <div className="field">
            <label htmlFor={`${id}-code`}>Verification code</label>
            <input
              ref={codeRef}
              id={`${id}-code`}
              name="code"
              type="text"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              value={code}
              onChange={(e) => setCode(e.target.value)}
              aria-invalid={error ? true : undefined}
              aria-describedby={[`${id}-info`, error ? `${id}-err` : ''].filter(Boolean).join(' ')}
            />
          </div>
          <div className="actions">
            <button type="submit" className="primary" disabled={busy} aria-busy={busy}>
              {busy ? 'Verifying…' : 'Verify email'}
            </button>
            <button type="button" className="link" onClick={() => void sendCode()} disabled={busy}>
              Send a new code
            </button>
          </div>
        </form>
      ) : (
        <div className="actions">
          <button type="button" onClick={() => void sendCode()} disabled={busy} aria-busy={busy} aria-describedby={`${id}-why`}>
            {busy ? 'Sending…' : 'Send verification code'}
          </button>
        </div>
      )}
      <p id={`${id}-err`} className="error" role="alert" data-testid="verify-email-error">
        {error}
      </p>
      <p id={`${id}-info`} className="info" role="status" data-testid="verify-email-info">
        {info}
      </p>
    </section>
  );
}
