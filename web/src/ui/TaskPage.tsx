import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { TaskApi } from '../api';
import { formatShort } from '../duetime';
import { ApiError, GENERIC_NETWORK_MESSAGE, userMessage } from '../http';
import { filterTasks, POLL_INTERVAL_MS, pollDelay, statusChanges, TABS, type TaskFormValues, type TaskTab, tabCounts } from '../tasks';
import type { NewTask, Task, TaskPatch } from '../types';
import { applyWaiting, type DeferredAction, nextFocus, UndoQueue } from '../undo';
import { CreateTaskForm } from './CreateTaskForm';
import { useHashTask, useMounted, useVisible } from './hooks';
import { TaskForm } from './TaskForm';
import { quoted, TaskRow } from './TaskRow';

/** Rows shown per page of a tab; "Show more" adds as many again. */
export const PAGE_SIZE = 20;

interface Props {
  api: TaskApi;
  announce: (text: string) => void;
  /** Called when the API says the session is no longer valid (401). */
  onUnauthorized: () => void;
  pollIntervalMs?: number;
  /** How long Complete and Delete wait for an Undo. Default: UNDO_DELAY_MS. */
  undoDelayMs?: number;
  /** Focus the new task's title at once (right after sign-in). */
  autoFocus?: boolean;
}

interface ExpiredDraft {
  task: Task;
  values: TaskFormValues;
}

