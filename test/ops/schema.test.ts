// The request-schema layer: one description validates at the edge and becomes JSON Schema.
import { expect } from 'chai';
import { toJsonSchema } from '../../src/http/schema/json-schema.js';
import { s } from '../../src/http/schema/types.js';
import { parseBody, parseParams } from '../../src/http/schema/validate.js';
import { problemOf } from '../helpers/problems.js';

const body = s.object(
  {
    name: s.string({ pattern: /^[a-z]+$/ }),
    size: s.integer(1, 10, { default: 3 }),
    ratio: s.number({ exclusiveMinimum: 0, maximum: 1 }),
    tags: s.array(s.string(), { maxItems: 2 }),
    limits: s.object({ requests: s.integer(1, 100) }, { required: ['requests'] }),
  },
  { required: ['name'] },
);

describe('request schemas', () => {
  it('returns the body with defaults filled in, treating null as absent', () => {
    expect(parseBody(body, { name: 'abc' })).to.deep.equal({ name: 'abc', size: 3 });
    expect(parseBody(body, { name: 'abc', size: null, ratio: null })).to.deep.equal({ name: 'abc', size: 3 });
    expect(parseBody(body, { name: 'x', size: 10, ratio: 1, tags: ['a'], limits: { requests: 5 } })).to.deep.equal({
      name: 'x',
      size: 10,
      ratio: 1,
      tags: ['a'],
      limits: { requests: 5 },
    });
  });

  it('answers 400 invalid_request naming the path of the first bad field', () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'name'],
      [{ name: 'ABC' }, 'name'],
      [{ name: 'a', size: 11 }, 'size'],
      [{ name: 'a', size: 2.5 }, 'size'],
      [{ name: 'a', ratio: 0 }, 'ratio'],
      [{ name: 'a', tags: ['x', 'y', 'z'] }, 'tags'],
      [{ name: 'a', tags: ['x', 1] }, 'tags[1]'],
      [{ name: 'a', limits: {} }, 'limits.requests'],
      [{ name: 'a', limits: { requests: 1, burst: 2 } }, 'limits.burst'],
      [{ name: 'a', colour: 'red' }, 'colour'],
    ];
    for (const [value, field] of cases) {
      const p = problemOf(() => parseBody(body, value));
      expect(p.status, JSON.stringify(value)).to.equal(400);
      expect(p.code).to.equal('invalid_request');
      expect(p.extra.field, JSON.stringify(value)).to.equal(field);
      expect(p.message).to.contain(field);
    }
    expect(problemOf(() => parseBody(body, [1])).message).to.equal('the request body must be a JSON object');
  });

  it('converts query parameters to their types and refuses repeats and non-numbers', () => {
    const q = { limit: s.integer(1, 100, { default: 10 }), prefix: s.string() };
    expect(parseParams(q, {})).to.deep.equal({ limit: 10 });
    expect(parseParams(q, { limit: '7', prefix: 'a/', other: 'x' })).to.deep.equal({ limit: 7, prefix: 'a/' });
    for (const limit of ['5x', '1.0', '0', '101', '']) expect(problemOf(() => parseParams(q, { limit })).extra.field).to.equal('limit');
    expect(problemOf(() => parseParams(q, { limit: ['1', '2'] })).extra.field).to.equal('limit');
  });

  it('emits the JSON Schema of exactly what it enforces', () => {
    expect(toJsonSchema(body)).to.deep.equal({
      type: 'object',
      properties: {
        name: { type: 'string', pattern: '^[a-z]+$' },
        size: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
        ratio: { type: 'number', maximum: 1, exclusiveMinimum: 0 },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
        limits: {
          type: 'object',
          properties: { requests: { type: 'integer', minimum: 1, maximum: 100 } },
          required: ['requests'],
          additionalProperties: false,
        },
      },
      required: ['name'],
      additionalProperties: false,
    });
  });
});
