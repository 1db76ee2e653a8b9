// The one way a view loads: the call runs again when its inputs change or on reload(); an answer that
// arrives after the inputs moved on is dropped, so a slow old answer never overwrites a newer one;
// an error clears what was shown, so that no stale data stands beside it.
import { useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  busy: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, inputs: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setBusy(true);
    load()
      .then((d) => live && (setData(d), setError(null)))
      .catch((e) => live && (setData(null), setError(e)))
      .finally(() => live && setBusy(false));
    return () => void (live = false);
  }, [...inputs, tick]);
  return { data, error, busy, reload: () => setTick((t) => t + 1) };
}
