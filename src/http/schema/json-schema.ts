// JSON Schema (draft 2020-12, as OpenAPI 3.1 embeds it) of a request schema. Only what validation
// enforces is emitted; rules of the refine hooks are stated in the descriptions.
import type { Schema } from './types.js';

export type JsonSchema = Record<string, unknown>;

/**
 * `open`: for response bodies, which may gain fields in later versions; their objects are not closed
 * with additionalProperties: false (a client should ignore fields it does not know).
 */
export function toJsonSchema(sc: Schema, opts: { open?: boolean } = {}): JsonSchema {
  const out: JsonSchema = {};
  const put = (k: string, v: unknown) => {
    if (v !== undefined) out[k] = v;
  };
  switch (sc.type) {
    case 'string':
      out.type = 'string';
      put('enum', sc.enum ? [...sc.enum] : undefined);
      put('pattern', sc.pattern?.source);
      put('minLength', sc.minLength);
      put('maxLength', sc.maxLength);
      put('format', sc.format);
      break;
    case 'integer':
      out.type = 'integer';
      out.minimum = sc.minimum;
      out.maximum = sc.maximum;
      break;
    case 'number':
      out.type = 'number';
      put('minimum', sc.minimum);
      put('maximum', sc.maximum);
      put('exclusiveMinimum', sc.exclusiveMinimum);
      put('exclusiveMaximum', sc.exclusiveMaximum);
      break;
    case 'boolean':
      out.type = 'boolean';
      break;
    case 'array':
      out.type = 'array';
      out.items = toJsonSchema(sc.items, opts);
      put('minItems', sc.minItems);
      put('maxItems', sc.maxItems);
      break;
    case 'object': {
      out.type = 'object';
      put('title', sc.title);
      const names = Object.keys(sc.properties);
      if (names.length > 0) out.properties = Object.fromEntries(names.map((n) => [n, toJsonSchema(sc.properties[n]!, opts)]));
      if (sc.required && sc.required.length > 0) out.required = [...sc.required];
      if (sc.additionalProperties === false && !opts.open) out.additionalProperties = false;
      put('maxProperties', sc.maxProperties);
      if (sc.oneOf) out.oneOf = sc.oneOf.map((alt) => ({ ...toJsonSchema(alt.schema, opts), title: alt.title }));
      break;
    }
    case 'any':
      break;
  }
  put('description', sc.description);
  put('default', sc.default ?? sc.docDefault);
  if (sc.example !== undefined) out.examples = [sc.example];
  return out;
}
