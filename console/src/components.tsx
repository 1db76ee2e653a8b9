// Small pieces every view uses: an error note, a busy line, the canvas plots as components, and the
// picture of an entry (line, heatmap or slice) read from a part sized to the canvas.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { errorText, type Client } from './api';
import { drawBars, drawColourBar, drawHeatmap, drawLine, fmt, type Range } from './plot';
import { HEATMAP_CELLS, LINE_POINTS, THUMB_CELLS, readPart, type Entry } from './part';
import type { NdArray } from './npy';
import { useLoad } from './load';

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Busy({ when, children }: { when: boolean; children?: ComponentChildren }) {
  return when ? (
    <p class="busy" role="status">
      {children ?? 'Loading…'}
    </p>
  ) : null;
}

/** A 2-D array as a heatmap with its colour bar and range. */
export function Heatmap({
  array,
  label,
  range: fixedRange,
  testId = 'heatmap',
  thumb = false,
}: {
  array: NdArray;
  label: string;
  /** The colour scale; default: the array's own range. */
  range?: Range;
  testId?: string;
  thumb?: boolean;
}) {
  const map = useRef<HTMLCanvasElement>(null);
  const bar = useRef<HTMLCanvasElement>(null);
  const [range, setRange] = useState<Range | null>(null);
  useEffect(() => {
    const [rows, cols] = array.shape.length === 2 ? array.shape : [1, array.shape[0] ?? 1];
    setRange(drawHeatmap(map.current!, rows, cols, array.data, fixedRange));
    if (bar.current) drawColourBar(bar.current);
  }, [array, fixedRange]);
  return (
    <figure class={thumb ? 'heatmap thumb' : 'heatmap'}>
      <canvas ref={map} data-testid={testId} role="img" aria-label={`${label}: heatmap, ${array.shape.join(' × ')} values`} />
      {!thumb && (
        <div class="colourbar">
          <span>{range ? fmt(range.max) : ''}</span>
          <canvas ref={bar} aria-hidden="true" />
          <span>{range ? fmt(range.min) : ''}</span>
        </div>
      )}
    </figure>
  );
}

export function LinePlot({ array, label }: { array: NdArray; label: string }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => void drawLine(ref.current!, array.data), [array]);
  return <canvas ref={ref} class="plot" data-testid="line" role="img" aria-label={`${label}: line plot of ${array.data.length} values`} />;
}

export function Bars({ values, label }: { values: number[]; label: string }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => drawBars(ref.current!, values), [values]);
  return <canvas ref={ref} class="plot" data-testid="ranks" role="img" aria-label={`${label}: ${values.join(', ')}`} />;
}

export interface EntryInfo {
  kind: string;
  shape: number[];
}

/** Index of each sliced axis (3-D and more): the last two axes not sliced are drawn. */
function defaultFixed(shape: number[], across: number): Map<number, number> {
  const fixed = new Map<number, number>();
  if (shape.length === 3) fixed.set(across, Math.floor(shape[across] / 2));
  else for (let a = 0; a < shape.length - 2; a++) fixed.set(a, Math.floor(shape[a] / 2));
  return fixed;
}

/** The picture of an entry: 1-D a line, 2-D a heatmap, 3-D and more a slice with a slider per sliced axis. */
export function Picture({ api, entry, info, cells = HEATMAP_CELLS }: { api: Client; entry: Entry; info: EntryInfo; cells?: number }) {
  const { shape } = info;
  const [across, setAcross] = useState(0);
  const [fixed, setFixed] = useState(() => defaultFixed(shape, 0));
  const drawable = info.kind === 'array' && shape.length > 0;
  const {
    data: array,
    error,
    busy,
  } = useLoad(
    async () => (drawable ? readPart(api, entry, shape, shape.length === 1 ? LINE_POINTS : cells, fixed) : null),
    [entry.namespace, entry.key, entry.version, fixed],
  );
  if (info.kind !== 'array') return <p>A blob has no picture.</p>;
  if (shape.length === 0) return <p>A scalar has no picture.</p>;
  const label = `${entry.namespace}/${entry.key}`;
  return (
    <div class="picture">
      {shape.length === 3 && (
        <label>
          Slice across axis{' '}
          <select
            value={across}
            onChange={(e) => {
              const a = Number((e.target as HTMLSelectElement).value);
              setAcross(a);
              setFixed(defaultFixed(shape, a));
            }}
          >
            {shape.map((n, a) => (
              <option value={a} key={a}>
                {a} ({n})
              </option>
            ))}
          </select>
        </label>
      )}
      {[...fixed.entries()].map(([axis, at]) => (
        <label class="slider" key={axis}>
          Axis {axis}: index {at}
          <input
            type="range"
            min={0}
            max={shape[axis] - 1}
            value={at}
            onChange={(e) => setFixed(new Map(fixed).set(axis, Number((e.target as HTMLInputElement).value)))}
          />
        </label>
      ))}
      <ErrorNote error={error} />
      <Busy when={busy && !array} />
      {array &&
        (array.shape.length === 1 ? (
          <LinePlot array={array} label={label} />
        ) : (
          <Heatmap array={array} label={label} thumb={cells <= THUMB_CELLS} testId={cells <= THUMB_CELLS ? 'thumb' : 'heatmap'} />
        ))}
    </div>
  );
}

/** A table's column headers. */
export function TableHead({ cols }: { cols: string[] }) {
  return (
    <thead>
      <tr>
        {cols.map((c) => (
          <th scope="col" key={c}>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}
