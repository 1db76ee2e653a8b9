// Declarative request schemas: one description of a field serves both the edge validation
// (src/schema/validate.ts) and the OpenAPI document (src/schema/json-schema.ts), so the API reference
// says exactly what the server accepts. A schema is plain data plus two optional hooks for rules JSON
// Schema cannot state (a byte length of UTF-8, a cross-field rule, a problem code of its own).
import type { ProblemError } from '../errors.js';

interface Common<T> {
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
  refine?: (value: T, field: string) => T;
  /** Replaces the generic 400 for a value that failed the generic checks (a problem code of its own). */
  invalid?: (value: unknown, field: string, generic: ProblemError) => ProblemError;
}

export interface StringSchema extends Common<string> {
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

export interface ArraySchema extends Common<unknown[]> {
  type: 'array';
  items: Schema;
  minItems?: number;
  maxItems?: number;
  /** Words for the generic error, e.g. "namespace names". */
  itemsText?: string;
}

export interface ObjectSchema extends Common<Record<string, unknown>> {
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

export type Schema = StringSchema | IntegerSchema | NumberSchema | BooleanSchema | ArraySchema | ObjectSchema | AnySchema;

/** The value a schema validates to (shallow: objects are records). */
export type ValueOf<S extends Schema> =
  S extends StringSchema ? string : S extends IntegerSchema | NumberSchema ? number : S extends BooleanSchema ? boolean
    : S extends ArraySchema ? unknown[] : S extends ObjectSchema ? Record<string, unknown> : unknown;

type Opts<S> = Omit<S, 'type'>;

/** Builders: s.string({...}), s.integer(1, 10, {...}), s.object({...}, {required: [...]}). */
export const s = {
  string: (o: Opts<StringSchema> = {}): StringSchema => ({ type: 'string', ...o }),
  enum: <T extends string>(values: readonly T[], o: Opts<StringSchema> = {}): StringSchema => ({ type: 'string', enum: values, ...o }),
  integer: (minimum: number, maximum: number, o: Omit<Opts<IntegerSchema>, 'minimum' | 'maximum'> = {}): IntegerSchema =>
    ({ type: 'integer', minimum, maximum, ...o }),
  number: (o: Opts<NumberSchema> = {}): NumberSchema => ({ type: 'number', ...o }),
  boolean: (o: Opts<BooleanSchema> = {}): BooleanSchema => ({ type: 'boolean', ...o }),
  array: (items: Schema, o: Omit<Opts<ArraySchema>, 'items'> = {}): ArraySchema => ({ type: 'array', items, ...o }),
  object: (properties: Record<string, Schema>, o: Omit<Opts<ObjectSchema>, 'properties'> = {}): ObjectSchema =>
    ({ type: 'object', properties, additionalProperties: false, ...o }),
  /** A free-form JSON object (metadata, filters). */
  json: (o: Omit<Opts<ObjectSchema>, 'properties'> = {}): ObjectSchema =>
    ({ type: 'object', properties: {}, additionalProperties: true, ...o }),
  any: (o: Opts<AnySchema> = {}): AnySchema => ({ type: 'any', ...o }),
};
