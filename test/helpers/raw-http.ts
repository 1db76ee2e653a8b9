// An HTTP/1.1 request written by hand on a socket, for what fetch will not send: a body declared
// longer than what is sent (the rest trickled, or never), any header bytes, any Content-Encoding.
import net from 'node:net';

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Body bytes sent at once after the headers. */
  body?: Buffer;
  /** Content-Length to declare (default: body's length); null: declare none. */
  declaredLength?: number | null;
  /** After `body`, send `bytes` more every `everyMs` until the answer (or the declared length) comes. */
  trickle?: { bytes: number; everyMs: number };
  /** Send the body chunked (Transfer-Encoding: chunked, no Content-Length); a trickle goes on up to 256 MiB. */
  chunked?: boolean;
  /** Hold this process's event loop this long after the first write, as a busy client is held: the answer is read after the next write. */
  busyAfterSendMs?: number;
  /** Give up after this long (default 20 s). */
  timeoutMs?: number;
  /** How long after the answer `closed` waits for the server to close (default 2 s). */
  closeWaitMs?: number;
}

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON, when it is JSON. */
  body: any;
  /** From the first byte written to the last byte of the answer, milliseconds. */
  ms: number;
  /** Body bytes written before the answer came. */
  sentBytes: number;
  /** Resolves with true once the server closes the connection (false if it is still open after closeWaitMs). */
  closed: Promise<boolean>;
}

export function rawRequest(base: string, req: RawRequest): Promise<RawReply> {
  const { hostname, port } = new URL(base);
  const body = req.body ?? Buffer.alloc(0);
  const declared = req.chunked ? null : req.declaredLength === undefined ? body.length : req.declaredLength;
  const lines = [`${req.method} ${req.path} HTTP/1.1`, `Host: ${hostname}:${port}`];
  for (const [k, v] of Object.entries(req.headers ?? {})) lines.push(`${k}: ${v}`);
  if (declared !== null) lines.push(`Content-Length: ${declared}`);
  if (req.chunked) lines.push('Transfer-Encoding: chunked');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let closedResolve: (v: boolean) => void = () => undefined;
    const closed = new Promise<boolean>((r) => {
      closedResolve = r;
    });
    socket.once('close', () => closedResolve(true));
    let answered = false;
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const started = performance.now();
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer in ${req.timeoutMs ?? 20000} ms`));
    }, req.timeoutMs ?? 20000);
    const send = (bytes: Buffer) => {
      if (!socket.writable || bytes.length === 0) return;
      sent += bytes.length;
      const framed = req.chunked ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]) : bytes;
      socket.write(framed, () => undefined);
    };
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (answered || end < 0) return;
      const [statusLine, ...headerLines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of headerLines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (received.length < end + 4 + length) return;
      answered = true;
      const ms = performance.now() - started;
      clearTimeout(giveUp);
      clearInterval(timer);
      const text = received.subarray(end + 4, end + 4 + length).toString('utf8');
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      // Told the connection closes, a client stops sending and ends its side, as HTTP clients do.
      if (headers.connection?.toLowerCase() === 'close') socket.end();
      setTimeout(() => {
        closedResolve(false);
        socket.destroy();
      }, req.closeWaitMs ?? 2000).unref();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, text, body: parsed, ms, sentBytes: sent, closed });
    });
    // A server that closes while the body is still being sent makes writes fail: the answer (read above) is what counts.
    socket.on('error', (err) => {
      if (answered) return;
      clearTimeout(giveUp);
      clearInterval(timer);
      reject(err);
    });
    socket.once('connect', () => {
      socket.write(head);
      send(body);
      if (req.busyAfterSendMs) {
        const until = performance.now() + req.busyAfterSendMs;
        while (performance.now() < until) {
          /* busy */
        }
      }
      const trickle = req.trickle;
      if (trickle) {
        const total = declared ?? 256 << 20;
        timer = setInterval(() => {
          const n = Math.min(trickle.bytes, total - sent);
          if (n <= 0 || answered) {
            clearInterval(timer);
            return;
          }
          send(Buffer.alloc(n, 0x20));
        }, trickle.everyMs);
      }
    });
  });
}
