import { type ReactNode, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createTaskApi } from './api';
import { createAuth } from './auth';
import { createCampaignApi } from './campaignApi';
import { campaignsConfig, ConfigError, loadConfig } from './config';
import { userMessage } from './http';
import { App, Shell } from './ui/App';
import './styles.css';

const root = createRoot(document.getElementById('root')!);
const fetchFn = (input: string, init?: RequestInit) => fetch(input, init);

function render(node: ReactNode) {
  root.render(<StrictMode>{node}</StrictMode>);
}

async function start() {
  render(
    <Shell>
      <p className="muted">Loading…</p>
    </Shell>,
  );
  try {
    const config = await loadConfig(fetchFn, `${import.meta.env.BASE_URL}config.json`);
    const auth = await createAuth(config, fetchFn, window.sessionStorage);
    const api = createTaskApi({ apiUrl: config.apiUrl, getToken: () => auth.getIdToken(), fetchFn });
    const session = await auth.currentSession();
    const codeWhere = config.mode === 'local' ? 'the dev server outbox (/outbox)' : undefined;
    const campaignSettings = campaignsConfig(config);
    const getToken = () => auth.getIdToken();
    const campaigns = campaignSettings
      ? { api: createCampaignApi({ apiUrl: campaignSettings.apiUrl, getToken, fetchFn }), config: campaignSettings, getToken }
      : undefined;
    render(<App auth={auth} api={api} notifications={api} initialSession={session} {...(codeWhere ? { codeWhere } : {})} {...(campaigns ? { campaigns } : {})} />);
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : userMessage(err);
    render(
      <Shell>
        <p className="error" role="alert">
          The app could not start: {message}
        </p>
      </Shell>,
    );
  }
}

void start();
