// A JSON body read as it arrives (CONTRACT.md section 8): however large a legal body is, no stretch of
// work on it holds the event loop for more than about a millisecond, and its array data is never a
// JavaScript string. One state machine walks the text once, byte by byte outside strings and with
// native searches inside them; it checks the grammar of objects and arrays, the depth bound and the
// structure bound (codec/json.ts's rules) in text order, so every chunking of a body gets the same
// answer, and an error is answered where it is found, the rest unread.
//
// Values are made by V8's JSON.parse, a piece of at most JSON_PIECE_BYTES of text at a time: an
// object or array is "assembled" by the reader only while its text is longer than a piece (its
// members then parsed in runs of up to a piece) or when it lies on the way to array data. A string
// longer than a piece is parsed in pieces and joined; a number that long is refused (413). A
// `data_b64` string where the route's schema puts array data is decoded from base64 as it arrives
// (codec/base64.ts), into one buffer for the whole body, and stands in the parsed body as a
// Base64Data. JSON.parse's own rules are kept: the last of duplicate names wins (at the place of the
// first), and `__proto__` is an own member like any other.
import { badRequest, payloadTooLarge } from '../http/errors.js';
import { sizeText } from '../limits/input.js';
import { Base64Decoder } from './base64.js';

/** Text handed to one JSON.parse at most (about a millisecond of parsing at worst: dense numbers). */
export const JSON_PIECE_BYTES = 64 * 1024;

/** Input handled in one step of the state machine; a larger chunk is walked a step at a time. */
const STEP_BYTES = 64 * 1024;

/**
 * Where a body carries array data: member names, `'*'` for every element of an array, `true` for a
 * string that is base64 array data. `{ cores: { '*': { data_b64: true } } }` is put_cores.
 */
export interface DataPaths {
  [name: string]: DataPaths | true;
}

export interface JsonReaderLimits {
  /** Levels of objects and arrays (the outermost is level 1); deeper: 400. */
  maxDepth: number;
  /** Bytes outside strings plus two per string and two per escape; more: 413 (codec/json.ts's measure). */
  maxStructureBytes: number;
  /** Where array data sits (none: no decoding). */
  data?: DataPaths;
  /**
   * The most bytes the body can have (its Content-Length, or the route's limit): the decoded data of
   * the body goes in one buffer of what the rest of the body could hold at most (base64 is longer than
   * its bytes), allocated when the first data string starts; only the pages written are resident.
   */
  maxBodyBytes: number;
}

// Byte classes outside strings.
const OTHER = 0;
const SPACE = 1;
const OPEN_OBJECT = 2;
const OPEN_ARRAY = 3;
const CLOSE_OBJECT = 4;
const CLOSE_ARRAY = 5;
const COMMA = 6;
const COLON = 7;
const QUOTE = 8;
const CLASS = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) CLASS[c] = SPACE;
CLASS[0x7b] = OPEN_OBJECT;
CLASS[0x5b] = OPEN_ARRAY;
CLASS[0x7d] = CLOSE_OBJECT;
CLASS[0x5d] = CLOSE_ARRAY;
CLASS[0x2c] = COMMA;
CLASS[0x3a] = COLON;
CLASS[0x22] = QUOTE;
const QUOTE_BYTE = 0x22;
const BACKSLASH = 0x5c;

// What a container expects next.
const FIRST = 0; // after the opening bracket: a member (object: its key) or the close
const KEY = 1; // object, after a comma: a key
const COLON_NEXT = 2; // object, after a key
const VALUE = 3; // after a colon (object) or a comma (array); the top level at the start
const NEXT = 4; // after a member: a comma or the close (the top level: nothing but space)
const IN_MEMBER = 5; // a token or a container of this member is open

// The open token of the innermost container, when it is not a container.
const NO_TOKEN = 0;
const STRING = 1; // a string whose text stays until it is parsed with its run or container
const LONG_STRING = 2; // a string longer than a piece, parsed a piece at a time
const DATA_STRING = 3; // array data, decoded from base64 as it arrives
const SCALAR = 4; // a number or true, false, null

