// A counting semaphore as a function: at most `n` of the given tasks run at once, the rest wait in order.
export function limiter(n: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async function run<T>(work: () => Promise<T>): Promise<T> {
    if (running >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next)
        next(); // hand the slot over
      else running--;
    }
  };
}
