// Live campaign progress: server-sent events from `make dev`, or AWS AppSync
// Events over WebSocket in the cloud. Both hand each Progress to onProgress
// and report the channel's state (live or down) so the page can poll while
// it is down. Both reconnect with a growing pause until closed.
import type { TokenSource } from './api';
import { type LiveState, type Progress, parseProgress, progressChannel, SseParser, tokenSub } from './campaigns';
import type { FetchFn } from './http';

export interface LiveHandlers {
  onProgress(p: Progress): void;
  onState(s: LiveState): void;
}

/** A live subscription; close() ends it for good. */
export interface Live {
  close(): void;
}

/** Pause before reconnect attempt n (0-based): 1 s, 2 s, 4 s … 15 s. */
export function reconnectDelay(n: number): number {
  return Math.min(15_000, 1000 * 2 ** n);
}

/**
 * GET {apiUrl}/campaigns/{id}/events read as a stream with fetch: an
 * EventSource cannot send the Authorization header the dev server checks.
 */
export function openSse(opts: { url: string; getToken: TokenSource; fetchFn?: FetchFn; handlers: LiveHandlers }): Live {
  const fetchFn = opts.fetchFn ?? ((input, init) => fetch(input, init));
  const abort = new AbortController();
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;

  async function connect() {
    if (closed) return;
    opts.handlers.onState(attempt === 0 ? 'connecting' : 'down');
    try {
      const token = await opts.getToken();
      const res = await fetchFn(opts.url, { headers: { Authorization: token, Accept: 'text/event-stream' }, signal: abort.signal, cache: 'no-store' });
      if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
      attempt = 0;
      opts.handlers.onState('live');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const data of parser.feed(value)) {
          const p = parseProgress(data);
          if (p) opts.handlers.onProgress(p);
        }
      }
    } catch {
      // Reconnect below, unless closed.
    }
    if (closed) return;
    opts.handlers.onState('down');
    timer = setTimeout(() => void connect(), reconnectDelay(attempt++));
  }
  void connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      abort.abort();
    },
  };
}

/** base64url of a UTF-8 string, without padding. */
function base64url(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The WebSocket subprotocols of an AppSync Events connection authorized by headers. */
export function appSyncProtocols(httpHost: string, idToken: string): string[] {
  return ['aws-appsync-event-ws', `header-${base64url(JSON.stringify({ host: httpHost, Authorization: idToken }))}`];
}

export type WebSocketLike = Pick<WebSocket, 'send' | 'close'> & {
  onopen: ((ev: Event) => void) | null;
  onmessage: ((ev: MessageEvent) => void) | null;
  onclose: ((ev: CloseEvent) => void) | null;
  onerror: ((ev: Event) => void) | null;
};
export type WebSocketCtor = new (url: string, protocols: string[]) => WebSocketLike;

/**
 * Subscribes to the campaign's channel (/campaigns/<owner sub>/<id>) of an
 * AWS AppSync Events API with the Cognito ID token. The protocol, from
 * "Understanding the Event API WebSocket protocol"
 * (https://docs.aws.amazon.com/appsync/latest/eventapi/event-api-websocket-protocol.html):
 * connect to wss://<realtime DNS>/event/realtime offering the subprotocols
 * "aws-appsync-event-ws" and "header-<base64url JSON {host, Authorization}>"
 * (host is the API's HTTP DNS name); send {"type":"connection_init"}; on
 * "connection_ack" (its connectionTimeoutMs is the longest silence allowed
 * between "ka" keep-alives) send {"type":"subscribe", id, channel,
 * authorization: {host, Authorization}}; "subscribe_success" confirms, and
 * each "data" message carries the published event as a JSON string.
 */
export function openAppSync(opts: {
  httpHost: string;
  realtimeHost: string;
  campaignId: string;
  getToken: TokenSource;
  handlers: LiveHandlers;
  WebSocketImpl?: WebSocketCtor;
}): Live {
  const WS: WebSocketCtor = opts.WebSocketImpl ?? (WebSocket as unknown as WebSocketCtor);
  let closed = false;
  let ws: WebSocketLike | null = null;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;

  function down() {
    clearTimeout(watchdog);
    if (closed) return;
    opts.handlers.onState('down');
    const old = ws;
    ws = null;
    if (old) {
      old.onclose = null;
      try {
        old.close();
      } catch {
        // already closed
      }
    }
    clearTimeout(retry);
    retry = setTimeout(() => void connect(), reconnectDelay(attempt++));
  }

  async function connect() {
    if (closed) return;
    let token: string;
    try {
      token = await opts.getToken();
    } catch {
      down();
      return;
    }
    const owner = tokenSub(token);
    if (!owner || closed) {
      if (!closed) down();
      return;
    }
    const auth = { host: opts.httpHost, Authorization: token };
    const sock = new WS(`wss://${opts.realtimeHost}/event/realtime`, appSyncProtocols(opts.httpHost, token));
    ws = sock;
    let timeoutMs = 300_000;
    const alive = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(down, timeoutMs);
    };
    sock.onopen = () => sock.send(JSON.stringify({ type: 'connection_init' }));
    sock.onerror = () => down();
    sock.onclose = () => down();
    sock.onmessage = (ev: MessageEvent) => {
      let msg: { type?: string; connectionTimeoutMs?: number; event?: unknown };
      try {
        msg = JSON.parse(String(ev.data)) as typeof msg;
      } catch {
        return;
      }
      switch (msg.type) {
        case 'connection_ack':
          if (typeof msg.connectionTimeoutMs === 'number' && msg.connectionTimeoutMs > 0) timeoutMs = msg.connectionTimeoutMs;
          alive();
          sock.send(JSON.stringify({ type: 'subscribe', id: crypto.randomUUID(), channel: progressChannel(owner, opts.campaignId), authorization: auth }));
          break;
        case 'ka':
          alive();
          break;
        case 'subscribe_success':
          attempt = 0;
          opts.handlers.onState('live');
          break;
        case 'data': {
          const events = Array.isArray(msg.event) ? msg.event : [msg.event];
          for (const e of events) {
            const p = typeof e === 'string' ? parseProgress(e) : null;
            if (p) opts.handlers.onProgress(p);
          }
          break;
        }
        case 'subscribe_error':
        case 'connection_error':
        case 'error':
          down();
          break;
      }
    };
  }

  opts.handlers.onState('connecting');
  void connect();
  return {
    close() {
      closed = true;
      clearTimeout(retry);
      clearTimeout(watchdog);
      if (ws) {
        ws.onclose = null;
        try {
          ws.close();
        } catch {
          // already closed
        }
      }
    },
  };
}