/** A member name or array position on the way to array data. */
interface DataNode {
  names: Map<string, DataNode> | null;
  items: DataNode | null;
  data: boolean;
}

function dataNode(paths: DataPaths | true): DataNode {
  if (paths === true) return { names: null, items: null, data: true };
  const node: DataNode = { names: null, items: null, data: false };
  for (const [name, sub] of Object.entries(paths)) {
    if (name === '*') node.items = dataNode(sub);
    else (node.names ??= new Map()).set(name, dataNode(sub));
  }
  return node;
}

const hasStructure = (n: DataNode | null): n is DataNode => n !== null && (n.names !== null || n.items !== null);

interface Frame {
  object: boolean;
  state: number;
  /** Offset of the opening bracket. */
  start: number;
  /** The open member: where it starts (its key, in an object), its key's text, where its value starts. */
  memberStart: number;
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  /** The open member's name once parsed (assembled objects). */
  key: string | undefined;
  /** Members whose text is kept until it is parsed as one run: the first one's start, the last complete one's end (-1: none). */
  runFrom: number;
  runTo: number;
  /** The container being assembled, or null while its text is parsed whole when it closes. */
  value: Record<string, unknown> | unknown[] | null;
  /** Members of `value` so far (a first run may become the container itself). */
  count: number;
  node: DataNode | null;
}

function frame(object: boolean, start: number, state: number): Frame {
  return {
    object,
    state,
    start,
    memberStart: -1,
    keyStart: -1,
    keyEnd: -1,
    valueStart: -1,
    key: undefined,
    runFrom: -1,
    runTo: -1,
    value: null,
    count: 0,
    node: null,
  };
}

const malformed = () => badRequest('malformed JSON body');

/** `value` as member `name` of `obj`, as JSON.parse makes members (an own `__proto__` included). */
function setMember(obj: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(obj, name, { value, writable: true, enumerable: true, configurable: true });
  else obj[name] = value;
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw malformed();
  }
}

const CONTROL = /[\u0000-\u001f]/;
const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);

/** The character of a one-character escape (the byte after the backslash), or '' when there is none. */
function escaped(c: number): string {
  switch (c) {
    case 0x22:
      return '"';
    case 0x5c:
      return '\\';
    case 0x2f:
      return '/';
    case 0x62:
      return '\b';
    case 0x66:
      return '\f';
    case 0x6e:
      return '\n';
    case 0x72:
      return '\r';
    case 0x74:
      return '\t';
    default:
      return '';
  }
}

/**
 * Reads one JSON body given in chunks: write() each chunk as it arrives (a 400 or 413 ProblemError
 * thrown there answers the request at once), then end() for the parsed object (400 when the body is
 * not a complete JSON object). Memory: the decoded data, the parsed values, and at most about two
 * pieces of text.
 */
export class JsonReader {
  private readonly maxDepth: number;
  private readonly maxStructure: number;
  private readonly maxBodyBytes: number;

  // The text not yet consumed: buf[0] is body offset `base`; bytes before offset `have` have arrived.
  private buf = Buffer.alloc(0);
  private view = this.buf;
  private base = 0;
  private have = 0;
  /** The next byte to look at. */
  private pos = 0;

  private structure = 0;
  private readonly frames: Frame[];
  /** Index of the innermost assembled frame (the top level's, 0, at least); those above it are parsed whole. */
  private asm = 0;

  private tok = NO_TOKEN;
  private tokStart = 0;
  private tokIsKey = false;
  /** A long string: the pieces joined so far and where the next piece starts. */
  private longText = '';
  private pieceFrom = 0;
  /** The last \u escape seen in the open string (a piece is never cut inside it). */
  private unicodeEscapeAt = -1;
  /** A data string: its decoder; the body's data buffer and how much of it is used. */
  private decoder: Base64Decoder | null = null;
  private data: Buffer | null = null;
  private dataUsed = 0;

