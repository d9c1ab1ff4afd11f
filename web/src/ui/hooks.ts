import { type RefObject, useCallback, useEffect, useRef, useState } from 'react';

/** The current time in milliseconds, refreshed every second while active. */
export function useNow(active: boolean, tickMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const id = setInterval(() => setNow(Date.now()), tickMs);
    return () => clearInterval(id);
  }, [active, tickMs]);
  return now;
}

/**
 * Text for a polite live region. Saying the same sentence twice still gets
 * read, because each message is rendered under a fresh key.
 */
export function useAnnouncer(): [{ text: string; key: number }, (text: string) => void] {
  const [msg, setMsg] = useState({ text: '', key: 0 });
  const announce = useCallback((text: string) => setMsg((m) => ({ text, key: m.key + 1 })), []);
  return [msg, announce];
}

/** True while the component is mounted; guards state updates after awaits. */
export function useMounted(): RefObject<boolean> {
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  return mounted;
}

/** True while the page is visible (document.visibilityState). */
export function useVisible(): boolean {
  const [visible, setVisible] = useState(() => typeof document === 'undefined' || document.visibilityState !== 'hidden');
  useEffect(() => {
    const on = () => setVisible(document.visibilityState !== 'hidden');
    document.addEventListener('visibilitychange', on);
    return () => document.removeEventListener('visibilitychange', on);
  }, []);
  return visible;
}

/** The task id in a location hash of the form "#/tasks/<id>", or null. */
export function taskIdFromHash(hash: string): string | null {
  const m = /^#\/tasks\/([^/?#]+)$/.exec(hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

/** The task id named by the page's hash, following hashchange. */
export function useHashTask(): string | null {
  const [id, setId] = useState(() => (typeof location === 'undefined' ? null : taskIdFromHash(location.hash)));
  useEffect(() => {
    const on = () => setId(taskIdFromHash(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return id;
}
