// The TypeScript client keeps up with the API: its generated types are those of the current OpenAPI
// document, and it has a method for every operation the document lists.
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { openApiDocument } from '../../src/http/openapi.js';
import { ENDPOINTS } from '../../src/routes/index.js';
import { METHOD_OF, TtstoreClient } from '../../clients/typescript/src/index.js';
import { generate, GENERATED } from '../../clients/typescript/tools/generate.js';

const doc = JSON.parse(JSON.stringify(openApiDocument(ENDPOINTS))) as { paths: Record<string, Record<string, { operationId?: string }>> };

describe('clients: the TypeScript client covers the OpenAPI document', () => {
  it('has a method for every operation', () => {
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => (op.operationId ? [op.operationId] : [])));
    expect(ids.length).to.be.at.least(29);
    const missing = ids.filter(
      (id) => typeof (TtstoreClient.prototype as any)[(METHOD_OF as Record<string, string>)[id] ?? ''] !== 'function',
    );
    expect(missing, 'operations without a client method').to.deep.equal([]);
  });

  it('its generated types are those of the current document (npm run build:openapi)', async () => {
    expect(await readFile(GENERATED, 'utf8')).to.equal(generate(doc));
  });
});
