// Writes clients/typescript/src/generated.ts from the OpenAPI document: each operation's method, path,
// success status and credential, and TypeScript types for its path, query, JSON body and JSON reply.
// The client reads every request and reply type from there, so no schema is written twice by hand.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type Schema = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

function pascal(id: string): string {
  return id.replace(/(^|_)([a-z])/g, (_, _u: string, c: string) => c.toUpperCase());
}

function doc(text: unknown, pad: string): string {
  if (typeof text !== 'string' || text === '') return '';
  return `${pad}/** ${text.replace(/\*\//g, '* /').replace(/\n/g, ' ')} */\n`;
}

function propName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/** The TypeScript type of a JSON Schema, in the subset the service's schemas use. */
export function typeOf(s: Schema | boolean | undefined, pad = ''): string {
  if (s === undefined || s === true) return 'unknown';
  if (s === false) return 'never';
  if (typeof s.$ref === 'string') return s.$ref.split('/').pop()!;
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if ('const' in s) return JSON.stringify(s.const);
  for (const k of ['oneOf', 'anyOf']) {
    if (!Array.isArray(s[k])) continue;
    const union = s[k].map((x: Schema) => typeOf(x, pad)).join(' | ');
    const { [k]: _, ...base } = s;
    // A base object next to oneOf holds the fields every branch shares (and may narrow).
    return base.properties ? `${typeOf(base, pad)} & (${union})` : union;
  }
  const types: string[] = Array.isArray(s.type) ? s.type : s.type !== undefined ? [s.type] : s.properties ? ['object'] : [];
  if (types.length === 0) return 'unknown';
  return types.map((t) => one(t, s, pad)).join(' | ');
}

function one(t: string, s: Schema, pad: string): string {
  switch (t) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = typeOf(s.items, pad);
      return /[ |]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`;
    }
    case 'object': {
      const inner = `${pad}  `;
      const required = new Set<string>(s.required ?? []);
      const lines: string[] = [];
      for (const [name, p] of Object.entries<Schema>(s.properties ?? {})) {
        lines.push(`${doc(p.description, inner)}${inner}${propName(name)}${required.has(name) ? '' : '?'}: ${typeOf(p, inner)};\n`);
      }
      const extra = s.additionalProperties;
      if (extra !== undefined && extra !== false)
        lines.push(`${inner}[k: string]: ${extra === true || s.properties ? 'unknown' : typeOf(extra, inner)};\n`);
      else if (extra === undefined && !s.properties) return 'Record<string, unknown>';
      return lines.length === 0 ? 'Record<string, never>' : `{\n${lines.join('')}${pad}}`;
    }
    default:
      return 'unknown';
  }
}

function paramsType(params: Schema[], where: string): string {
  const props: Schema = { type: 'object', properties: {}, required: [], additionalProperties: false };
  for (const p of params.filter((x) => x.in === where)) {
    props.properties[p.name] = { ...p.schema, description: p.description ?? p.schema?.description };
    if (p.required) props.required.push(p.name);
  }
  return typeOf(props);
}

/** The TypeScript source of generated.ts for an OpenAPI document. */
export function generate(api: Schema): string {
  const out: string[] = [
    '// Generated from docs/openapi.json by clients/typescript/tools/generate.ts (npm run build:openapi).\n',
    '// Do not edit by hand; test/clients/coverage.test.ts fails when it is not current.\n',
  ];
  for (const [name, s] of Object.entries<Schema>(api.components?.schemas ?? {})) {
    out.push(`\n${doc(s.description, '')}export type ${name} = ${typeOf(s)};\n`);
  }
  const table: string[] = [];
  const types: string[] = [];
  for (const [p, item] of Object.entries<Schema>(api.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op === undefined) continue;
      const id: string = op.operationId;
      const T = pascal(id);
      const params: Schema[] = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const success = Object.keys(op.responses).find((c) => c.startsWith('2'))!;
      const reply = op.responses[success]?.content ?? {};
      const body = op.requestBody?.content ?? {};
      const schemes = new Set<string>((op.security ?? []).flatMap((r: Schema) => Object.keys(r)));
      const auth = schemes.has('serviceKey') ? 'service' : schemes.size > 0 ? 'tenant' : 'none';
      out.push(`\n${doc(op.summary, '')}export type ${T}Path = ${paramsType(params, 'path')};\n`);
      out.push(`export type ${T}Query = ${paramsType(params, 'query')};\n`);
      out.push(`export type ${T}Request = ${body['application/json'] ? typeOf(body['application/json'].schema) : 'never'};\n`);
      out.push(`export type ${T}Response = ${reply['application/json'] ? typeOf(reply['application/json'].schema) : 'string'};\n`);
      table.push(
        `  ${id}: { method: '${method.toUpperCase()}', path: ${JSON.stringify(p)}, success: ${success}, auth: '${auth}', ` +
          `bodyTypes: ${JSON.stringify(Object.keys(body))}, replyTypes: ${JSON.stringify(Object.keys(reply))} },\n`,
      );
      types.push(`  ${id}: { path: ${T}Path; query: ${T}Query; body: ${T}Request; response: ${T}Response };\n`);
    }
  }
  out.push(`\n/** Every operation of the API: how to call it. */\nexport const OPERATIONS = {\n${table.join('')}} as const;\n`);
  out.push(`\nexport type OperationId = keyof typeof OPERATIONS;\n`);
  out.push(`\n/** Every operation's types. */\nexport interface OperationTypes {\n${types.join('')}}\n`);
  return out.join('');
}

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const GENERATED = path.join(ROOT, 'clients', 'typescript', 'src', 'generated.ts');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const api = JSON.parse(await readFile(path.join(ROOT, 'docs', 'openapi.json'), 'utf8')) as Schema;
  await writeFile(GENERATED, generate(api));
  process.stdout.write(`wrote ${path.relative(process.cwd(), GENERATED)}\n`);
}
