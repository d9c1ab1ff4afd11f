import { afterEach, describe, expect, it, vi } from 'vitest';
import { appSyncProtocols, openAppSync, openSse, reconnectDelay, type WebSocketLike } from './campaignLive';
import type { LiveState, Progress } from './campaigns';

const jwt = `h.${btoa(JSON.stringify({ sub: 'owner-1' })).replace(/=+$/, '')}.s`;
const progress = (asOf: string): Progress => ({ campaignId: 'c1', status: 'Active', asOf, counts: { Finished: 1 }, sends: [] });

afterEach(() => vi.useRealTimers());

describe('reconnectDelay', () => {
  it('grows to 15 s', () => expect([0, 1, 2, 3, 4, 10].map(reconnectDelay)).toEqual([1000, 2000, 4000, 8000, 15000, 15000]));
});

describe('openAppSync', () => {
  class FakeWS implements WebSocketLike {
    static last: FakeWS;
    sent: Record<string, unknown>[] = [];
    closed = false;
    onopen: ((ev: Event) => void) | null = null;
    onmessage: ((ev: MessageEvent) => void) | null = null;
    onclose: ((ev: CloseEvent) => void) | null = null;
    onerror: ((ev: Event) => void) | null = null;
    constructor(
      readonly url: string,
      readonly protocols: string[],
    ) {
      FakeWS.last = this;
    }
    send(d: string) {
      this.sent.push(JSON.parse(d) as Record<string, unknown>);
    }
    close() {
      this.closed = true;
    }
    receive(m: unknown) {
      this.onmessage?.({ data: JSON.stringify(m) } as MessageEvent);
    }
  }

  it('connects, subscribes to the owner channel with the ID token, and applies data', async () => {
    const got: Progress[] = [];
    const states: LiveState[] = [];
    const live = openAppSync({
      httpHost: 'h.example',
      realtimeHost: 'rt.example',
      campaignId: 'c1',
      getToken: () => Promise.resolve(jwt),
      handlers: { onProgress: (p) => got.push(p), onState: (s) => states.push(s) },
      WebSocketImpl: FakeWS,
    });
    await vi.waitFor(() => expect(FakeWS.last?.url).toBe('wss://rt.example/event/realtime'));
    const ws = FakeWS.last;
    expect(ws.protocols).toEqual(appSyncProtocols('h.example', jwt));
    const header = JSON.parse(atob(ws.protocols[1]!.slice('header-'.length).replace(/-/g, '+').replace(/_/g, '/'))) as unknown;
    expect(header).toEqual({ host: 'h.example', Authorization: jwt });
    ws.onopen?.(new Event('open'));
    expect(ws.sent[0]).toEqual({ type: 'connection_init' });
    ws.receive({ type: 'connection_ack', connectionTimeoutMs: 300000 });
    expect(ws.sent[1]).toMatchObject({ type: 'subscribe', channel: '/campaigns/owner-1/c1', authorization: { host: 'h.example', Authorization: jwt } });
    ws.receive({ type: 'subscribe_success', id: ws.sent[1]!.id });
    expect(states.at(-1)).toBe('live');
    ws.receive({ type: 'data', id: ws.sent[1]!.id, event: JSON.stringify(progress('2030-01-01T12:00:01Z')) });
    ws.receive({ type: 'data', id: ws.sent[1]!.id, event: [JSON.stringify(progress('2030-01-01T12:00:02Z')), 'not json'] });
    expect(got.map((p) => p.asOf)).toEqual(['2030-01-01T12:00:01Z', '2030-01-01T12:00:02Z']);
    ws.receive({ type: 'subscribe_error' });
    expect(states.at(-1)).toBe('down');
    expect(ws.closed).toBe(true);
    live.close();
  });
});

describe('openSse', () => {
  it('streams with the Authorization header, reports live, then down when the stream ends', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const enc = new TextEncoder();
    const seen: RequestInit[] = [];
    const fetchFn = vi.fn((_url: string, init?: RequestInit) => {
      seen.push(init ?? {});
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(enc.encode(': subscribed\n\ndata: {"campaignId":"c1","status":"Active","asOf":"2030-01-01T12:00:01Z","counts":{},"sends":[]}\n'));
          c.enqueue(enc.encode('\n'));
          c.close();
        },
      });
      return Promise.resolve(new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } }));
    });
    const got: Progress[] = [];
    const states: LiveState[] = [];
    const live = openSse({ url: '/campaigns/c1/events', getToken: () => Promise.resolve('tok'), fetchFn, handlers: { onProgress: (p) => got.push(p), onState: (s) => states.push(s) } });
    await vi.waitFor(() => expect(states.at(-1)).toBe('down'));
    expect((seen[0]!.headers as Record<string, string>).Authorization).toBe('tok');
    expect(got).toHaveLength(1);
    expect(states).toEqual(['connecting', 'live', 'down']);
    await vi.advanceTimersByTimeAsync(1000); // reconnects after 1 s
    expect(fetchFn).toHaveBeenCalledTimes(2);
    live.close();
  });
});
