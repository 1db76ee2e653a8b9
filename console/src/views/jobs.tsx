// Tenant: simulations. The form for each solver is built from the submit request's schema in the
// service's OpenAPI document, the one published source of every param's range and default; running
// jobs are polled for live progress; outputs open as pictures, snapshots as an animation.
import { useEffect, useRef, useState } from 'preact/hooks';
import { enc, openApi, type Client, type Json } from '../api';
import { Busy, ErrorNote, Heatmap } from '../components';
import { useLoad } from '../load';
import { HEATMAP_CELLS, readPart } from '../part';
import { rangeOf, type Range } from '../plot';
import type { NdArray } from '../npy';

/** The field drawn as an animation over a job's snapshots, by solver. */
const ANIMATED: Record<string, string> = { navier_stokes_2d: 'vorticity', euler_2d: 'rho' };
const POLL_MS = 1000;
const MAX_FRAMES = 60;

interface Solver {
  name: string;
  params: Json;
  required: string[];
}

export function solversOf(doc: Json): Solver[] {
  const submit = doc.paths['/v1/simulation/submit'].post.requestBody.content['application/json'].schema;
  return (submit.oneOf as Json[]).map((v) => ({
    name: v.properties.solver.enum[0],
    params: v.properties.params.properties,
    required: v.properties.params.required ?? [],
  }));
}

function ParamInput({
  name,
  schema,
  required,
  value,
  set,
}: {
  name: string;
  schema: Json;
  required: boolean;
  value: string;
  set: (v: string) => void;
}) {
  const id = `param-${name}`;
  const hint = [
    schema.minimum !== undefined || schema.exclusiveMinimum !== undefined || schema.maximum !== undefined
      ? `${schema.exclusiveMinimum !== undefined ? `> ${schema.exclusiveMinimum}` : `≥ ${schema.minimum ?? '−∞'}`}, ${schema.exclusiveMaximum !== undefined ? `< ${schema.exclusiveMaximum}` : `≤ ${schema.maximum ?? '∞'}`}`
      : '',
    schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : '',
    schema.description ?? '',
  ]
    .filter(Boolean)
    .join('; ');
  const onInput = (e: Event) => set((e.target as HTMLInputElement).value);
  let control;
  if (schema.enum)
    control = (
      <select id={id} name={name} value={value} onChange={onInput} aria-describedby={`${id}-hint`}>
        {!required && <option value="">(default)</option>}
        {(schema.enum as string[]).map((v) => (
          <option value={v} key={v}>
            {v}
          </option>
        ))}
      </select>
    );
  else if (schema.type === 'integer' || schema.type === 'number')
    control = (
      <input
        id={id}
        name={name}
        type="number"
        required={required}
        min={schema.minimum ?? schema.exclusiveMinimum}
        max={schema.maximum ?? schema.exclusiveMaximum}
        step={schema.type === 'integer' ? 1 : 'any'}
        placeholder={schema.default !== undefined ? String(schema.default) : ''}
        value={value}
        onInput={onInput}
        aria-describedby={`${id}-hint`}
      />
    );
  else
    control = (
      <input
        id={id}
        name={name}
        type="text"
        required={required}
        value={value}
        onInput={onInput}
        aria-describedby={`${id}-hint`}
        placeholder={schema.type === 'string' ? '' : 'JSON'}
      />
    );
  return (
    <div class="field">
      <label for={id}>
        {name}
        {required ? ' (required)' : ''}
      </label>
      {control}
      <small id={`${id}-hint`}>{hint}</small>
    </div>
  );
}

function paramValue(schema: Json, text: string): unknown {
  if (schema.type === 'integer' || schema.type === 'number') return Number(text);
  if (schema.type === 'string' || schema.enum) return text;
  return JSON.parse(text);
}

/** A solver's starting values: each required param at its smallest, so the smallest run is one click away. */
function startingValues(s: Solver | undefined): Record<string, string> {
  if (!s) return {};
  return Object.fromEntries(s.required.map((p) => [p, s.params[p].minimum !== undefined ? String(s.params[p].minimum) : '']));
}

