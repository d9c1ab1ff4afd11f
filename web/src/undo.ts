// Complete and Delete wait a few seconds before they reach the server, so an
// "Undo" can take them back. The queue knows nothing about React: it holds
// the actions, sends each one when its delay ends, and sends everything at
// once (with keepalive) when the page goes away.
import type { Task } from './types';

/** How long Complete and Delete wait for an Undo. */
export const UNDO_DELAY_MS = 6000;

export type DeferredKind = 'complete' | 'delete';

export interface DeferredAction {
  kind: DeferredKind;
  task: Task;
}

export interface UndoQueueOptions {
  delayMs?: number;
  /** Sends one action; keepalive is true when the page is closing. */
  send: (a: DeferredAction, keepalive: boolean) => Promise<void>;
  /** Called after the set of waiting actions changed. */
  onChange: (waiting: DeferredAction[]) => void;
  /** Called when a send fails (the action is already out of the queue). */
  onError?: (a: DeferredAction, err: unknown) => void;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (t: unknown) => void;
}

export class UndoQueue {
  private readonly waiting = new Map<string, { action: DeferredAction; timer: unknown }>();
  private readonly opts: Required<Omit<UndoQueueOptions, 'onError'>> & Pick<UndoQueueOptions, 'onError'>;

  constructor(opts: UndoQueueOptions) {
    this.opts = {
      delayMs: UNDO_DELAY_MS,
      setTimer: (fn, ms) => setTimeout(fn, ms),
      clearTimer: (t) => clearTimeout(t as ReturnType<typeof setTimeout>),
      ...opts,
    };
  }

  /** The actions still waiting, oldest first. */
  list(): DeferredAction[] {
    return [...this.waiting.values()].map((w) => w.action);
  }

  /**
   * Queues an action. A second action for the same task sends the first one
   * at once (a Delete after a Complete keeps both).
   */
  add(action: DeferredAction): void {
    if (this.waiting.has(action.task.id)) this.sendNow(action.task.id, false);
    const timer = this.opts.setTimer(() => this.sendNow(action.task.id, false), this.opts.delayMs);
    this.waiting.set(action.task.id, { action, timer });
    this.opts.onChange(this.list());
  }

  /** Takes the action on the task back; false when it was already sent. */
  undo(taskId: string): boolean {
    const w = this.waiting.get(taskId);
    if (!w) return false;
    this.opts.clearTimer(w.timer);
    this.waiting.delete(taskId);
    this.opts.onChange(this.list());
    return true;
  }

  /** Sends every waiting action now: keepalive when the page is closing. */
  flush(keepalive: boolean): void {
    for (const id of [...this.waiting.keys()]) this.sendNow(id, keepalive);
  }

  private sendNow(taskId: string, keepalive: boolean): void {
    const w = this.waiting.get(taskId);
    if (!w) return;
    this.opts.clearTimer(w.timer);
    this.waiting.delete(taskId);
    this.opts.onChange(this.list());
    this.opts.send(w.action, keepalive).catch((err: unknown) => this.opts.onError?.(w.action, err));
  }
}

/**
 * The list as the user should see it while actions wait: deleted tasks are
 * gone and completed ones are Done.
 */
export function applyWaiting(tasks: readonly Task[], waiting: readonly DeferredAction[], now: number): Task[] {
  if (waiting.length === 0) return [...tasks];
  const by = new Map(waiting.map((a) => [a.task.id, a.kind]));
  const at = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const out: Task[] = [];
  for (const t of tasks) {
    const kind = by.get(t.id);
    if (kind === 'delete') continue;
    out.push(kind === 'complete' && t.status === 'Pending' ? { ...t, status: 'Done', completedAt: at } : t);
  }
  return out;
}

/**
 * The id of the task that should get focus after the task with this id left
 * the visible list: the one after it, else the one before it, else null.
 */
export function nextFocus(before: readonly string[], after: readonly string[], goneId: string): string | null {
  const i = before.indexOf(goneId);
  if (i < 0) return after[0] ?? null;
  const rest = new Set(after);
  for (let j = i + 1; j < before.length; j++) if (rest.has(before[j]!) && before[j] !== goneId) return before[j]!;
  for (let j = i - 1; j >= 0; j--) if (rest.has(before[j]!)) return before[j]!;
  return null;
}
