import { describe, expect, it } from 'vitest';
import { createTaskApi } from './api';
import {
  ApiError,
  type FetchFn,
  GENERIC_NETWORK_MESSAGE,
  GENERIC_SERVER_MESSAGE,
  NetworkError,
  requestJson,
  userMessage,
} from './http';
import type { Task } from './types';

interface Recorded {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** A fetch that answers from a script, one responder per call, and records requests. */
function scriptedFetch(...responders: ((req: Recorded) => Response | Promise<Response>)[]) {
  const calls: Recorded[] = [];
  const fn: FetchFn = async (url, init = {}) => {
    const req: Recorded = {
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      ...(typeof init.body === 'string' ? { body: init.body } : {}),
    };
    calls.push(req);
    const next = responders[calls.length - 1];
    if (!next) throw new Error(`unexpected request ${req.method} ${url}`);
    return next(req);
  };
  return { fn, calls };
}

const json = (status: number, body: unknown) => () =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
const text = (status: number, body: string) => () => new Response(body, { status });

function task(id: string, overrides: Partial<Task> = {}): Task {
  return {
    id,
    title: `task ${id}`,
    status: 'Pending',
    dueAt: '2030-01-01T00:00:00Z',
    createdAt: '2025-01-01T00:00:00Z',
    updatedAt: '2025-01-01T00:00:00Z',
    ...overrides,
  };
}

function api(fetchFn: FetchFn, token = 'id-token-123') {
  return createTaskApi({ apiUrl: 'https://api.example.test/prod/', getToken: async () => token, fetchFn });
}

describe('error mapping', () => {
  const cases: {
    name: string;
    respond: () => Response | Promise<Response>;
    status?: number;
    code?: string;
    shown: string;
  }[] = [
    {
      name: '400 message is shown as written',
      respond: json(400, { error: 'validation', message: 'title must be 1 to 200 characters (given 0)' }),
      status: 400,
      code: 'validation',
      shown: 'title must be 1 to 200 characters (given 0)',
    },
    {
      name: '409 conflict message is shown as written',
      respond: json(409, { error: 'not_pending', message: 'The task is already Expired.' }),
      status: 409,
      code: 'not_pending',
      shown: 'The task is already Expired.',
    },
    {
      name: 'API Gateway 401 with only a message',
      respond: json(401, { message: 'Unauthorized' }),
      status: 401,
      code: 'http_401',
      shown: 'Unauthorized',
    },
    {
      name: '404 without a body gets a readable fallback',
      respond: text(404, ''),
      status: 404,
      code: 'http_404',
      shown: 'That task no longer exists.',
    },
    {
      name: '4xx with a non-JSON body gets a fallback',
      respond: text(422, '<html>nope</html>'),
      status: 422,
      shown: 'The request was not accepted.',
    },
    {
      name: '500 message is replaced by the generic one',
      respond: json(500, { error: 'internal', message: 'dynamodb: ConditionalCheckFailed at line 42' }),
      status: 500,
      code: 'internal',
      shown: GENERIC_SERVER_MESSAGE,
    },
    {
      name: '503 from a proxy with an HTML body',
      respond: text(503, '<h1>Service Unavailable</h1>'),
      status: 503,
      shown: GENERIC_SERVER_MESSAGE,
    },
    {
      name: 'network failure',
      respond: () => Promise.reject(new TypeError('Failed to fetch')),
      shown: GENERIC_NETWORK_MESSAGE,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { fn } = scriptedFetch(c.respond);
      const err = await api(fn).getTask('t1').then(
        () => {
          throw new Error('expected the call to fail');
        },
        (e: unknown) => e,
      );
      if (c.status === undefined) {
        expect(err).toBeInstanceOf(NetworkError);
      } else {
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).status).toBe(c.status);
        if (c.code) expect((err as ApiError).code).toBe(c.code);
      }
      expect(userMessage(err)).toBe(c.shown);
    });
  }

  it('an unexpected error is shown generically', () => {
    expect(userMessage(new Error('TypeError: x is undefined'))).toBe(GENERIC_SERVER_MESSAGE);
    expect(userMessage('boom')).toBe(GENERIC_SERVER_MESSAGE);
  });

  it('a 2xx body that is not JSON is a server error', async () => {
    const { fn } = scriptedFetch(text(200, 'not json'));
    await expect(requestJson(fn, '/x')).rejects.toMatchObject({ status: 200, code: 'invalid_response' });
  });
});