  // Native searches remembered, so that each byte is searched once however many strings there are:
  // the next quote (backslash) at or after the last offset asked about, or -1 when there is none in
  // [from, to).
  private quote = { at: -1, from: 0, to: 0 };
  private escape = { at: -1, from: 0, to: 0 };

  constructor(limits: JsonReaderLimits) {
    this.maxDepth = limits.maxDepth;
    this.maxStructure = limits.maxStructureBytes;
    this.maxBodyBytes = limits.maxBodyBytes;
    // The top level is an array-like frame of one member, always assembled.
    const top = frame(false, -1, VALUE);
    top.value = [];
    top.node = limits.data ? { names: null, items: dataNode(limits.data), data: false } : null;
    this.frames = [top];
  }

  /** Bytes of the body given so far. */
  get received(): number {
    return this.have;
  }

  /** Bytes of structure read so far (outside strings, plus two per string and per escape). */
  get structureBytes(): number {
    return this.structure;
  }

  /** Take the next chunk of the body; throws the body's first problem (400, 413). */
  write(chunk: Uint8Array): void {
    for (let at = 0; at < chunk.length; at += STEP_BYTES) {
      this.append(chunk.subarray(at, Math.min(chunk.length, at + STEP_BYTES)));
      this.scan(false);
    }
  }

  /** The body ended: its object (400 when it is not one, or not complete). */
  end(): Record<string, unknown> {
    this.scan(true);
    const top = this.frames[0]!;
    if (this.frames.length !== 1 || this.tok !== NO_TOKEN || top.state !== NEXT) throw malformed();
    this.flush(top);
    const value = (top.value as unknown[])[0];
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest('the request body must be a JSON object');
    return value as Record<string, unknown>;
  }

  // --- the text kept -----------------------------------------------------------------------------

  /** The first offset still needed: the innermost assembled frame's unparsed members or open value. */
  private keepFrom(): number {
    const f = this.frames[this.asm]!;
    if (f.runFrom >= 0) return f.runFrom;
    if (this.tok === LONG_STRING && this.frames.length - 1 === this.asm) return this.pieceFrom;
    if (this.tok === DATA_STRING) return this.decoder!.keepFrom >= 0 ? Math.min(this.decoder!.keepFrom, this.pos) : this.pos;
    return f.valueStart;
  }

  private append(chunk: Uint8Array): void {
    if (this.have - this.base + chunk.length > this.buf.length) {
      // Move the text still needed to the front (of a larger buffer when it must be).
      const keep = this.keepFrom();
      const from = keep >= 0 ? Math.min(keep, this.pos) : this.pos;
      const kept = this.have - from;
      if (kept + chunk.length > this.buf.length / 2) {
        const next = Buffer.allocUnsafe(Math.max(2 * (kept + chunk.length), 16 * 1024));
        this.buf.copy(next, 0, from - this.base, this.have - this.base);
        this.buf = next;
      } else {
        this.buf.copyWithin(0, from - this.base, this.have - this.base);
      }
      this.base = from;
    }
    this.buf.set(chunk, this.have - this.base);
    this.have += chunk.length;
    this.view = this.buf.subarray(0, this.have - this.base);
  }

  private text(from: number, to: number): string {
    return this.view.toString('utf8', from - this.base, to - this.base);
  }

  /** The next quote at or after `from` (-1: none before `have`). */
  private nextQuote(from: number): number {
    return this.search(this.quote, QUOTE_BYTE, from);
  }

  /** The next backslash at or after `from` (-1: none before `have`). */
  private nextEscape(from: number): number {
    return this.search(this.escape, BACKSLASH, from);
  }

