import { describe, expect, it, vi } from 'vitest';
import type { Task } from './types';
import { applyWaiting, type DeferredAction, nextFocus, UNDO_DELAY_MS, UndoQueue } from './undo';

function task(id: string, status: Task['status'] = 'Pending'): Task {
  return { id, title: `T${id}`, status, dueAt: '2030-01-01T00:00:00Z', createdAt: '2025-01-01T00:00:00Z', updatedAt: '2025-01-01T00:00:00Z' };
}

function setup() {
  vi.useFakeTimers();
  const sent: string[] = [];
  const changes: number[] = [];
  const q = new UndoQueue({
    send: async (a, keepalive) => {
      sent.push(`${a.kind} ${a.task.id}${keepalive ? ' keepalive' : ''}`);
    },
    onChange: (w) => changes.push(w.length),
  });
  return { q, sent, changes };
}

describe('UndoQueue', () => {
  it('waits about 6 s before sending', () => {
    const { q, sent } = setup();
    q.add({ kind: 'delete', task: task('a') });
    vi.advanceTimersByTime(UNDO_DELAY_MS - 1);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(['delete a']);
    expect(q.list()).toEqual([]);
    expect(UNDO_DELAY_MS).toBeGreaterThanOrEqual(5000);
    expect(UNDO_DELAY_MS).toBeLessThanOrEqual(8000);
    vi.useRealTimers();
  });
  it('undo cancels the send', () => {
    const { q, sent, changes } = setup();
    q.add({ kind: 'complete', task: task('a') });
    expect(q.undo('a')).toBe(true);
    vi.advanceTimersByTime(UNDO_DELAY_MS * 2);
    expect(sent).toEqual([]);
    expect(changes).toEqual([1, 0]);
    expect(q.undo('a')).toBe(false);
    vi.useRealTimers();
  });
  it('flush sends everything at once with keepalive (the page is closing)', () => {
    const { q, sent } = setup();
    q.add({ kind: 'complete', task: task('a') });
    q.add({ kind: 'delete', task: task('b') });
    q.flush(true);
    expect(sent).toEqual(['complete a keepalive', 'delete b keepalive']);
    vi.advanceTimersByTime(UNDO_DELAY_MS);
    expect(sent).toHaveLength(2);
    vi.useRealTimers();
  });
  it('a second action on the same task sends the first at once', () => {
    const { q, sent } = setup();
    q.add({ kind: 'complete', task: task('a') });
    q.add({ kind: 'delete', task: task('a') });
    expect(sent).toEqual(['complete a']);
    expect(q.list().map((a) => a.kind)).toEqual(['delete']);
    vi.useRealTimers();
  });
  it('reports a failed send', async () => {
    vi.useFakeTimers();
    const errors: string[] = [];
    const q = new UndoQueue({
      send: () => Promise.reject(new Error('boom')),
      onChange: () => undefined,
      onError: (a, e) => errors.push(`${a.task.id} ${(e as Error).message}`),
    });
    q.add({ kind: 'delete', task: task('a') });
    await vi.advanceTimersByTimeAsync(UNDO_DELAY_MS);
    expect(errors).toEqual(['a boom']);
    vi.useRealTimers();
  });
});

describe('applyWaiting', () => {
  it('hides deleted tasks and shows completed ones as Done', () => {
    const waiting: DeferredAction[] = [
      { kind: 'delete', task: task('a') },
      { kind: 'complete', task: task('b') },
    ];
    const got = applyWaiting([task('a'), task('b'), task('c')], waiting, Date.parse('2026-01-01T00:00:00Z'));
    expect(got.map((t) => `${t.id}:${t.status}`)).toEqual(['b:Done', 'c:Pending']);
    expect(got[0]!.completedAt).toBe('2026-01-01T00:00:00Z');
  });
});

describe('nextFocus', () => {
  const cases: [string, string[], string[], string, string | null][] = [
    ['the next one', ['a', 'b', 'c'], ['a', 'c'], 'b', 'c'],
    ['the previous one at the end', ['a', 'b', 'c'], ['a', 'b'], 'c', 'b'],
    ['none left', ['a'], [], 'a', null],
    ['a completed task that stays listed is skipped', ['a', 'b', 'c'], ['a', 'b', 'c'], 'b', 'c'],
  ];
  for (const [name, before, after, gone, want] of cases) {
    it(name, () => expect(nextFocus(before, after, gone)).toBe(want));
  }
});
