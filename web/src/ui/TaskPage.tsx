import { useCallback, useEffect, useRef, useState } from 'react';
import type { TaskApi } from '../api';
import { ApiError, userMessage } from '../http';
import { POLL_INTERVAL_MS, pollDelay, sortTasks, statusChanges } from '../tasks';
import type { NewTask, Task, TaskPatch } from '../types';
import { CreateTaskForm } from './CreateTaskForm';
import { useMounted, useNow } from './hooks';
import { TaskRow } from './TaskRow';

interface Props {
  api: TaskApi;
  announce: (text: string) => void;
  /** Called when the API says the session is no longer valid (401). */
  onUnauthorized: () => void;
  pollIntervalMs?: number;
}

export function TaskPage({ api, announce, onUnauthorized, pollIntervalMs = POLL_INTERVAL_MS }: Props) {
  const mounted = useMounted();
  const [tasks, setTasks] = useState<Task[] | null>(null);
  const [loads, setLoads] = useState(0);
  const [loadError, setLoadError] = useState('');
  const [actionError, setActionError] = useState('');
  const tasksRef = useRef<Task[] | null>(null);
  // Every load and every change bumps this; a load that finishes after a newer
  // load or change started is stale and is dropped.
  const generation = useRef(0);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const now = useNow(tasks?.some((t) => t.status === 'Pending') ?? false);

  const replaceTasks = useCallback((next: Task[]) => {
    tasksRef.current = next;
    setTasks(next);
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
      if (before) statusChanges(before, list).forEach(announce);
      replaceTasks(list);
      setLoadError('');
    } catch (err) {
      if (!mounted.current || mine !== generation.current) return;
      setLoadError(errorText(err));
    } finally {
      if (mounted.current && mine === generation.current) setLoads((n) => n + 1);
    }
  }, [api, announce, errorText, mounted, replaceTasks]);

  useEffect(() => {
    void load();
  }, [load]);

  // Poll while any task is Pending; `loads` re-arms the timer after each load,
  // including a failed one.
  useEffect(() => {
    if (tasks === null) return;
    const delay = pollDelay(tasks, pollIntervalMs);
    if (delay === null) return;
    const timer = setTimeout(() => void load(), delay);
    return () => clearTimeout(timer);
  }, [tasks, loads, load, pollIntervalMs]);

  /** Runs a change, drops loads already in flight, and applies the result locally. */
  async function change<T>(run: () => Promise<T>, apply: (list: Task[], result: T) => Task[]): Promise<T> {
    generation.current++;
    const result = await run();
    generation.current++;
    if (mounted.current) replaceTasks(apply(tasksRef.current ?? [], result));
    return result;
  }

  async function create(input: NewTask) {
    const created = await change(() => api.createTask(input), (list, t) => [...list.filter((x) => x.id !== t.id), t]);
    announce(`Task "${created.title}" added.`);
  }

  async function rowAction(run: () => Promise<void>) {
    setActionError('');
    try {
      await run();
    } catch (err) {
      if (mounted.current) setActionError(errorText(err));
      // The task may have changed under us (409 when it expired): refresh.
      void load();
    }
  }

  const complete = (t: Task) =>
    rowAction(async () => {
      const done = await change(() => api.updateTask(t.id, { status: 'done' }), (list, u) => list.map((x) => (x.id === u.id ? u : x)));
      announce(`Task "${done.title}" is done.`);
    });

  const remove = (t: Task) =>
    rowAction(async () => {
      await change(() => api.deleteTask(t.id), (list) => list.filter((x) => x.id !== t.id));
      announce(`Task "${t.title}" deleted.`);
      headingRef.current?.focus();
    });

  async function save(t: Task, patch: TaskPatch) {
    setActionError('');
    try {
      const u = await change(() => api.updateTask(t.id, patch), (list, u) => list.map((x) => (x.id === u.id ? u : x)));
      announce(`Task "${u.title}" saved.`);
    } catch (err) {
      void load();
      throw err;
    }
  }

  const sorted = tasks ? sortTasks(tasks) : null;

  return (
    <>
      <CreateTaskForm onCreate={create} errorText={errorText} />
      <section className="card" aria-labelledby="tasks-heading" aria-busy={tasks === null}>
        <h2 id="tasks-heading" ref={headingRef} tabIndex={-1}>
          Tasks
        </h2>
        <p className="error" role="alert" data-testid="tasks-error">
          {actionError || loadError}
        </p>
        {sorted === null ? (
          <p className="muted" data-testid="tasks-loading">
            Loading tasks…
          </p>
        ) : sorted.length === 0 ? (
          <p className="muted" data-testid="tasks-empty">
            No tasks yet. Add one above.
          </p>
        ) : (
          <ul className="tasks" aria-label="Tasks" data-testid="task-list">
            {sorted.map((t) => (
              <TaskRow key={t.id} task={t} now={now} onComplete={complete} onDelete={remove} onSave={save} errorText={errorText} />
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