  private search(memo: { at: number; from: number; to: number }, byte: number, from: number): number {
    if (memo.at >= from) return memo.at;
    // Offsets only grow: a search that found nothing in [memo.from, memo.to) goes on from memo.to.
    const known = memo.at < 0 && from >= memo.from && from <= memo.to;
    const start = known ? memo.to : from;
    if (!known) memo.from = from;
    memo.to = this.have;
    if (start >= this.have) {
      memo.at = -1;
      return -1;
    }
    const at = this.view.indexOf(byte, start - this.base);
    memo.at = at < 0 ? -1 : at + this.base;
    return memo.at;
  }

  private count(bytes: number): void {
    this.structure += bytes;
    if (this.structure > this.maxStructure) {
      throw payloadTooLarge(
        `the JSON body has more than ${sizeText(this.maxStructure)} besides the ` +
          'plain characters of its strings (syntax, numbers and escapes count)',
      );
    }
  }

  // --- the walk ----------------------------------------------------------------------------------

  /** Walk what has arrived; with `eof`, the body is complete (a number may end it). */
  private scan(eof: boolean): void {
    for (;;) {
      const keep = this.keepFrom();
      const limit = keep >= 0 ? keep + JSON_PIECE_BYTES : Number.POSITIVE_INFINITY;
      const stop = Math.min(this.have, limit);
      if (this.tok !== NO_TOKEN) {
        if (this.token(stop, eof)) continue;
        // Long and data strings take all there is; the others stop at the piece's end.
        if (this.tok === LONG_STRING || this.tok === DATA_STRING || this.pos < limit) return;
        this.relieve();
        continue;
      }
      if (this.pos >= stop) {
        if (this.pos >= limit) {
          this.relieve();
          continue;
        }
        return;
      }
      this.structural(stop);
    }
  }

