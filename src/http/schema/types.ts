// Declarative request schemas: one description of a field serves both the edge validation
// (validate.ts) and the OpenAPI document (json-schema.ts), so the API reference
// says exactly what the server accepts. A schema is plain data plus two optional hooks for rules JSON
// Schema cannot state (a byte length of UTF-8, a cross-field rule, a problem code of its own).
import type { Base64Data } from '../../codec/base64.js';
import type { ProblemError } from '../errors.js';

interface Common<T> {
  /** Type only, never set: the value validation returns (what Infer<typeof schema> reads). */
  readonly '~value'?: T;
  description?: string;
  /** Filled in by validation when the field is absent (and shown in the document). */
  default?: T;
  /** Shown in the document only; validation does not fill it (the default is computed elsewhere). */
  docDefault?: unknown;
  example?: unknown;
  /**
   * Runs after the generic checks passed, with the value and the field's path; returns the value the
   * handler gets (or throws a ProblemError). For rules JSON Schema cannot state.
   */
  refine?(value: T, field: string): T;
  /** Replaces the generic 400 for a value that failed the generic checks (a problem code of its own). */
  invalid?: (value: unknown, field: string, generic: ProblemError) => ProblemError;
}

export interface StringSchema<V = string> extends Common<V> {
  type: 'string';
  pattern?: RegExp;
  enum?: readonly string[];
  minLength?: number;
  maxLength?: number;
  format?: string;
}

export interface IntegerSchema extends Common<number> {
  type: 'integer';
  minimum: number;
  maximum: number;
}

export interface NumberSchema extends Common<number> {
  type: 'number';
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

export interface BooleanSchema extends Common<boolean> {
  type: 'boolean';
}

export interface ArraySchema<V = unknown[]> extends Common<V> {
  type: 'array';
  items: Schema;
  minItems?: number;
  maxItems?: number;
  /** Words for the generic error, e.g. "namespace names". */
  itemsText?: string;
}

export interface ObjectSchema<V = Record<string, unknown>> extends Common<V> {
  type: 'object';
  properties: Record<string, Schema>;
  required?: readonly string[];
  /** false: unknown fields are a 400 naming them; true: kept as given (free-form objects). */
  additionalProperties?: boolean;
  maxProperties?: number;
  /** Document only: alternatives the object takes (e.g. per-solver params). */
  oneOf?: Array<{ title: string; schema: ObjectSchema }>;
  /** Document only: title of a named component. */
  title?: string;
}

/** Any JSON value (document: no constraint). */
export interface AnySchema extends Common<unknown> {
  type: 'any';
}

export type Schema = StringSchema<any> | IntegerSchema | NumberSchema | BooleanSchema | ArraySchema<any> | ObjectSchema<any> | AnySchema;

/** The value a schema validates to: request types are read from the schemas, never written beside them. */
export type Infer<S> = S extends { readonly '~value'?: infer V } ? Exclude<V, undefined> : never;

/** Names of the fields that always have a value after validation: required, or with a default. */
type Present<P, R> = { [K in keyof P]: K extends R ? K : P[K] extends { default: unknown } ? K : never }[keyof P];

type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The value of named fields `P` (an object's properties, or a route's query parameters), `R` required. */
export type FieldsOf<P, R> = Flat<
  { [K in keyof P as K extends Present<P, R> ? K : never]: Infer<P[K]> } & {
    [K in keyof P as K extends Present<P, R> ? never : K]?: Infer<P[K]>;
  }
>;

type Opts<S> = Omit<S, 'type' | '~value' | 'default'>;
/** A builder's result keeps whether a default was given (the field is then always present). */
type Defaulted<D> = [D] extends [undefined] ? unknown : { default: D };

/** Builders: s.string({...}), s.integer(1, 10, {...}), s.object({...}, {required: [...]}). */
export const s = {
  string: <D extends string | undefined = undefined>(o?: Opts<StringSchema> & { default?: D }): StringSchema & Defaulted<D> =>
    ({ type: 'string', ...o }) as StringSchema & Defaulted<D>,
  /** Base64 array data (format byte): the body reader decodes it as it arrives (codec/json-reader.ts). */
  base64: (o?: Omit<Opts<StringSchema>, 'format'>): StringSchema<Base64Data> =>
    ({ type: 'string', format: 'byte', ...o }) as StringSchema<Base64Data>,
  enum: <const T extends string, D extends T | undefined = undefined>(
    values: readonly T[],
    o?: Opts<StringSchema<T>> & { default?: D },
  ): StringSchema<T> & Defaulted<D> => ({ type: 'string', enum: values, ...o }) as StringSchema<T> & Defaulted<D>,
  integer: <D extends number | undefined = undefined>(
    minimum: number,
    maximum: number,
    o?: Omit<Opts<IntegerSchema>, 'minimum' | 'maximum'> & { default?: D },
  ): IntegerSchema & Defaulted<D> => ({ type: 'integer', minimum, maximum, ...o }) as IntegerSchema & Defaulted<D>,
  number: <D extends number | undefined = undefined>(o?: Opts<NumberSchema> & { default?: D }): NumberSchema & Defaulted<D> =>
    ({ type: 'number', ...o }) as NumberSchema & Defaulted<D>,
  boolean: <D extends boolean | undefined = undefined>(o?: Opts<BooleanSchema> & { default?: D }): BooleanSchema & Defaulted<D> =>
    ({ type: 'boolean', ...o }) as BooleanSchema & Defaulted<D>,
  array: <I extends Schema>(items: I, o?: Omit<Opts<ArraySchema>, 'items'>): ArraySchema<Array<Infer<I>>> =>
    ({ type: 'array', items, ...o }) as ArraySchema<Array<Infer<I>>>,
  object: <P extends Record<string, Schema>, R extends keyof P & string = never>(
    properties: P,
    o?: Omit<Opts<ObjectSchema>, 'properties' | 'required'> & { required?: readonly R[] },
  ): ObjectSchema<FieldsOf<P, R>> => ({ type: 'object', properties, additionalProperties: false, ...o }) as ObjectSchema<FieldsOf<P, R>>,
  /** A free-form JSON object (metadata, filters). */
  json: (o?: Omit<Opts<ObjectSchema>, 'properties'>): ObjectSchema => ({
    type: 'object',
    properties: {},
    additionalProperties: true,
    ...o,
  }),
  any: (o: Opts<AnySchema> = {}): AnySchema => ({ type: 'any', ...o }),
};