function SubmitForm({ api, namespace, submitted }: { api: Client; namespace: string; submitted: () => void }) {
  const [solvers, setSolvers] = useState<Solver[] | null>(null);
  const [solver, setSolver] = useState('poisson_2d');
  const [values, setValues] = useState<Record<string, string>>({});
  const [ns, setNs] = useState(namespace);
  const [prefix, setPrefix] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  useEffect(() => {
    openApi()
      .then((d) => {
        const all = solversOf(d);
        setSolvers(all);
        setValues(startingValues(all.find((s) => s.name === solver)));
      })
      .catch(setError);
  }, []);
  const current = solvers?.find((s) => s.name === solver);
  // The values change with the solver in the same render as its fields: an effect after the paint
  // would overwrite what was typed into the new fields before it ran.
  const choose = (name: string) => {
    setSolver(name);
    setValues(startingValues(solvers?.find((s) => s.name === name)));
  };
  async function submit(e: Event) {
    e.preventDefault();
    if (!current) return;
    try {
      const params: Json = {};
      for (const [name, text] of Object.entries(values)) if (text !== '') params[name] = paramValue(current.params[name], text);
      const body: Json = { solver, namespace: ns, params };
      if (prefix) body.output_key_prefix = prefix;
      const r = await api.post('/v1/simulation/submit', body);
      setError(null);
      setNote(`Job ${r.job_id} queued.`);
      submitted();
    } catch (err) {
      setError(err);
      setNote('');
    }
  }
  if (!solvers) return <Busy when={!error}>Reading the solvers' parameters…</Busy>;
  return (
    <form onSubmit={submit} aria-labelledby="submit-title" data-testid="submit-form">
      <h3 id="submit-title">Run a solver</h3>
      <div class="row">
        <label>
          Solver{' '}
          <select name="solver" value={solver} onChange={(e) => choose((e.target as HTMLSelectElement).value)}>
            {solvers.map((s) => (
              <option value={s.name} key={s.name}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Namespace <input name="job-namespace" value={ns} onInput={(e) => setNs((e.target as HTMLInputElement).value)} required />
        </label>
        <label>
          Output key prefix{' '}
          <input
            name="output_key_prefix"
            value={prefix}
            placeholder={solver}
            onInput={(e) => setPrefix((e.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <div class="fields">
        {current &&
          Object.entries(current.params).map(([name, schema]) => (
            <ParamInput
              key={`${solver}.${name}`}
              name={name}
              schema={schema as Json}
              required={current.required.includes(name)}
              value={values[name] ?? ''}
              set={(v) => setValues((vs) => ({ ...vs, [name]: v }))}
            />
          ))}
      </div>
      <button type="submit">Submit</button>
      <ErrorNote error={error} />
      {note && <p role="status">{note}</p>}
    </form>
  );
}

function Animation({ api, job, field }: { api: Client; job: Json; field: string }) {
  const [frames, setFrames] = useState<{ key: string; array: NdArray }[] | null>(null);
  const [range, setRange] = useState<Range | null>(null);
  const [at, setAt] = useState(0);
  const [playing, setPlaying] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const timer = useRef<number>(0);
  useEffect(() => {
    const base = `${job.output_key_prefix}/${field}`;
    const step = (k: string) => Number(k.slice(base.length + '/step_'.length));
    let keys = (job.outputs as string[]).filter((k) => k.startsWith(`${base}/step_`)).sort((a, b) => step(a) - step(b));
    if ((job.outputs as string[]).includes(base)) keys.push(base);
    if (keys.length > MAX_FRAMES)
      keys = Array.from({ length: MAX_FRAMES }, (_, i) => keys[Math.round((i * (keys.length - 1)) / (MAX_FRAMES - 1))]);
    (async () => {
      const out: { key: string; array: NdArray }[] = [];
      for (const key of keys) {
        const info = await api.get(`/v1/get/${enc(job.namespace)}/${enc(key)}`);
        out.push({ key, array: await readPart(api, { namespace: job.namespace, key }, info.shape, HEATMAP_CELLS) });
      }
      // One colour scale for every frame, so that colours compare across time.
      const all = out.map((f) => rangeOf(f.array.data));
      setRange({ min: Math.min(...all.map((r) => r.min)), max: Math.max(...all.map((r) => r.max)) });
      setFrames(out);
    })().catch(setError);
  }, [job.job_id]);
  useEffect(() => {
    if (!frames || !playing) return;
    timer.current = window.setInterval(() => setAt((i) => (i + 1) % frames.length), 250);
    return () => window.clearInterval(timer.current);
  }, [frames, playing]);
  if (error) return <ErrorNote error={error} />;
  if (!frames || !range) return <Busy when>Loading the snapshots of {field}…</Busy>;
  const frame = frames[Math.min(at, frames.length - 1)];
  return (
    <div class="animation">
      <p>
        {field}: {frame.key} ({at + 1} of {frames.length})
      </p>
      <Heatmap array={frame.array} label={frame.key} range={range} testId="animation" />
      <div class="row">
        <button type="button" onClick={() => setPlaying(!playing)}>
          {playing ? 'Pause' : 'Play'}
        </button>
        <label>
          Frame{' '}
          <input
            type="range"
            min={0}
            max={frames.length - 1}
            value={at}
            onInput={(e) => (setPlaying(false), setAt(Number((e.target as HTMLInputElement).value)))}
          />
        </label>
      </div>
    </div>
  );
}

function JobRow({
  api,
  job,
  refresh,
  openOutput,
}: {
  api: Client;
  job: Json;
  refresh: () => void;
  openOutput: (ns: string, key: string) => void;
}) {
  const [error, setError] = useState<unknown>(null);
  const [animate, setAnimate] = useState(false);
  const p = job.progress ?? {};
  const live = job.status === 'queued' || job.status === 'running';
  const field = ANIMATED[job.solver];
  const finals = (job.outputs ?? []).filter((k: string) => !/\/step_\d+$/.test(k));
  return (
    <li class={`job ${job.status}`} data-testid="job" data-job={job.job_id} data-status={job.status}>
      <p>
        <b>{job.solver}</b> <code>{job.job_id}</code> → {job.namespace}/{job.output_key_prefix} — <span class="status">{job.status}</span>
        {p.steps_total ? ` — step ${p.steps_completed} of ${p.steps_total}` : ''}
        {p.elapsed_s !== undefined ? `, ${p.elapsed_s.toFixed(1)} s` : ''}
      </p>
      {live && <progress max={p.steps_total || 1} value={p.steps_completed ?? 0} aria-label={`progress of job ${job.job_id}`} />}
      {live && (
        <button
          type="button"
          onClick={() =>
            api
              .post(`/v1/simulation/cancel/${enc(job.job_id)}`, {})
              .then(refresh)
              .catch(setError)
          }
        >
          Cancel
        </button>
      )}
      {job.error && (
        <p class="error">
          {job.error.code}: {job.error.detail}
        </p>
      )}
      {finals.length > 0 && (
        <p>
          Outputs:{' '}
          {finals.map((k: string) => (
            <button type="button" class="link" key={k} onClick={() => openOutput(job.namespace, k)}>
              {k}
            </button>
          ))}
          {field && (job.outputs as string[]).some((k) => k.startsWith(`${job.output_key_prefix}/${field}/step_`)) && (
            <button type="button" onClick={() => setAnimate(!animate)}>
              {animate ? 'Hide' : 'Animate'} {field}
            </button>
          )}
        </p>
      )}
      {animate && <Animation api={api} job={job} field={field} />}
      <ErrorNote error={error} />
    </li>
  );
}

export function Jobs({ api, namespace, openOutput }: { api: Client; namespace: string; openOutput: (ns: string, key: string) => void }) {
  const { data, error, busy, reload: refresh } = useLoad(() => api.get<{ jobs: Json[] }>('/v1/simulation/list?limit=20'), []);
  // The last list that loaded: a failed poll (a 429 or 503 on the way) shows its error but neither
  // empties the list nor stops the polling of jobs that were still queued or running.
  const last = useRef<Json[] | null>(null);
  if (data) last.current = data.jobs;
  const jobs = data?.jobs ?? last.current;
  const running = jobs?.some((j) => j.status === 'queued' || j.status === 'running');
  useEffect(() => {
    if (!running || busy) return;
    const t = window.setTimeout(refresh, POLL_MS);
    return () => window.clearTimeout(t);
  }, [data, error, busy]);
  return (
    <section aria-labelledby="jobs-title">
      <h2 id="jobs-title">Simulations</h2>
      <SubmitForm api={api} namespace={namespace} submitted={refresh} />
      <h3>Your jobs</h3>
      <ErrorNote error={error} />
      <Busy when={busy && !jobs} />
      {jobs && jobs.length === 0 && <p>No jobs yet.</p>}
      <ul class="jobs" aria-live="polite">
        {jobs?.map((j) => (
          <JobRow key={j.job_id} api={api} job={j} refresh={refresh} openOutput={openOutput} />
        ))}
      </ul>
    </section>
  );
}