  /** Bytes outside strings from `pos` up to `stop`, until an event that may move what is kept. */
  private structural(stop: number): void {
    const view = this.view;
    const base = this.base;
    const frames = this.frames;
    const f = frames[frames.length - 1]!;
    while (this.pos < stop) {
      const p = this.pos;
      const c = view[p - base]!;
      const cls = CLASS[c]!;
      if (cls === SPACE) {
        this.pos = p + 1;
        this.count(1);
        continue;
      }
      if (cls !== QUOTE) this.count(1); // a string counts its two quotes when it ends
      switch (f.state) {
        case FIRST:
        case KEY:
          if (f.object && cls === QUOTE) {
            f.memberStart = f.keyStart = p;
            if (f.runFrom < 0) f.runFrom = p;
            f.state = IN_MEMBER;
            this.beginToken(STRING, p, true);
            return;
          }
          if (f.state === FIRST && cls === (f.object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
            this.close(p);
            return;
          }
          if (!f.object && f.state === FIRST) {
            this.value(f, p, cls);
            return;
          }
          throw malformed();
        case COLON_NEXT:
          if (cls !== COLON) throw malformed();
          f.state = VALUE;
          this.pos = p + 1;
          continue;
        case VALUE:
          this.value(f, p, cls);
          return;
        case NEXT:
          if (f === frames[0]) throw malformed();
          if (cls === COMMA) {
            f.state = f.object ? KEY : VALUE;
            this.pos = p + 1;
            continue;
          }
          if (cls === (f.object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
            this.close(p);
            return;
          }
          throw malformed();
        default:
          throw malformed();
      }
    }
  }

  /** A value starts at `p` (its first byte of class `cls`) in frame `f`. */
  private value(f: Frame, p: number, cls: number): void {
    if (!f.object) {
      f.memberStart = p;
      if (f.runFrom < 0) f.runFrom = p;
    }
    f.valueStart = p;
    f.state = IN_MEMBER;
    // On the way to array data (the frame is assembled and its schema names this member): this member
    // is assembled, or decoded, on its own.
    let child: DataNode | null = null;
    if (f.node !== null && f.value !== null) {
      if (f.object) {
        if (f.node.names !== null) child = f.node.names.get(this.keyOf(f)) ?? null;
      } else {
        child = f.node.items;
      }
    }
    if (cls === OPEN_OBJECT || cls === OPEN_ARRAY) {
      if (this.frames.length > this.maxDepth) {
        throw badRequest(`the JSON body nests deeper than ${this.maxDepth} levels of objects and arrays`);
      }
      const sub = frame(cls === OPEN_OBJECT, p, FIRST);
      if (hasStructure(child)) {
        this.alone(f);
        sub.value = sub.object ? {} : [];
        sub.node = child;
        this.frames.push(sub);
        this.asm = this.frames.length - 1;
      } else {
        this.frames.push(sub);
      }
      this.pos = p + 1;
      return;
    }
    if (cls === QUOTE) {
      if (child !== null && child.data) {
        this.alone(f);
        this.beginData(p);
      } else {
        this.beginToken(STRING, p, false);
      }
      return;
    }
    if (cls !== OTHER) throw malformed();
    this.beginToken(SCALAR, p, false);
  }

  /** The open member of assembled frame `f` is made on its own: members before it are parsed, its name too. */
  private alone(f: Frame): void {
    if (f.runTo >= 0) this.flush(f);
    if (f.object && f.keyStart >= 0) this.keyOf(f);
    f.runFrom = -1;
  }

  /** The name of `f`'s open member (its key text is kept until then). */
  private keyOf(f: Frame): string {
    if (f.key === undefined) f.key = parseText(this.text(f.keyStart, f.keyEnd)) as string;
    return f.key;
  }

  /** Parse `f`'s complete unparsed members as one run, into its container. */
  private flush(f: Frame): void {
    if (f.runTo < 0) return;
    const text = this.text(f.runFrom, f.runTo);
    const parsed = parseText(f.object ? `{${text}}` : `[${text}]`) as Record<string, unknown> | unknown[];
    if (f.count === 0) {
      f.value = parsed;
    } else if (f.object) {
      const obj = f.value as Record<string, unknown>;
      for (const name of Object.keys(parsed)) setMember(obj, name, (parsed as Record<string, unknown>)[name]);
    } else {
      const arr = f.value as unknown[];
      for (const v of parsed as unknown[]) arr.push(v);
    }
    f.count += 1;
    f.runTo = -1;
    f.runFrom = f.memberStart >= 0 ? f.memberStart : -1;
  }

  /** The member of `f` that opened last is complete; its text ends before `to`, or it is `value`. */
  private memberDone(f: Frame, to: number, value?: unknown, made = false): void {
    if (made || (f.value !== null && f.runFrom < 0)) {
      const v = made ? value : parseText(this.text(f.valueStart, to));
      if (f.object) setMember(f.value as Record<string, unknown>, this.keyOf(f), v);
      else (f.value as unknown[]).push(v);
      f.count += 1;
    } else {
      f.runTo = to;
    }
    f.memberStart = f.keyStart = f.keyEnd = f.valueStart = -1;
    f.key = undefined;
    f.state = NEXT;
  }

  /** The container on top closes at `p`. */
  private close(p: number): void {
    const frames = this.frames;
    const f = frames.pop()!;
    this.pos = p + 1;
    const parent = frames[frames.length - 1]!;
    if (f.value !== null) {
      this.flush(f);
      this.asm = frames.length - 1;
      this.memberDone(parent, p + 1, f.value, true);
    } else {
      this.memberDone(parent, p + 1);
    }
  }

  // --- the text kept grew to a piece -------------------------------------------------------------

  /**
   * The text kept reached a piece: parse the complete members of the innermost assembled frame, or
   * make its open member on its own (an open container becomes assembled, a string long), until
   * less is kept. A number or literal of a piece: 413.
   */
  private relieve(): void {
    const frames = this.frames;
    const f = frames[this.asm]!;
    if (f.runFrom >= 0 && f.runTo >= 0) {
      this.flush(f);
      return;
    }
    const top = frames.length - 1 === this.asm;
    if (top && this.tok === STRING && this.tokIsKey) {
      f.runFrom = -1;
      this.beginLong();
      return;
    }
    this.alone(f);
    if (f.valueStart < 0) return;
    if (!top) {
      const sub = frames[this.asm + 1]!;
      sub.value = sub.object ? {} : [];
      this.asm += 1;
      return;
    }
    if (this.tok === STRING) {
      this.beginLong();
      return;
    }
    if (this.tok === SCALAR) {
      throw payloadTooLarge(`the JSON body has a number or literal longer than ${sizeText(JSON_PIECE_BYTES)}`);
    }
  }

  // --- tokens ------------------------------------------------------------------------------------

  private beginToken(kind: number, p: number, isKey: boolean): void {
    this.tok = kind;
    this.tokStart = p;
    this.tokIsKey = isKey;
    this.unicodeEscapeAt = -1;
    this.pos = p + 1;
  }

  private beginLong(): void {
    this.tok = LONG_STRING;
    this.longText = '';
    this.pieceFrom = this.tokStart + 1;
  }

  private beginData(p: number): void {
    if (this.data === null) this.data = Buffer.allocUnsafeSlow(Math.max(0, this.maxBodyBytes - p));
    // Each string's bytes start 8-aligned, so float64 views on them need no copy.
    this.dataUsed = (this.dataUsed + 7) & ~7;
    this.decoder = new Base64Decoder(this.data, this.dataUsed);
    this.tok = DATA_STRING;
    this.tokStart = p;
    this.tokIsKey = false;
    this.pos = p + 1;
  }

  /** Advance the open token up to `stop`; true when it completed. */
  private token(stop: number, eof: boolean): boolean {
    switch (this.tok) {
      case SCALAR:
        return this.scalar(stop, eof);
      case STRING:
        return this.string(stop);
      case LONG_STRING:
        return this.longString();
      default:
        return this.dataString();
    }
  }

  private scalar(stop: number, eof: boolean): boolean {
    const view = this.view;
    const base = this.base;
    let p = this.pos;
    while (p < stop && CLASS[view[p - base]!] === OTHER) p++;
    this.count(p - this.pos);
    this.pos = p;
    if (p < stop || (eof && p === this.have)) {
      this.tok = NO_TOKEN;
      this.memberDone(this.frames[this.frames.length - 1]!, p);
      return true;
    }
    return false;
  }

  /** A string kept as text: to its closing quote, counting escapes. */
  private string(stop: number): boolean {
    for (;;) {
      const q = this.nextQuote(this.pos);
      const e = this.nextEscape(this.pos);
      if (e >= 0 && (q < 0 || e < q) && e < stop) {
        if (e + 1 >= this.have) {
          this.pos = e; // the escaped byte has not arrived
          return false;
        }
        this.count(2);
        this.pos = e + 2;
        continue;
      }
      if (q < 0 || q >= stop) {
        this.pos = Math.max(this.pos, stop);
        return false;
      }
      this.count(2);
      this.pos = q + 1;
      this.tok = NO_TOKEN;
      const f = this.frames[this.frames.length - 1]!;
      if (this.tokIsKey) {
        f.keyEnd = q + 1;
        f.state = COLON_NEXT;
      } else {
        this.memberDone(f, q + 1);
      }
      return true;
    }
  }

  /** A string longer than a piece: parsed a piece at a time (cut where no character or escape is split). */
  private longString(): boolean {
    for (;;) {
      const limit = this.pieceFrom + JSON_PIECE_BYTES;
      const stop = Math.min(this.have, limit);
      const q = this.nextQuote(this.pos);
      const e = this.nextEscape(this.pos);
      if (e >= 0 && (q < 0 || e < q) && e < stop) {
        if (e + 1 >= this.have) {
          this.pos = e;
          return false;
        }
        if (this.view[e + 1 - this.base] === 0x75 /* u */) this.unicodeEscapeAt = e;
        this.count(2);
        this.pos = e + 2;
        continue;
      }
      if (q >= 0 && q < stop) {
        this.count(2);
        this.longText += this.piece(this.pieceFrom, q);
        this.pos = q + 1;
        this.tok = NO_TOKEN;
        const f = this.frames[this.frames.length - 1]!;
        if (this.tokIsKey) {
          f.key = this.longText;
          f.state = COLON_NEXT;
        } else {
          this.memberDone(f, q + 1, this.longText, true);
        }
        this.longText = '';
        return true;
      }
      this.pos = Math.max(this.pos, stop);
      // A piece is full: cut it where no character or escape is split (the byte at the limit is
      // looked at, so the cut depends on the text alone, not on where chunks ended).
      if (this.have <= limit) return false;
      const view = this.view;
      const base = this.base;
      const at = Math.min(this.pos, limit);
      let cut = at;
      while (cut > this.pieceFrom + 1 && (view[cut - base]! & 0xc0) === 0x80) cut--;
      if ((view[cut - base]! & 0xc0) === 0x80) cut = at; // continuation bytes only: each decodes alone
      const u = this.unicodeEscapeAt;
      if (u >= this.pieceFrom && cut > u && cut < u + 6) {
        cut = u;
      } else {
        let n = 0;
        while (cut - 1 - n >= this.pieceFrom && view[cut - 1 - n - base] === BACKSLASH) n++;
        if (n % 2 === 1) cut -= 1; // the last backslash starts an escape
      }
      this.longText += this.piece(this.pieceFrom, cut);
      this.pieceFrom = cut;
    }
  }

  /** The characters of string text `from`..`to` (no quote in it). */
  private piece(from: number, to: number): string {
    return parseText(`"${this.text(from, to)}"`) as string;
  }

  /** Array data: plain runs and escapes go to the decoder as they arrive. */
  private dataString(): boolean {
    const dec = this.decoder!;
    const view = this.view;
    const base = this.base;
    // Bytes from `from` to `to` were not proven base64 when the string failed: a control character
    // among them makes the JSON malformed (an escaped one does not).
    const unproven = (from: number, to: number) => {
      if (from >= 0 && CONTROL.test(view.toString('latin1', from - base, to - base))) throw malformed();
    };
    for (;;) {
      const q = this.nextQuote(this.pos);
      const e = this.nextEscape(this.pos);
      const next = e >= 0 && (q < 0 || e < q) ? e : q >= 0 ? q : this.have;
      if (next > this.pos) {
        const raw = view.toString('latin1', this.pos - base, next - base);
        if (dec.valid) unproven(dec.push(raw, this.pos, next), next);
        else {
          dec.push(raw, this.pos, next);
          if (CONTROL.test(raw)) throw malformed();
        }
        this.pos = next;
      }
      if (next >= this.have) return false;
      if (next === e) {
        if (e + 1 >= this.have) return false;
        const k = view[e + 1 - base]!;
        let ch: string;
        let len = 2;
        if (k === 0x75 /* u */) {
          if (e + 6 > this.have) return false;
          for (let i = 2; i < 6; i++) if (!isHex(view[e + i - base]!)) throw malformed();
          ch = String.fromCharCode(parseInt(view.toString('latin1', e + 2 - base, e + 6 - base), 16));
          len = 6;
        } else {
          ch = escaped(k);
          if (ch === '') throw malformed();
        }
        this.count(2);
        unproven(dec.push(ch, e, e + len), e + len);
        this.pos = e + len;
        continue;
      }
      // The closing quote.
      this.count(2);
      const { data, failedFrom } = dec.finish();
      unproven(failedFrom, q);
      this.dataUsed += dec.length;
      this.decoder = null;
      this.pos = q + 1;
      this.tok = NO_TOKEN;
      this.memberDone(this.frames[this.frames.length - 1]!, q + 1, data, true);
      return true;
    }
  }
}
