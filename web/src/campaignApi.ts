import type { TokenSource } from './api';
import type { CampaignJSON, CampaignSummary, CreateBody, Preview } from './campaigns';
import { type FetchFn, joinUrl, requestJson } from './http';

/** The campaign REST API (internal/campaigns/campaignapi). */
export interface CampaignApi {
  list(cursor?: string): Promise<{ campaigns: CampaignSummary[]; cursor?: string }>;
  preview(body: CreateBody): Promise<Preview>;
  create(body: CreateBody): Promise<CampaignJSON>;
  get(id: string, opts?: { cursor?: string; limit?: number }): Promise<CampaignJSON>;
  provision(id: string): Promise<CampaignJSON>;
  cancel(id: string): Promise<{ id: string; status: string; cancelled: number; done: boolean }>;
}

export function createCampaignApi(opts: { apiUrl: string; getToken: TokenSource; fetchFn?: FetchFn }): CampaignApi {
  const fetchFn = opts.fetchFn ?? ((input, init) => fetch(input, init));
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const token = await opts.getToken();
    const headers: Record<string, string> = { Authorization: token, Accept: 'application/json' };
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return requestJson<T>(fetchFn, joinUrl(opts.apiUrl, path), init);
  }
  return {
    async list(cursor) {
      const out = await call<{ campaigns?: CampaignSummary[]; cursor?: string }>('GET', `/campaigns${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`);
      return { campaigns: out?.campaigns ?? [], ...(out?.cursor ? { cursor: out.cursor } : {}) };
    },
    preview: (body) => call<Preview>('POST', '/campaigns/preview', body),
    create: (body) => call<CampaignJSON>('POST', '/campaigns', body),
    get(id, o) {
      const q = new URLSearchParams();
      if (o?.cursor) q.set('cursor', o.cursor);
      if (o?.limit) q.set('limit', String(o.limit));
      const qs = q.toString();
      return call<CampaignJSON>('GET', `/campaigns/${encodeURIComponent(id)}${qs ? `?${qs}` : ''}`);
    },
    provision: (id) => call<CampaignJSON>('POST', `/campaigns/${encodeURIComponent(id)}/provision`),
    cancel: (id) => call('POST', `/campaigns/${encodeURIComponent(id)}/cancel`),
  };
}