describe('requests', () => {
  it('sends the id token as the Authorization header, as is', async () => {
    const { fn, calls } = scriptedFetch(json(200, task('a')));
    await api(fn, 'eyJraWQ.abc.def').getTask('a');
    expect(calls[0]!.headers.Authorization).toBe('eyJraWQ.abc.def');
  });

  it('creates a task with a JSON body and returns the 201 body', async () => {
    const created = task('new', { title: 'Pay rent' });
    const { fn, calls } = scriptedFetch(json(201, created));
    const got = await api(fn).createTask({ title: 'Pay rent', dueAt: '2030-01-01T00:00:00Z' });
    expect(got).toEqual(created);
    expect(calls[0]).toMatchObject({
      url: 'https://api.example.test/prod/tasks',
      method: 'POST',
      body: JSON.stringify({ title: 'Pay rent', dueAt: '2030-01-01T00:00:00Z' }),
    });
    expect(calls[0]!.headers['Content-Type']).toBe('application/json');
  });

  it('patches a task by escaped id', async () => {
    const { fn, calls } = scriptedFetch(json(200, task('a/b', { status: 'Done' })));
    const got = await api(fn).updateTask('a/b', { status: 'done' });
    expect(got.status).toBe('Done');
    expect(calls[0]).toMatchObject({
      url: 'https://api.example.test/prod/tasks/a%2Fb',
      method: 'PATCH',
      body: '{"status":"done"}',
    });
  });

  it('deletes with 204 and no body', async () => {
    const { fn, calls } = scriptedFetch(() => new Response(null, { status: 204 }));
    await expect(api(fn).deleteTask('t1')).resolves.toBeUndefined();
    expect(calls[0]).toMatchObject({ method: 'DELETE', url: 'https://api.example.test/prod/tasks/t1' });
    expect(calls[0]!.body).toBeUndefined();
    expect(calls[0]!.headers['Content-Type']).toBeUndefined();
  });

  it('reads and sets the notification setting', async () => {
    const { fn, calls } = scriptedFetch(
      json(200, { enabled: true, status: 'pending-confirmation', email: 'a@example.test' }),
      json(200, { enabled: false, status: 'off' }),
    );
    const a = api(fn);
    expect(await a.getNotifications()).toEqual({ enabled: true, status: 'pending-confirmation', email: 'a@example.test' });
    expect(await a.setNotifications(false)).toEqual({ enabled: false, status: 'off' });
    expect(calls[0]).toMatchObject({ method: 'GET', url: 'https://api.example.test/prod/me/notifications' });
    expect(calls[1]).toMatchObject({ method: 'PUT', url: 'https://api.example.test/prod/me/notifications', body: '{"enabled":false}' });
    expect(calls[1]!.headers['Content-Type']).toBe('application/json');
  });

  it('sends the time zone with the setting, or alone', async () => {
    const { fn, calls } = scriptedFetch(
      json(200, { enabled: true, status: 'confirmed', timeZone: 'Europe/Berlin' }),
      json(200, { enabled: true, status: 'confirmed', timeZone: 'Asia/Tokyo' }),
    );
    const a = api(fn);
    expect(await a.setNotifications(true, 'Europe/Berlin')).toMatchObject({ timeZone: 'Europe/Berlin' });
    expect(await a.setTimeZone('Asia/Tokyo')).toMatchObject({ timeZone: 'Asia/Tokyo' });
    expect(calls[0]).toMatchObject({ method: 'PUT', body: '{"enabled":true,"timeZone":"Europe/Berlin"}' });
    expect(calls[1]).toMatchObject({ method: 'PUT', url: 'https://api.example.test/prod/me/notifications', body: '{"timeZone":"Asia/Tokyo"}' });
  });

  it('does not send a request when there is no token', async () => {
    const { fn, calls } = scriptedFetch();
    const noToken = createTaskApi({
      apiUrl: 'https://api.example.test/prod',
      getToken: () => Promise.reject(new Error('not signed in')),
      fetchFn: fn,
    });
    await expect(noToken.listAllTasks()).rejects.toThrow('not signed in');
    expect(calls).toHaveLength(0);
  });
});

describe('listAllTasks', () => {
  it('follows cursors until a page has none', async () => {
    const { fn, calls } = scriptedFetch(
      json(200, { tasks: [task('1'), task('2')], cursor: 'c/1=' }),
      json(200, { tasks: [task('3')], cursor: 'c2' }),
      json(200, { tasks: [task('4')] }),
    );
    const all = await createTaskApi({
      apiUrl: 'https://api.example.test/prod',
      getToken: async () => 't',
      fetchFn: fn,
      pageSize: 2,
    }).listAllTasks();
    expect(all.map((t) => t.id)).toEqual(['1', '2', '3', '4']);
    expect(calls.map((c) => c.url)).toEqual([
      'https://api.example.test/prod/tasks?limit=2',
      'https://api.example.test/prod/tasks?cursor=c%2F1%3D&limit=2',
      'https://api.example.test/prod/tasks?cursor=c2&limit=2',
    ]);
  });

  it('treats an empty cursor as the last page', async () => {
    const { fn, calls } = scriptedFetch(json(200, { tasks: [task('1')], cursor: '' }));
    expect(await api(fn).listAllTasks()).toHaveLength(1);
    expect(calls).toHaveLength(1);
  });

  it('handles an empty list', async () => {
    const { fn } = scriptedFetch(json(200, { tasks: [] }));
    expect(await api(fn).listAllTasks()).toEqual([]);
  });

  it('stops when the server repeats a cursor', async () => {
    const { fn, calls } = scriptedFetch(
      json(200, { tasks: [task('1')], cursor: 'same' }),
      json(200, { tasks: [task('2')], cursor: 'same' }),
    );
    await expect(api(fn).listAllTasks()).rejects.toThrow(/could not be loaded completely/);
    expect(calls).toHaveLength(2);
  });

  it('fails as a whole when a later page fails', async () => {
    const { fn } = scriptedFetch(
      json(200, { tasks: [task('1')], cursor: 'c1' }),
      json(400, { error: 'bad_cursor', message: 'cursor is not valid' }),
    );
    const err = await api(fn).listAllTasks().catch((e: unknown) => e);
    expect(userMessage(err)).toBe('cursor is not valid');
  });
});
