import { useCallback, useEffect, useId, useState } from 'react';
import type { NotificationsApi } from '../api';
import { ApiError, userMessage } from '../http';
import { browserTimeZone, zoneToSave } from '../timezone';
import type { NotificationSettings } from '../types';
import { useMounted } from './hooks';

interface Props {
  api: NotificationsApi;
  announce: (text: string) => void;
  /** Called when the API says the session is no longer valid (401). */
  onUnauthorized: () => void;
  /** The browser's IANA time zone, null for none. Default: what Intl says (browserTimeZone). */
  timeZone?: string | null | undefined;
}

/** The sentence that explains a setting's state. */
export function notificationText(s: NotificationSettings): string {
  switch (s.status) {
    case 'off':
      return 'Expiry emails are off.';
    case 'pending-confirmation':
      return `Waiting for confirmation: click the link in the email sent to ${s.email ?? 'your address'} ("AWS Notification - Subscription Confirmation"). Until then no expiry emails are sent.`;
    case 'confirmed':
      return `Expiry emails go to ${s.email ?? 'your address'}.`;
    case 'not-subscribed':
      return 'Expiry emails are on, but your address is not subscribed yet. Sign in again, or turn them off and on.';
  }
}

/**
 * An on/off switch for the expiry emails, backed by GET/PUT
 * /me/notifications. It shows "waiting for confirmation" until the link
 * in the confirmation email is clicked. Once per sign-in (when it mounts),
 * and with every change of the switch, it saves the browser's time zone
 * if the server has another, so that the emails show times in it.
 */
export function NotificationSetting({ api, announce, onUnauthorized, timeZone: given }: Props) {
  const timeZone = given === undefined ? browserTimeZone() : (given ?? undefined);
  const mounted = useMounted();
  const id = useId();
  const [settings, setSettings] = useState<NotificationSettings | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  const fail = useCallback(
    (err: unknown) => {
      if (err instanceof ApiError && err.status === 401) onUnauthorized();
      if (mounted.current) setError(userMessage(err));
    },
    [mounted, onUnauthorized],
  );

  useEffect(() => {
    api.getNotifications().then((s) => {
      if (mounted.current) setSettings(s);
      const zone = zoneToSave(s.timeZone, timeZone);
      if (zone === undefined) return;
      // In the background: on failure the emails keep the zone saved
      // before (or UTC), and the next sign-in tries again.
      return api.setTimeZone(zone).then(
        (next) => {
          if (mounted.current) setSettings(next);
        },
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 401) onUnauthorized();
        },
      );
    }, fail);
  }, [api, fail, mounted, onUnauthorized, timeZone]);

  async function toggle() {
    if (!settings || busy) return;
    const enabled = !settings.enabled;
    setBusy(true);
    setError('');
    try {
      const next = await api.setNotifications(enabled, timeZone);
      if (!mounted.current) return;
      setSettings(next);
      announce(enabled ? `Expiry emails turned on. ${notificationText(next)}` : 'Expiry emails turned off.');
    } catch (err) {
      fail(err);
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  return (
    <section className="notifications" aria-labelledby={`${id}-heading`} data-testid="notification-setting">
      <h2 id={`${id}-heading`}>Email notifications</h2>
      {settings ? (
        <>
          <button
            type="button"
            role="switch"
            aria-checked={settings.enabled}
            aria-describedby={`${id}-status`}
            aria-busy={busy}
            disabled={busy}
            onClick={() => void toggle()}
          >
            Email me when a task expires: {settings.enabled ? 'on' : 'off'}
          </button>
          <p id={`${id}-status`} className={settings.status === 'pending-confirmation' ? 'banner' : 'muted'} data-testid="notification-status" data-status={settings.status}>
            {notificationText(settings)}
          </p>
          {settings.timeZone ? (
            <p className="muted" data-testid="notification-timezone">
              Emails show times in {settings.timeZone.replace(/_/g, ' ')} and in UTC.
            </p>
          ) : null}
        </>
      ) : error ? null : (
        <p className="muted">Loading…</p>
      )}
      <p className="error" role="alert">
        {error}
      </p>
    </section>
  );
}
