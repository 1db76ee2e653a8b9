// The problem a synchronous check throws, for suites that call the validators directly.
import { ProblemError } from '../../src/http/errors.js';

/** The ProblemError `fn` throws; anything else thrown passes through, and no throw fails the test. */
export function problemOf(fn: () => unknown): ProblemError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error('expected a problem');
}
