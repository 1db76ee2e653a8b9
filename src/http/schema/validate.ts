// Validation against a schema at the edge: returns the trusted value (defaults filled in) or throws
// one 400 invalid_request whose `field` is the path of the first bad field (`params.n_bits`,
// `namespaces[1]`, `rate_limit.window_s`). A null is the same as an absent field everywhere: clients
// that serialise "no value" as null get the default rather than an error.
import { Base64Data } from '../../codec/base64.js';
import { measureJson } from '../../codec/json.js';
import { badRequest, EXCERPT_CHARS, excerpt, type ProblemError } from '../errors.js';
import type { ArraySchema, FieldsOf, Infer, NumberSchema, ObjectSchema, Schema } from './types.js';

const join = (parent: string, name: string): string => (parent ? `${parent}.${name}` : name);

/** The value for a message, when it is short; a structure is measured first (it may nest without bound). */
function shown(v: unknown): string {
  if (typeof v === 'string' && v.length > EXCERPT_CHARS) return '';
  if (v !== null && typeof v === 'object') {
    const m = measureJson(v, EXCERPT_CHARS, EXCERPT_CHARS);
    if (m.depth > EXCERPT_CHARS || m.bytesAtLeast > EXCERPT_CHARS) return '';
  }
  const text = JSON.stringify(v);
  return text !== undefined && text.length <= EXCERPT_CHARS ? `, got ${text}` : '';
}

/** Unknown fields named in a message (and its `fields`); the rest are counted. */
const NAMED_FIELDS = 5;

