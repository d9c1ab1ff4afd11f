// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NotificationsApi } from '../api';
import { ApiError } from '../http';
import type { NotificationSettings } from '../types';
import { NotificationSetting, notificationText } from './NotificationSetting';

afterEach(cleanup);

/** The server's rules in small: off deletes, on subscribes and waits for the click. */
class FakeNotifications implements NotificationsApi {
  state: NotificationSettings;
  calls: string[] = [];
  nextError: ApiError | null = null;
  constructor(state: NotificationSettings) {
    this.state = state;
  }
  private fail() {
    const e = this.nextError;
    this.nextError = null;
    if (e) throw e;
  }
  async getNotifications() {
    this.calls.push('get');
    this.fail();
    return this.state;
  }
  async setNotifications(enabled: boolean, timeZone?: string) {
    this.calls.push(`put ${enabled}${timeZone ? ` ${timeZone}` : ''}`);
    this.fail();
    const zone = timeZone ?? this.state.timeZone;
    this.state = enabled ? { enabled, status: 'pending-confirmation', email: 'a@example.test' } : { enabled, status: 'off' };
    if (zone) this.state.timeZone = zone;
    return this.state;
  }
  async setTimeZone(timeZone: string) {
    this.calls.push(`put zone ${timeZone}`);
    this.fail();
    this.state = { ...this.state, timeZone };
    return this.state;
  }
}

function renderSetting(api: FakeNotifications, timeZone: string | null = null) {
  const announce = vi.fn();
  const onUnauthorized = vi.fn();
  render(<NotificationSetting api={api} announce={announce} onUnauthorized={onUnauthorized} timeZone={timeZone} />);
  return { announce, onUnauthorized };
}

const toggle = () => screen.getByRole('switch', { name: /Email me when a task expires/ });
const status = () => screen.getByTestId('notification-status');

describe('NotificationSetting', () => {
  it('shows "waiting for confirmation" until the email link is clicked', async () => {
    const api = new FakeNotifications({ enabled: true, status: 'pending-confirmation', email: 'a@example.test' });
    renderSetting(api);
    await waitFor(() => expect(toggle().getAttribute('aria-checked')).toBe('true'));
    expect(status().textContent).toMatch(/^Waiting for confirmation: click the link in the email sent to a@example\.test/);
    expect(toggle().getAttribute('aria-describedby')).toBe(status().id);
    expect(screen.getByRole('region', { name: 'Email notifications' })).toBeTruthy();
  });

  it('turns off (the subscription is deleted) and on again (a new confirmation email)', async () => {
    const api = new FakeNotifications({ enabled: true, status: 'confirmed', email: 'a@example.test' });
    const { announce } = renderSetting(api);
    await waitFor(() => expect(status().textContent).toBe('Expiry emails go to a@example.test.'));

    fireEvent.click(toggle());
    await waitFor(() => expect(toggle().getAttribute('aria-checked')).toBe('false'));
    expect(status().textContent).toBe('Expiry emails are off.');
    expect(toggle().textContent).toBe('Email me when a task expires: off');
    expect(announce).toHaveBeenLastCalledWith('Expiry emails turned off.');

    fireEvent.click(toggle());
    await waitFor(() => expect(toggle().getAttribute('aria-checked')).toBe('true'));
    expect(status().getAttribute('data-status')).toBe('pending-confirmation');
    expect(announce.mock.lastCall?.[0]).toMatch(/^Expiry emails turned on\. Waiting for confirmation/);
    expect(api.calls).toEqual(['get', 'put false', 'put true']);
  });

  it('shows the server message when turning on fails, and keeps the state', async () => {
    const api = new FakeNotifications({ enabled: false, status: 'off' });
    renderSetting(api);
    await waitFor(() => expect(toggle().getAttribute('aria-checked')).toBe('false'));
    api.nextError = new ApiError(409, 'address_taken', "Notifications cannot be turned on for your email address: it already receives another account's notifications");
    fireEvent.click(toggle());
    expect((await screen.findByRole('alert')).textContent).toMatch(/another account's notifications/);
    expect(toggle().getAttribute('aria-checked')).toBe('false');
    expect((toggle() as HTMLButtonElement).disabled).toBe(false);
  });

  it('reports an ended session', async () => {
    const api = new FakeNotifications({ enabled: true, status: 'confirmed' });
    api.nextError = new ApiError(401, 'unauthorized', 'Unauthorized');
    const { onUnauthorized } = renderSetting(api);
    await waitFor(() => expect(onUnauthorized).toHaveBeenCalled());
    expect(screen.queryByRole('switch')).toBeNull();
  });

  it("saves the browser's time zone once after sign-in, and with each change of the switch", async () => {
    const api = new FakeNotifications({ enabled: true, status: 'confirmed', email: 'a@example.test' });
    renderSetting(api, 'Europe/Berlin');
    await waitFor(() => expect(screen.getByTestId('notification-timezone').textContent).toBe('Emails show times in Europe/Berlin and in UTC.'));
    expect(api.calls).toEqual(['get', 'put zone Europe/Berlin']);
    fireEvent.click(toggle());
    await waitFor(() => expect(toggle().getAttribute('aria-checked')).toBe('false'));
    expect(api.calls).toEqual(['get', 'put zone Europe/Berlin', 'put false Europe/Berlin']);
  });

  it('sends nothing more when the saved zone is the browser\'s, or the browser has none', async () => {
    for (const [saved, browser] of [['America/New_York', 'America/New_York'], [undefined, null]] as const) {
      const api = new FakeNotifications({ enabled: true, status: 'confirmed', ...(saved ? { timeZone: saved } : {}) });
      renderSetting(api, browser);
      await waitFor(() => expect(toggle()).toBeTruthy());
      await new Promise((r) => setTimeout(r, 10));
      expect(api.calls).toEqual(['get']);
      expect(screen.queryByTestId('notification-timezone')?.textContent ?? '').toBe(saved ? 'Emails show times in America/New York and in UTC.' : '');
      cleanup();
    }
  });

  it('keeps the switch usable when saving the zone fails, and reports an ended session', async () => {
    const api = new FakeNotifications({ enabled: true, status: 'confirmed' });
    api.setTimeZone = async () => {
      throw new ApiError(400, 'validation_error', 'timeZone must be an IANA time zone name');
    };
    renderSetting(api, 'Europe/Berlin');
    await waitFor(() => expect(toggle().getAttribute('aria-checked')).toBe('true'));
    await new Promise((r) => setTimeout(r, 10));
    expect(screen.getByRole('alert').textContent).toBe('');
    cleanup();

    const gone = new FakeNotifications({ enabled: true, status: 'confirmed' });
    gone.setTimeZone = async () => {
      throw new ApiError(401, 'unauthorized', 'Unauthorized');
    };
    const { onUnauthorized } = renderSetting(gone, 'Europe/Berlin');
    await waitFor(() => expect(onUnauthorized).toHaveBeenCalled());
  });

  it('explains every status', () => {
    expect(notificationText({ enabled: true, status: 'not-subscribed' })).toMatch(/not subscribed yet/);
    expect(notificationText({ enabled: true, status: 'pending-confirmation' })).toMatch(/your address/);
  });
});
