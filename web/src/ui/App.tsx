import { type ReactNode, useCallback, useState } from 'react';
import type { NotificationsApi, TaskApi } from '../api';
import type { Auth, Session } from '../auth';
import { userMessage } from '../http';
import { AuthForm } from './AuthForm';
import { useAnnouncer } from './hooks';
import { NotificationSetting } from './NotificationSetting';
import { TaskPage } from './TaskPage';

interface Props {
  auth: Auth;
  api: TaskApi;
  /** Serves the notification setting; without it the setting is not shown. */
  notifications?: NotificationsApi;
  initialSession: Session | null;
  pollIntervalMs?: number;
  /** How long Complete and Delete wait for an Undo. Default: UNDO_DELAY_MS. */
  undoDelayMs?: number;
  /** Where password reset codes arrive, as told to the user. Default: "your inbox". */
  codeWhere?: string;
}

export function App({ auth, api, notifications, initialSession, pollIntervalMs, undoDelayMs, codeWhere }: Props) {
  const [session, setSession] = useState(initialSession);
  // After signing in on the form, focus goes to the new task's title.
  const [justSignedIn, setJustSignedIn] = useState(false);
  const [notice, setNotice] = useState('');
  const [signOutError, setSignOutError] = useState('');
  const [announcement, announce] = useAnnouncer();

  const onSignedIn = useCallback(
    (s: Session) => {
      setNotice('');
      setSession(s);
      setJustSignedIn(true);
      announce(`Signed in as ${s.email}.`);
    },
    [announce],
  );

  async function signOut() {
    setSignOutError('');
    try {
      await auth.signOut();
      setSession(null);
      announce('Signed out.');
    } catch (err) {
      setSignOutError(userMessage(err));
    }
  }

  const onUnauthorized = useCallback(() => {
    void auth.signOut().catch(() => undefined);
    setSession(null);
    setNotice('Your session has ended. Please sign in again.');
  }, [auth]);

  return (
    <Shell
      announcement={announcement}
      account={
        session ? (
          <div className="account">
            <span data-testid="signed-in-as">{session.email}</span>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
            {signOutError ? (
              <span className="error" role="alert">
                {signOutError}
              </span>
            ) : null}
          </div>
        ) : null
      }
    >
      {session ? (
        <>
          {notifications ? <NotificationSetting key={`n-${session.email}`} api={notifications} announce={announce} onUnauthorized={onUnauthorized} /> : null}
          <TaskPage
            key={session.email}
            api={api}
            announce={announce}
            onUnauthorized={onUnauthorized}
            autoFocus={justSignedIn}
            {...(pollIntervalMs ? { pollIntervalMs } : {})}
            {...(undoDelayMs !== undefined ? { undoDelayMs } : {})}
          />
        </>
      ) : (
        <AuthForm key={notice} auth={auth} onSignedIn={onSignedIn} notice={notice} {...(codeWhere ? { codeWhere } : {})} />
      )}
    </Shell>
  );
}

export function Shell({ children, account, announcement }: { children: ReactNode; account?: ReactNode; announcement?: { text: string; key: number } }) {
  return (
    <>
      <header className="top">
        <h1>Unschedule</h1>
        {account}
      </header>
      <main>{children}</main>
      <div className="visually-hidden" role="status" aria-live="polite" data-testid="announcer">
        {announcement ? <span key={announcement.key}>{announcement.text}</span> : null}
      </div>
    </>
  );
}
