// GET /docs: the OpenAPI document rendered on the server as one self-contained HTML page (no script,
// no CDN: an on-prem server often has no internet, and the page must work from it alone).

type Json = Record<string, any>;

const esc = (v: unknown): string => String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function typeOf(sc: Json): string {
  if (sc.$ref) return String(sc.$ref).split('/').pop()!;
  if (sc.enum) return sc.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if (sc.type === 'array') return `array of ${sc.items ? typeOf(sc.items) : 'any'}`;
  const bits = [sc.type ?? 'any'];
  if (sc.minimum !== undefined || sc.maximum !== undefined) bits.push(`[${sc.minimum ?? '-∞'}, ${sc.maximum ?? '∞'}]`);
  if (sc.exclusiveMinimum !== undefined) bits.push(`> ${sc.exclusiveMinimum}`);
  if (sc.exclusiveMaximum !== undefined) bits.push(`< ${sc.exclusiveMaximum}`);
  if (sc.pattern) bits.push(`/${sc.pattern}/`);
  return bits.join(' ');
}

/** A schema's fields as nested lists: name, type, required, default, description. */
function fields(sc: Json | undefined, depth = 0): string {
  if (!sc || depth > 4) return '';
  const props: Json = sc.properties ?? (sc.type === 'array' && sc.items?.properties ? sc.items.properties : undefined);
  const variants: Json[] | undefined = sc.oneOf;
  if (!props && !variants) return '';
  const required: string[] = sc.required ?? [];
  const rows = Object.entries(props ?? {}).map(([name, p]: [string, any]) => {
    const meta = [
      required.includes(name) ? '<b>required</b>' : '',
      p.default !== undefined ? `default <code>${esc(JSON.stringify(p.default))}</code>` : '',
    ]
      .filter(Boolean)
      .join(', ');
    return (
      `<li><code>${esc(name)}</code> <span class="t">${esc(typeOf(p))}</span>${meta ? ` (${meta})` : ''}` +
      `${p.description ? ` — ${esc(p.description)}` : ''}${fields(p.type === 'array' ? p.items : p, depth + 1)}</li>`
    );
  });
  const alts = (variants ?? []).map((v) => `<li>variant <b>${esc(v.title ?? '')}</b>${fields(v, depth + 1)}</li>`);
  return `<ul>${rows.join('')}${alts.join('')}</ul>`;
}

function operation(path: string, method: string, op: Json): string {
  const params = (op.parameters ?? []) as Json[];
  const body = op.requestBody?.content as Json | undefined;
  const auth =
    (op.security as Json[]).length === 0
      ? 'none'
      : (op.security as Json[]).some((s) => s.serviceKey)
        ? 'service key (Bearer)'
        : 'tenant API key (X-Api-Key or Bearer)';
  const responses = Object.entries(op.responses as Json).map(([status, r]: [string, any]) => {
    const json = r.content?.['application/json']?.schema;
    const types = Object.keys(r.content ?? {}).join(', ');
    return `<li><b>${esc(status)}</b> ${esc(r.description)}${types ? ` <span class="t">${esc(types)}</span>` : ''}${fields(json)}</li>`;
  });
  return `<section id="${esc(op.operationId)}"><h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p>${esc(op.summary)}</p>${op.description ? `<p>${esc(op.description).replace(/\n\n/g, '</p><p>')}</p>` : ''}
<p class="auth">Auth: ${esc(auth)}</p>
${params.length > 0 ? `<h4>Parameters</h4><ul>${params.map((p) => `<li><code>${esc(p.name)}</code> (${esc(p.in)}) <span class="t">${esc(typeOf(p.schema ?? {}))}</span>${p.schema?.default !== undefined ? ` default <code>${esc(JSON.stringify(p.schema.default))}</code>` : ''}${p.schema?.description ? ` — ${esc(p.schema.description)}` : ''}</li>`).join('')}</ul>` : ''}
${
  body
    ? `<h4>Request body</h4><ul>${Object.entries(body)
        .map(
          ([type, c]: [string, any]) =>
            `<li><span class="t">${esc(type)}</span>${c.schema?.description && !c.schema.properties ? ` — ${esc(c.schema.description)}` : ''}${fields(c.schema)}</li>`,
        )
        .join('')}</ul>`
    : ''
}
<h4>Responses</h4><ul>${responses.join('')}</ul></section>`;
}

export function renderDocsPage(doc: Json): string {
  const byTag = new Map<string, string[]>();
  const toc = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const tag = (op.tags?.[0] as string) ?? 'other';
      (byTag.get(tag) ?? byTag.set(tag, []).get(tag)!).push(operation(path, method, op));
      (toc.get(tag) ?? toc.set(tag, []).get(tag)!).push(
        `<li><a href="#${esc(op.operationId)}">${esc(method.toUpperCase())} ${esc(path)}</a></li>`,
      );
    }
  }
  const tags = (doc.tags as Json[]).map((t) => t.name as string);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)} ${esc(doc.info.version)} API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#222}
nav{width:300px;flex:none;height:100vh;overflow:auto;position:sticky;top:0;background:#f6f6f6;padding:1em;box-sizing:border-box;font-size:13px}
main{padding:1em 2em;max-width:980px}
nav ul{list-style:none;padding-left:.5em}
code{background:#f0f0f0;padding:0 .25em;border-radius:3px}
section{border-top:1px solid #ddd;padding-top:.5em;margin-top:1.5em}
.m{display:inline-block;min-width:4em;text-align:center;color:#fff;border-radius:3px;font-size:13px;padding:0 .4em}
.get{background:#2a7ab0}.post{background:#3a9b4a}.delete{background:#b03a2a}
.t{color:#7a4a9a;font-size:13px}.auth{color:#666;font-size:13px}
</style></head><body>
<nav><b>${esc(doc.info.title)} ${esc(doc.info.version)}</b><p><a href="/openapi.json">openapi.json</a></p>
${tags.map((t) => `<p><b>${esc(t)}</b></p><ul>${(toc.get(t) ?? []).join('')}</ul>`).join('\n')}</nav>
<main><h1>${esc(doc.info.title)} API reference</h1><p>${esc(doc.info.description)}</p>
${(doc.tags as Json[]).map((t) => `<h2>${esc(t.name)}</h2><p>${esc(t.description)}</p>${(byTag.get(t.name) ?? []).join('\n')}`).join('\n')}
<h2>Problem</h2><p>Every error is <code>application/problem+json</code>:</p>${fields(doc.components.schemas.Problem)}
</main></body></html>
`;
}
