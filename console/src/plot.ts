// Canvas drawing without a chart library: a heatmap (one canvas pixel per value, scaled by CSS), its
// colour bar, a line plot and a bar chart. Colours are viridis (readable in grey and by most colour-blind eyes).
const VIRIDIS = [
  [68, 1, 84],
  [72, 40, 120],
  [62, 74, 137],
  [49, 104, 142],
  [38, 130, 142],
  [31, 158, 137],
  [53, 183, 121],
  [109, 205, 89],
  [180, 222, 44],
  [253, 231, 37],
];

/** The colour of t in [0, 1]. */
export function colour(t: number): [number, number, number] {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  const a = VIRIDIS[i];
  const b = VIRIDIS[i + 1];
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
}

export interface Range {
  min: number;
  max: number;
}

export function rangeOf(data: ArrayLike<number>): Range {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return Number.isFinite(min) ? { min, max } : { min: 0, max: 0 };
}

/** rows x cols values (C order) drawn one pixel each; the canvas takes the grid's size. */
export function drawHeatmap(canvas: HTMLCanvasElement, rows: number, cols: number, data: ArrayLike<number>, range = rangeOf(data)): Range {
  canvas.width = cols;
  canvas.height = rows;
  const ctx = canvas.getContext('2d')!;
  const img = ctx.createImageData(cols, rows);
  const span = range.max - range.min || 1;
  for (let i = 0; i < rows * cols; i++) {
    const [r, g, b] = colour((data[i] - range.min) / span);
    img.data[4 * i] = r;
    img.data[4 * i + 1] = g;
    img.data[4 * i + 2] = b;
    img.data[4 * i + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  return range;
}

/** A vertical colour bar, the maximum at the top. */
export function drawColourBar(canvas: HTMLCanvasElement): void {
  canvas.width = 1;
  canvas.height = 256;
  const ctx = canvas.getContext('2d')!;
  const img = ctx.createImageData(1, 256);
  for (let y = 0; y < 256; y++) {
    const [r, g, b] = colour(1 - y / 255);
    img.data.set([r, g, b, 255], 4 * y);
  }
  ctx.putImageData(img, 0, 0);
}

function prepare(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext('2d')!;
  ctx.scale(ratio, ratio);
  ctx.clearRect(0, 0, width, height);
  ctx.font = '12px system-ui, sans-serif';
  return ctx;
}

/** y against index, with the range written on the left axis. */
export function drawLine(canvas: HTMLCanvasElement, data: ArrayLike<number>, width = 720, height = 260): Range {
  const ctx = prepare(canvas, width, height);
  const range = rangeOf(data);
  const left = 70;
  const pad = 12;
  const w = width - left - pad;
  const h = height - 2 * pad;
  const span = range.max - range.min || 1;
  ctx.strokeStyle = '#888';
  ctx.strokeRect(left, pad, w, h);
  ctx.fillStyle = '#222';
  ctx.fillText(fmt(range.max), 4, pad + 10);
  ctx.fillText(fmt(range.min), 4, pad + h);
  ctx.strokeStyle = '#2a5db0';
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  for (let i = 0; i < data.length; i++) {
    const x = left + (data.length > 1 ? (i / (data.length - 1)) * w : w / 2);
    const y = pad + h - ((data[i] - range.min) / span) * h;
    if (i === 0) ctx.moveTo(x, y);
    else ctx.lineTo(x, y);
  }
  ctx.stroke();
  return range;
}

/** One bar per value (the train's ranks r_0 .. r_d), labelled with the value above it. */
export function drawBars(canvas: HTMLCanvasElement, values: number[], width = 720, height = 180): void {
  const ctx = prepare(canvas, width, height);
  const max = Math.max(1, ...values);
  const pad = 18;
  const bw = (width - 2 * pad) / Math.max(1, values.length);
  values.forEach((v, i) => {
    const h = ((height - 2 * pad) * v) / max;
    ctx.fillStyle = '#2a5db0';
    ctx.fillRect(pad + i * bw + 1, height - pad - h, Math.max(1, bw - 2), h);
    if (bw > 14) {
      ctx.fillStyle = '#222';
      ctx.fillText(String(v), pad + i * bw + 1, height - pad - h - 3);
    }
  });
  ctx.strokeStyle = '#888';
  ctx.beginPath();
  ctx.moveTo(pad, height - pad);
  ctx.lineTo(width - pad, height - pad);
  ctx.stroke();
}

export function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(3) : String(Number(v.toPrecision(4)));
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return 'unlimited';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}