export function TaskPage({ api, announce, onUnauthorized, pollIntervalMs = POLL_INTERVAL_MS, undoDelayMs, autoFocus }: Props) {
  const mounted = useMounted();
  const visible = useVisible();
  const hashTask = useHashTask();
  const [tasks, setTasks] = useState<Task[] | null>(null);
  const [loads, setLoads] = useState(0);
  const [loadError, setLoadError] = useState('');
  const [actionError, setActionError] = useState('');
  const [successes, setSuccesses] = useState(0);
  const [waiting, setWaiting] = useState<DeferredAction[]>([]);
  const [tab, setTab] = useState<TaskTab>('Pending');
  const [query, setQuery] = useState('');
  const [limit, setLimit] = useState(PAGE_SIZE);
  const [highlight, setHighlight] = useState<string | null>(null);
  const [linkNotice, setLinkNotice] = useState('');
  const [expiredDraft, setExpiredDraft] = useState<ExpiredDraft | null>(null);
  const [recreatingDraft, setRecreatingDraft] = useState(false);
  const [focusId, setFocusId] = useState<{ id: string | null } | null>(null);
  const tasksRef = useRef<Task[] | null>(null);
  const drafts = useRef(new Map<string, TaskFormValues>());
  // Every load and every change bumps this; a load that finishes after a newer
  // load or change started is stale and is dropped.
  const generation = useRef(0);
  const headingRef = useRef<HTMLHeadingElement>(null);

  const replaceTasks = useCallback((next: Task[]) => {
    tasksRef.current = next;
    setTasks(next);
  }, []);

  const succeeded = useCallback(() => {
    setSuccesses((n) => n + 1);
    // A "could not reach the server" is stale once a request got through.
    setLoadError((e) => (e === GENERIC_NETWORK_MESSAGE ? '' : e));
    setActionError((e) => (e === GENERIC_NETWORK_MESSAGE ? '' : e));
  }, []);

  const errorText = useCallback(
    (err: unknown) => {
      if (err instanceof ApiError && err.status === 401) onUnauthorized();
      return userMessage(err);
    },
    [onUnauthorized],
  );

  const load = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const list = await api.listAllTasks();
      if (!mounted.current || mine !== generation.current) return;
      const before = tasksRef.current;
      if (before) {
        statusChanges(before, list).forEach(announce);
        // A task that expired while its edit form was open: keep what was typed.
        for (const t of list) {
          const draft = drafts.current.get(t.id);
          if (draft && t.status !== 'Pending') {
            drafts.current.delete(t.id);
            if (t.status === 'Expired') setExpiredDraft({ task: t, values: draft });
          }
        }
      }
      replaceTasks(list);
      setLoadError('');
      succeeded();
    } catch (err) {
      if (!mounted.current || mine !== generation.current) return;
      setLoadError(errorText(err));
    } finally {
      if (mounted.current && mine === generation.current) setLoads((n) => n + 1);
    }
  }, [api, announce, errorText, mounted, replaceTasks, succeeded]);

  useEffect(() => {
    void load();
  }, [load]);

  // Poll only while the page is visible, just after the next deadline (and at
  // most a minute apart); `loads` re-arms the timer after each load. Coming
  // back to the page reloads at once.
  const wasVisible = useRef(visible);
  useEffect(() => {
    if (visible && !wasVisible.current) void load();
    wasVisible.current = visible;
  }, [visible, load]);
  useEffect(() => {
    if (tasks === null || !visible) return;
    const delay = pollDelay(tasks, Date.now(), pollIntervalMs);
    if (delay === null) return;
    const timer = setTimeout(() => void load(), delay);
    return () => clearTimeout(timer);
  }, [tasks, loads, load, pollIntervalMs, visible]);

  /** Runs a change, drops loads already in flight, and applies the result locally. */
  const change = useCallback(
    async <T,>(run: () => Promise<T>, apply: (list: Task[], result: T) => Task[]): Promise<T> => {
      generation.current++;
      const result = await run();
      generation.current++;
      if (mounted.current) {
        replaceTasks(apply(tasksRef.current ?? [], result));
        succeeded();
      }
      return result;
    },
    [mounted, replaceTasks, succeeded],
  );

  // Complete and Delete wait for an Undo; the queue sends them later, or at
  // once with keepalive when the page goes away.
  const queueRef = useRef<UndoQueue | null>(null);
  if (queueRef.current === null) {
    queueRef.current = new UndoQueue({
      ...(undoDelayMs !== undefined ? { delayMs: undoDelayMs } : {}),
      onChange: (w) => {
        if (mounted.current) setWaiting(w);
      },
      send: async (a, keepalive) => {
        const opts = keepalive ? { keepalive } : undefined;
        if (a.kind === 'delete') {
          await change(() => api.deleteTask(a.task.id, opts), (list) => list.filter((x) => x.id !== a.task.id));
        } else {
          await change(() => api.updateTask(a.task.id, { status: 'done' }, opts), (list, u) => list.map((x) => (x.id === u.id ? u : x)));
        }
      },
      onError: (a, err) => {
        if (!mounted.current) return;
        const verb = a.kind === 'delete' ? 'deleted' : 'completed';
        setActionError(`${quoted(a.task.title)} could not be ${verb}: ${errorText(err)}`);
        // The task may have changed under us (409 when it expired): refresh.
        void load();
      },
    });
  }
  useEffect(() => {
    const q = queueRef.current!;
    const flush = () => q.flush(true);
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') flush();
    };
    window.addEventListener('pagehide', flush);
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      window.removeEventListener('pagehide', flush);
      document.removeEventListener('visibilitychange', onVisibility);
      q.flush(false); // signing out sends what is waiting
    };
  }, []);

  const shown = useMemo(() => (tasks ? applyWaiting(tasks, waiting, Date.now()) : null), [tasks, waiting]);
  const counts = useMemo(() => tabCounts(shown ?? []), [shown]);
  const inTab = useMemo(() => (shown ? filterTasks(shown, tab, query) : null), [shown, tab, query]);
  const page = inTab ? inTab.slice(0, limit) : null;

  /** Queues an action and moves focus to the next task in the tab (scroll stays). */
  function defer(kind: DeferredAction['kind'], t: Task) {
    setActionError('');
    const before = (page ?? []).map((x) => x.id);
    queueRef.current!.add({ kind, task: t });
    const after = filterTasks(applyWaiting(tasksRef.current ?? [], queueRef.current!.list(), Date.now()), tab, query)
      .slice(0, limit + 1)
      .map((x) => x.id)
      .filter((x) => x !== t.id);
    setFocusId({ id: nextFocus(before, after, t.id) });
    announce(kind === 'delete' ? `Task ${quoted(t.title)} deleted. Undo is available.` : `Task ${quoted(t.title)} is done. Undo is available.`);
  }

  function undo(a: DeferredAction) {
    if (!queueRef.current!.undo(a.task.id)) return;
    announce(`Undone: ${quoted(a.task.title)} is back.`);
    setTab(a.task.status);
    setFocusId({ id: a.task.id });
  }

  // Moves focus to a task's title (or the list heading) without scrolling.
  useLayoutEffect(() => {
    if (!focusId) return;
    const el = focusId.id ? document.querySelector<HTMLElement>(`li[data-task-id="${CSS.escape(focusId.id)}"] .task-title`) : null;
    (el ?? headingRef.current)?.focus({ preventScroll: true });
  }, [focusId]);

  // A link to a task (#/tasks/<id>, as in the emails): show its tab, scroll to it, highlight it.
  useEffect(() => {
    if (!hashTask || !tasks) return;
    const t = tasks.find((x) => x.id === hashTask);
    if (!t) {
      setLinkNotice('The task in the link no longer exists.');
      return;
    }
    setLinkNotice('');
    setTab(t.status);
    setQuery('');
    const at = filterTasks(tasks, t.status, '').findIndex((x) => x.id === t.id);
    setLimit((l) => Math.max(l, Math.ceil((at + 1) / PAGE_SIZE) * PAGE_SIZE));
    setHighlight(t.id);
    // Runs once per link, and once when the first load arrives.
  }, [hashTask, tasks === null]);
  useEffect(() => {
    if (!highlight) return;
    const el = document.querySelector<HTMLElement>(`li[data-task-id="${CSS.escape(highlight)}"]`);
    if (!el) return;
    el.scrollIntoView?.({ block: 'center' });
    el.querySelector<HTMLElement>('.task-title')?.focus({ preventScroll: true });
  }, [highlight]);

  async function create(input: NewTask) {
    const created = await change(() => api.createTask(input), (list, t) => [...list.filter((x) => x.id !== t.id), t]);
    announce(`Task ${quoted(created.title)} added, due ${formatShort(Date.parse(created.dueAt))}.`);
  }

  async function recreate(from: Task | null, input: NewTask, replace = false) {
    const created = await change(() => api.createTask(input), (list, t) => [...list.filter((x) => x.id !== t.id), t]);
    // Extend: the new task takes the expired one's place. The API cannot move
    // an expired task's deadline (409), so it is a new task and a delete.
    if (replace && from) {
      await change(() => api.deleteTask(from.id), (list) => list.filter((x) => x.id !== from.id)).catch((err: unknown) => {
        if (mounted.current) setActionError(`${quoted(from.title)} was extended, but the expired copy could not be deleted: ${errorText(err)}`);
      });
    }
    announce(`Task ${quoted(created.title)} ${replace ? 'extended' : 'recreated'}, due ${formatShort(Date.parse(created.dueAt))}.`);
    if (!mounted.current) return;
    if (from) setExpiredDraft((d) => (d?.task.id === from.id ? null : d));
    setRecreatingDraft(false);
    setTab('Pending');
    setQuery('');
    setHighlight(created.id);
  }

  async function save(t: Task, patch: TaskPatch) {
    setActionError('');
    try {
      const u = await change(() => api.updateTask(t.id, patch), (list, u) => list.map((x) => (x.id === u.id ? u : x)));
      announce(`Task ${quoted(u.title)} saved.`);
    } catch (err) {
      void load();
      throw err;
    }
  }

  const onDraft = useCallback((t: Task, v: TaskFormValues | null) => {
    if (v) drafts.current.set(t.id, v);
    else drafts.current.delete(t.id);
  }, []);

  function clearFinished() {
    const finished = (shown ?? []).filter((t) => t.status !== 'Pending');
    if (finished.length === 0) return;
    for (const t of finished) queueRef.current!.add({ kind: 'delete', task: t });
    announce(`${finished.length} done and expired ${finished.length === 1 ? 'task' : 'tasks'} cleared. Undo is available.`);
    setFocusId({ id: null });
  }

  return (
    <>
      <CreateTaskForm onCreate={create} errorText={errorText} successes={successes} {...(autoFocus ? { autoFocus } : {})} />
      <section className="card" aria-labelledby="tasks-heading" aria-busy={tasks === null}>
        <div className="list-head">
          <h2 id="tasks-heading" ref={headingRef} tabIndex={-1}>
            Tasks
          </h2>
          <button type="button" onClick={clearFinished} disabled={counts.Done + counts.Expired === 0} data-testid="clear-finished">
            Clear done and expired
          </button>
        </div>
        <div className="filters">
          <div className="tabs" role="group" aria-label="Show tasks">
            {TABS.map((t) => (
              <button
                key={t}
                type="button"
                className={`tab tab-${t.toLowerCase()}`}
                aria-pressed={tab === t}
                onClick={() => {
                  setTab(t);
                  setLimit(PAGE_SIZE);
                }}
                data-testid={`tab-${t.toLowerCase()}`}
              >
                {t} ({counts[t]})
              </button>
            ))}
          </div>
          <div className="search">
            <label htmlFor="task-search">Search titles</label>
            <input id="task-search" type="search" value={query} onChange={(e) => setQuery(e.target.value)} autoComplete="off" data-testid="task-search" />
          </div>
        </div>
        <p className="error" role="alert" data-testid="tasks-error">
          {actionError || loadError}
        </p>
        <p className="info" role="status" data-testid="link-notice">
          {linkNotice}
        </p>
        {expiredDraft ? (
          <div className="notice" role="alert" data-testid="expired-while-editing">
            <p>
              {quoted(expiredDraft.task.title)} expired while you were editing it. What you typed is kept
              {expiredDraft.values.due ? ` (due ${expiredDraft.values.due.replace('T', ' ')})` : ''}.
            </p>
            {recreatingDraft ? (
              <TaskForm
                heading={`Recreate ${quoted(expiredDraft.task.title)}`}
                headingLevel={3}
                submitLabel="Recreate"
                busyLabel="Recreating…"
                initial={expiredDraft.values}
                onCreate={(input) => recreate(expiredDraft.task, input)}
                onCancel={() => setRecreatingDraft(false)}
                errorText={errorText}
                autoFocus
                testIdPrefix="recreate-draft"
                className="edit"
              />
            ) : (
              <div className="actions">
                <button type="button" className="primary" onClick={() => setRecreatingDraft(true)}>
                  Recreate with my changes
                </button>
                <button type="button" onClick={() => setExpiredDraft(null)}>
                  Dismiss
                </button>
              </div>
            )}
          </div>
        ) : null}
        {page === null ? (
          <p className="muted" data-testid="tasks-loading">
            Loading tasks…
          </p>
        ) : page.length === 0 ? (
          <p className="muted" data-testid="tasks-empty">
            {query ? `No ${tab.toLowerCase()} task matches “${query}”.` : tab === 'Pending' && (shown ?? []).length === 0 ? 'No tasks yet. Add one above.' : `No ${tab.toLowerCase()} tasks.`}
          </p>
        ) : (
          <ul className="tasks" aria-label={`${tab} tasks`} data-testid="task-list">
            {page.map((t) => (
              <TaskRow
                key={t.id}
                task={t}
                onComplete={(x) => defer('complete', x)}
                onDelete={(x) => defer('delete', x)}
                onSave={save}
                onRecreate={recreate}
                onDraft={onDraft}
                errorText={errorText}
                highlighted={highlight === t.id}
              />
            ))}
          </ul>
        )}
        {inTab && inTab.length > limit ? (
          <button type="button" onClick={() => setLimit((l) => l + PAGE_SIZE)} data-testid="show-more">
            Show {Math.min(PAGE_SIZE, inTab.length - limit)} more ({inTab.length - limit} not shown)
          </button>
        ) : null}
      </section>
      <div className="toasts" data-testid="toasts">
        {waiting.length > 0 ? <UndoToast waiting={waiting} onUndo={(list) => list.forEach(undo)} /> : null}
      </div>
    </>
  );
}

function UndoToast({ waiting, onUndo }: { waiting: DeferredAction[]; onUndo: (a: DeferredAction[]) => void }) {
  const last = waiting[waiting.length - 1]!;
  const text =
    waiting.length > 1
      ? `${waiting.length} changes wait to be sent.`
      : last.kind === 'delete'
        ? `Deleted ${quoted(last.task.title)}.`
        : `Completed ${quoted(last.task.title)}.`;
  return (
    <div className="toast" data-testid="undo-toast">
      <span>{text}</span>
      <button type="button" onClick={() => onUndo(waiting)} aria-label={waiting.length > 1 ? `Undo all ${waiting.length} changes` : `Undo: ${text}`}>
        Undo
      </button>
    </div>
  );
}
