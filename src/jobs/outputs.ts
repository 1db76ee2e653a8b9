// A job's outputs on their way into storage. Each field goes through the same Oracle and compression
// as a put (domain `simulation`) as soon as it exists, but stays invisible: its blob is durable, its
// row is not. commit() makes every output visible in one transaction together with the job's
// `completed` state; discard() removes the blobs of a job that failed. A job that was stopped (cancelled,
// out of budget or quota) keeps the snapshots stored whole so far: keep() commits them with its
// `failed` state. So a job never leaves half of a step's outputs behind, and a crash leaves only
// orphan blobs (swept at start).
import type { Transaction } from '../store/transaction.js';
import type { EntryRow } from '../store/entries.js';
import type { CoresInput, PreparedEntry, PutInput } from '../entries/service.js';
import { resolveTarget } from '../entries/oracle.js';
import type { JobParams } from './job.js';
import type { SimField } from './runner.js';

/** What the writer needs of the entry service (EntryService has it). */
export interface OutputStore {
  /** Reserves the output's stored bytes against the tenant's storage quota (402 when they do not fit). */
  prepare(input: Omit<PutInput, 'namespace'>): Promise<PreparedEntry>;
  /** A field the solver produced as a train: stored as put_cores stores cores (verdict exact). */
  prepareCores(tenantId: string, input: CoresInput): Promise<PreparedEntry>;
  commitPrepared(
    tenantId: string,
    namespace: string,
    items: PreparedEntry[],
    also?: (tx: Transaction) => Promise<void>,
  ): Promise<EntryRow[]>;
  discard(items: PreparedEntry[]): Promise<void>;
}

export interface OutputJob {
  jobId: string;
  tenantId: string;
  solver: string;
  namespace: string;
  prefix: string;
  params: JobParams;
}

/** Thrown by the writer when it stops because the job is being cancelled. */
export class OutputsAborted extends Error {
  constructor() {
    super('output writing stopped: the job is being cancelled');
    this.name = 'OutputsAborted';
  }
}

const FIELD_NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

export function outputKey(prefix: string, field: string, step?: number): string {
  return step === undefined ? `${prefix}/${field}` : `${prefix}/${field}/step_${step}`;
}

export class JobOutputs {
  private readonly prepared: PreparedEntry[] = [];
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown = null;

  /**
   * `aborted`: polled before each field (true while the job is being cancelled); `onError`: called
   * once when a snapshot cannot be stored (the job should then stop).
   */
  constructor(
    private readonly store: OutputStore,
    private readonly job: OutputJob,
    private readonly aborted: () => boolean,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Keys prepared so far, in the order they were produced. */
  get keys(): string[] {
    return this.prepared.map((p) => p.key);
  }

  /**
   * Queue the snapshot fields of `step` (returns at once: the engine's callback must not wait).
   * Snapshots are stored one after another, in the order they arrive.
   */
  snapshot(step: number, t: number, fields: SimField[]): void {
    this.chain = this.chain
      .then(() => this.prepareAll(fields, step, t, true))
      .catch((err) => {
        if (this.failure === null) {
          this.failure = err;
          this.onError(err);
        }
      });
  }

  /** Wait for queued snapshots; throws the first error one of them met. */
  async drain(): Promise<void> {
    await this.chain;
    if (this.failure !== null) throw this.failure;
  }

  /** The final fields (after every queued snapshot). */
  async final(fields: SimField[], step: number, t: number | null): Promise<void> {
    await this.drain();
    await this.prepareAll(fields, step, t, false);
  }

  /** Make every prepared output visible at once, with `also` in the same transaction. */
  async commit(also: (tx: Transaction) => Promise<void>): Promise<string[]> {
    const rows = await this.store.commitPrepared(this.job.tenantId, this.job.namespace, this.prepared, also);
    return rows.map((r) => r.key);
  }

  /**
   * A stopped job's end: the snapshots stored whole so far become visible, with `also` (given their
   * keys) in the same transaction; one still being stored is stopped at its next field and dropped.
   */
  async keep(also: (tx: Transaction, keys: string[]) => Promise<void>): Promise<string[]> {
    this.failure ??= new OutputsAborted();
    await this.chain;
    const keys = this.keys;
    return this.commit((tx) => also(tx, keys));
  }

  /** Remove what was prepared (after waiting for a snapshot still being stored). */
  async discard(): Promise<void> {
    this.failure ??= new OutputsAborted();
    await this.chain;
    const items = this.prepared.splice(0);
    await this.store.discard(items);
  }

  /** Prepare every field of one step; they join `prepared` together or not at all. */
  private async prepareAll(fields: SimField[], step: number, t: number | null, snapshot: boolean): Promise<void> {
    const group: PreparedEntry[] = [];
    try {
      await this.prepareFields(group, fields, step, t, snapshot);
    } catch (err) {
      await this.store.discard(group);
      throw err;
    }
    this.prepared.push(...group);
  }

  private async prepareFields(
    group: PreparedEntry[],
    fields: SimField[],
    step: number,
    t: number | null,
    snapshot: boolean,
  ): Promise<void> {
    for (const field of fields) {
      if (this.aborted() || (snapshot && this.failure !== null)) throw this.failure ?? new OutputsAborted();
      const key = outputKey(this.job.prefix, checkField(field), snapshot ? step : undefined);
      const metadata = {
        solver: this.job.solver,
        job_id: this.job.jobId,
        field: field.name,
        step,
        t,
        n_bits: this.job.params.n_bits,
        params: this.job.params,
      };
      if (field.tt) {
        // QTT-native solvers: the cores are the field (a 512^3 field is never made dense here).
        group.push(
          await this.store.prepareCores(this.job.tenantId, {
            key,
            tt: field.tt,
            shape: [...field.shape],
            dtype: 'float64',
            layout: field.layout ?? 'interleaved',
            metadata,
            domain: 'simulation',
          }),
        );
        continue;
      }
      const data = field.data;
      group.push(
        await this.store.prepare({
          tenantId: this.job.tenantId,
          key,
          payload: {
            kind: 'array',
            dtype: 'float64',
            shape: [...field.shape],
            data: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
          },
          metadata,
          target: resolveTarget('simulation', undefined, undefined),
        }),
      );
    }
  }
}

/** A field from the engine must be a well-formed float64 array (an engine bug otherwise). */
function checkField(field: SimField): string {
  if (typeof field.name !== 'string' || !FIELD_NAME_RE.test(field.name)) {
    throw new Error(`solver produced a field with an invalid name ${JSON.stringify(field.name)}`);
  }
  const numel = field.shape.reduce((a, b) => a * b, 1);
  if (field.tt) {
    const modes = field.tt.modes.reduce((a, b) => a * b, 1);
    if (!field.shape.every((d) => Number.isSafeInteger(d) && d >= 1) || modes !== numel) {
      throw new Error(`solver field ${field.name} has shape [${field.shape.join(', ')}] but a train of ${modes} elements`);
    }
    return field.name;
  }
  if (!(field.data instanceof Float64Array)) throw new Error(`solver field ${field.name} is not a Float64Array`);
  if (!field.shape.every((d) => Number.isSafeInteger(d) && d >= 1) || numel !== field.data.length) {
    throw new Error(`solver field ${field.name} has shape [${field.shape.join(', ')}] but ${field.data.length} values`);
  }
  return field.name;
}
