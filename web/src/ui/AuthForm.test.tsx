// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Auth, ConfirmSignUpRequired, type Session } from '../auth';
import { ApiError } from '../http';
import { AuthForm } from './AuthForm';

afterEach(cleanup);

/**
 * A user pool that verifies addresses by code (an allow-list, or campaigns
 * on): a sign-up is unconfirmed until the emailed code is entered, and an
 * unconfirmed account cannot sign in.
 */
class VerifyingAuth implements Auth {
  users = new Map<string, { password: string; confirmed: boolean }>();
  code = '246810';
  calls: string[] = [];
  async signUp(email: string, password: string) {
    this.calls.push(`signUp ${email}`);
    this.users.set(email, { password, confirmed: false });
    return { confirmed: false };
  }
  async confirmSignUp(email: string, code: string) {
    this.calls.push(`confirm ${email} ${code}`);
    const u = this.users.get(email);
    if (!u || code.trim() !== this.code) throw new ApiError(400, 'CodeMismatchException', 'Invalid verification code provided, please try again.');
    u.confirmed = true;
  }
  async resendSignUpCode(email: string) {
    this.calls.push(`resend ${email}`);
  }
  async signIn(email: string, password: string): Promise<Session> {
    this.calls.push(`signIn ${email}`);
    const u = this.users.get(email);
    if (!u || u.password !== password) throw new ApiError(401, 'not_authorized', 'Incorrect email or password.');
    if (!u.confirmed) throw new ConfirmSignUpRequired();
    return { email };
  }
  async signOut() {}
  async requestPasswordReset() {}
  async confirmPasswordReset() {}
  async requestEmailVerification() {}
  async verifyEmail() {}
  async currentSession() {
    return null;
  }
  async getIdToken() {
    return 'token';
  }
}

const PASSWORD = 'Secret-horse-12';

function fill(label: string, value: string) {
  fireEvent.change(screen.getByLabelText(label), { target: { value } });
}

describe('sign-up confirmed by the emailed code', () => {
  it('asks for the code after sign-up, refuses a wrong one, resends, and signs in once confirmed', async () => {
    const auth = new VerifyingAuth();
    const onSignedIn = vi.fn();
    render(<AuthForm auth={auth} onSignedIn={onSignedIn} />);
    fireEvent.click(screen.getByRole('button', { name: 'Create an account' }));
    fill('Email', 'ada@example.com');
    fill('Password', PASSWORD);
    fireEvent.click(screen.getByRole('button', { name: 'Sign up' }));

    expect(await screen.findByRole('heading', { name: 'Confirm your email' })).toBeTruthy();
    expect(screen.getByTestId('auth-form').getAttribute('data-mode')).toBe('signUpConfirm');
    expect(screen.getByTestId('auth-info').textContent).toBe('We emailed a code to ada@example.com. Enter it to confirm your address.');
    expect(screen.queryByLabelText('Password')).toBeNull();
    expect(screen.getByLabelText('Code from the email').getAttribute('autocomplete')).toBe('one-time-code');
    expect(onSignedIn).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole('button', { name: 'Confirm and sign in' }));
    expect(await screen.findByText('Enter the code from the email.')).toBeTruthy();
    fill('Code from the email', '000000');
    fireEvent.click(screen.getByRole('button', { name: 'Confirm and sign in' }));
    expect(await screen.findByText('Invalid verification code provided, please try again.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Send a new code' }));
    expect(await screen.findByText('A new code is on its way to ada@example.com.')).toBeTruthy();

    fill('Code from the email', ' 246810 ');
    fireEvent.click(screen.getByRole('button', { name: 'Confirm and sign in' }));
    await waitFor(() => expect(onSignedIn).toHaveBeenCalledWith({ email: 'ada@example.com' }));
    expect(auth.calls).toEqual([
      'signUp ada@example.com',
      'confirm ada@example.com 000000',
      'resend ada@example.com',
      'confirm ada@example.com  246810 ',
      'signIn ada@example.com',
    ]);
  });

  it('sends an unconfirmed account that signs in to the code step', async () => {
    const auth = new VerifyingAuth();
    auth.users.set('bo@example.com', { password: PASSWORD, confirmed: false });
    const onSignedIn = vi.fn();
    render(<AuthForm auth={auth} onSignedIn={onSignedIn} />);
    fill('Email', 'bo@example.com');
    fill('Password', PASSWORD);
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByRole('heading', { name: 'Confirm your email' })).toBeTruthy();
    expect(screen.getByTestId('auth-error').textContent).toBe('');
    fill('Code from the email', auth.code);
    fireEvent.click(screen.getByRole('button', { name: 'Confirm and sign in' }));
    await waitFor(() => expect(onSignedIn).toHaveBeenCalledWith({ email: 'bo@example.com' }));
  });

  it('signs in at once where the pool confirms sign-ups itself', async () => {
    const auth = new VerifyingAuth();
    auth.signUp = async (email, password) => {
      auth.users.set(email, { password, confirmed: true });
      return { confirmed: true };
    };
    const onSignedIn = vi.fn();
    render(<AuthForm auth={auth} onSignedIn={onSignedIn} />);
    fireEvent.click(screen.getByRole('button', { name: 'Create an account' }));
    fill('Email', 'cy@example.com');
    fill('Password', PASSWORD);
    fireEvent.click(screen.getByRole('button', { name: 'Sign up' }));
    await waitFor(() => expect(onSignedIn).toHaveBeenCalledWith({ email: 'cy@example.com' }));
    expect(screen.queryByRole('heading', { name: 'Confirm your email' })).toBeNull();
  });
});
