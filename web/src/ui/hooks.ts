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
