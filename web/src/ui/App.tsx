import { type ReactNode, useCallback, useEffect, useState } from 'react';
import type { NotificationsApi, TaskApi, TokenSource } from '../api';
import type { Auth, Session } from '../auth';
import type { CampaignApi } from '../campaignApi';
import { campaignRoute } from '../campaigns';
import type { CampaignsConfig } from '../config';
import { userMessage } from '../http';
import { AuthForm } from './AuthForm';
import { CampaignsPage } from './Campaigns';
import { useAnnouncer } from './hooks';
import { NotificationSetting } from './NotificationSetting';
import { TaskPage } from './TaskPage';
import { VerifyEmail } from './VerifyEmail';

interface Props {
  auth: Auth;
  api: TaskApi;
  /** Serves the notification setting; without it the setting is not shown. */
  notifications?: NotificationsApi;
  initialSession: Session | null;
  pollIntervalMs?: number;
  /** How long Complete and Delete wait for an Undo. Default: UNDO_DELAY_MS. */
  undoDelayMs?: number;
  /** Where password reset and verification codes arrive, as told to the user. Default: "your inbox". */
  codeWhere?: string;
  /** The campaign pages (#/campaigns); without it they are not shown. */
  campaigns?: { api: CampaignApi; config: CampaignsConfig; getToken: TokenSource };
}

/** The campaign route of the location's hash, kept current. */
function useCampaignRoute() {
  const [route, setRoute] = useState(() => (typeof location === 'undefined' ? null : campaignRoute(location.hash)));
  useEffect(() => {
    const on = () => setRoute(campaignRoute(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function App({ auth, api, notifications, initialSession, pollIntervalMs, undoDelayMs, codeWhere, campaigns }: Props) {
  const [session, setSession] = useState(initialSession);
  const campaignPage = useCampaignRoute();
  // After signing in on the form, focus goes to the new task's title.
  const [justSignedIn, setJustSignedIn] = useState(false);
  const [notice, setNotice] = useState('');
  const [signOutError, setSignOutError] = useState('');
  const [announcement, announce] = useAnnouncer();
  // Verified in this sign-in: the "verified" note stays until sign-out.
  const [verifiedNow, setVerifiedNow] = useState(false);

  const onSignedIn = useCallback(
    (s: Session) => {
      setNotice('');
      setVerifiedNow(false);
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

  const onVerified = useCallback(() => {
    setVerifiedNow(true);
    setSession((s) => (s ? { ...s, emailVerified: true } : s));
  }, []);

  const verifyEmail =
    session && (session.emailVerified === false || verifiedNow) ? (
      <VerifyEmail key={`v-${session.email}`} auth={auth} email={session.email} onVerified={onVerified} announce={announce} {...(codeWhere ? { codeWhere } : {})} />
    ) : null;

  return (
    <Shell
      announcement={announcement}
      account={
        session ? (
          <div className="account">
            {campaigns ? (
              <nav aria-label="Pages" className="pages">
                <a href="#/" aria-current={campaignPage ? undefined : 'page'}>
                  Tasks
                </a>
                <a href="#/campaigns" aria-current={campaignPage ? 'page' : undefined}>
                  Campaigns
                </a>
              </nav>
            ) : null}
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
      {verifyEmail}
      {session && campaigns && campaignPage ? (
        <CampaignsPage
          key={session.email}
          api={campaigns.api}
          config={campaigns.config}
          getToken={campaigns.getToken}
          route={campaignPage}
          announce={announce}
          onUnauthorized={onUnauthorized}
        />
      ) : session ? (
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