function numberRange(sc: NumberSchema): string {
  return [
    sc.exclusiveMinimum !== undefined ? `> ${sc.exclusiveMinimum}` : '',
    sc.minimum !== undefined ? `>= ${sc.minimum}` : '',
    sc.exclusiveMaximum !== undefined ? `< ${sc.exclusiveMaximum}` : '',
    sc.maximum !== undefined ? `<= ${sc.maximum}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
}

/** What a valid value looks like, in words (for messages). */
export function expected(sc: Schema): string {
  switch (sc.type) {
    case 'string':
      if (sc.enum) return `one of ${sc.enum.join(', ')}`;
      if (sc.pattern) return `a string matching ${sc.pattern.source}`;
      return 'a string';
    case 'integer':
      return `an integer in [${sc.minimum}, ${sc.maximum}]`;
    case 'number': {
      const range = numberRange(sc);
      return `a finite number${range ? ` ${range}` : ''}`;
    }
    case 'boolean':
      return 'true or false';
    case 'array':
      return `a list of ${sc.minItems ?? 0} to ${sc.maxItems ?? 'any number of'} ${sc.itemsText ?? 'items'}`;
    case 'object':
      return 'a JSON object';
    case 'any':
      return 'any JSON value';
  }
}

function fail(sc: Schema, value: unknown, field: string, detail?: string): ProblemError {
  const generic = badRequest(detail ?? `${field} must be ${expected(sc)}${shown(value)}`, { field });
  return sc.invalid ? sc.invalid(value, field, generic) : generic;
}

function checkObject(sc: ObjectSchema, raw: unknown, field: string): Record<string, unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw fail(sc, raw, field, field ? undefined : 'the request body must be a JSON object');
  }
  const obj = raw as Record<string, unknown>;
  const names = Object.keys(sc.properties);
  if (sc.additionalProperties === false) {
    const unknown = Object.keys(obj).filter((k) => !Object.hasOwn(sc.properties, k));
    if (unknown.length > 0) {
      const paths = unknown.slice(0, NAMED_FIELDS).map((k) => join(field, excerpt(k)));
      const more = unknown.length > NAMED_FIELDS ? ` and ${unknown.length - NAMED_FIELDS} more` : '';
      throw badRequest(`unknown field${unknown.length > 1 ? 's' : ''} ${paths.join(', ')}${more}; allowed: ${names.join(', ') || 'none'}`, {
        field: paths[0],
        fields: paths,
      });
    }
  }
  if (sc.maxProperties !== undefined) {
    const count = Object.keys(obj).length;
    if (count > sc.maxProperties) throw fail(sc, obj, field, `${field} has ${count} keys; at most ${sc.maxProperties} are allowed`);
  }
  // A free-form object (metadata, filters) is the value itself; otherwise the fields the schema names.
  // Never a copy of every field a client sent: copying an object of 80,000 names took 150-400 ms.
  if (names.length === 0 && sc.additionalProperties !== false) return obj;
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const v = validate(sc.properties[name]!, obj[name], join(field, name), sc.required?.includes(name) ?? false);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

function checkArray(sc: ArraySchema, raw: unknown, field: string): unknown[] {
  if (!Array.isArray(raw) || raw.length < (sc.minItems ?? 0) || raw.length > (sc.maxItems ?? Infinity)) throw fail(sc, raw, field);
  return raw.map((item, i) => validate(sc.items, item, `${field}[${i}]`, true));
}

/**
 * `value` checked against `sc`; `field` is its path ('' for a whole body). Absent (undefined or null):
 * the default when there is one, a 400 when `required`, else undefined.
 */
export function validate(sc: Schema, value: unknown, field: string, required = false): any {
  if (value === undefined || value === null) {
    if (sc.default !== undefined) return structuredClone(sc.default);
    if (required) throw sc.invalid?.(value, field, missing(sc, field)) ?? missing(sc, field);
    return undefined;
  }
  let out: unknown;
  switch (sc.type) {
    case 'string':
      // Base64 array data was decoded as the body arrived (codec/json-reader.ts): its bytes stand for the string.
      if (sc.format === 'byte' && value instanceof Base64Data) {
        out = value;
        break;
      }
      if (
        typeof value !== 'string' ||
        (sc.enum && !sc.enum.includes(value)) ||
        (sc.pattern && !sc.pattern.test(value)) ||
        (sc.minLength !== undefined && value.length < sc.minLength) ||
        (sc.maxLength !== undefined && value.length > sc.maxLength)
      ) {
        throw fail(sc, value, field);
      }
      out = value;
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < sc.minimum || value > sc.maximum)
        throw fail(sc, value, field);
      out = value;
      break;
    case 'number':
      if (
        typeof value !== 'number' ||
        !Number.isFinite(value) ||
        (sc.minimum !== undefined && value < sc.minimum) ||
        (sc.maximum !== undefined && value > sc.maximum) ||
        (sc.exclusiveMinimum !== undefined && value <= sc.exclusiveMinimum) ||
        (sc.exclusiveMaximum !== undefined && value >= sc.exclusiveMaximum)
      ) {
        throw fail(sc, value, field);
      }
      out = value;
      break;
    case 'boolean':
      if (typeof value !== 'boolean') throw fail(sc, value, field);
      out = value;
      break;
    case 'array':
      out = checkArray(sc, value, field);
      break;
    case 'object':
      out = checkObject(sc, value, field);
      break;
    case 'any':
      out = value;
      break;
  }
  return sc.refine ? (sc.refine as (v: unknown, f: string) => unknown)(out, field) : out;
}

function missing(sc: Schema, field: string): ProblemError {
  return badRequest(`${field} is required (${expected(sc)})`, { field });
}

/** A whole request body: must be a JSON object matching `sc`. */
export function parseBody<S extends ObjectSchema<unknown>>(sc: S, body: unknown): Infer<S> {
  return validate(sc, body, '', true) as Infer<S>;
}

export type QueryInput = Record<string, string | string[] | undefined>;

/**
 * Query-string (or path) parameters: each named one converted to its schema's type and checked like a
 * body field (an integer must be written as one: `5x` and `1.0` are 400); a repeated one is a 400.
 * Parameters the schema does not name are ignored.
 */
export function parseParams<Q extends Record<string, Schema>, R extends keyof Q & string = never>(
  schemas: Q,
  query: QueryInput,
  required: readonly R[] = [],
): FieldsOf<Q, R> {
  const out: Record<string, unknown> = {};
  for (const [name, sc] of Object.entries(schemas)) {
    const raw = query[name];
    if (Array.isArray(raw)) throw badRequest(`query parameter ${name} is given more than once`, { field: name });
    let value: unknown = raw;
    if (raw !== undefined && (sc.type === 'integer' || sc.type === 'number')) {
      const re = sc.type === 'integer' ? /^[+-]?\d{1,16}$/ : /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
      value = re.test(raw) ? Number(raw) : raw; // a string that stays a string fails the type check
    } else if (raw !== undefined && sc.type === 'boolean') {
      value = raw === 'true' ? true : raw === 'false' ? false : raw;
    }
    const v = validate(sc, value, name, (required as readonly string[]).includes(name));
    if (v !== undefined) out[name] = v;
  }
  return out as FieldsOf<Q, R>;
}
