// CU costs are written once (src/gate/operations.ts) and every tenant route names the operations its
// 2xx is charged as, so a route without a cost, or a cost no route charges, cannot slip in.
import { expect } from 'chai';
import { OPERATIONS, type Operation } from '../../src/gate/operations.js';
import { ENDPOINTS } from '../../src/routes/index.js';

/** Charged as a job runs, not by a route. */
const NOT_A_ROUTE: Operation[] = ['simulation_run'];

describe('operations: CU costs', () => {
  it('every tenant route names the operations it is charged as; other routes name none', () => {
    for (const ep of ENDPOINTS) {
      if (ep.auth === 'tenant') expect(ep.operations ?? [], ep.id).to.not.be.empty;
      else expect(ep.operations, ep.id).to.equal(undefined);
    }
  });

  it('every operation with a cost is charged by exactly one route (or as a job runs)', () => {
    const named = ENDPOINTS.flatMap((ep) => ep.operations ?? []);
    expect(new Set(named).size, 'an operation named by two routes').to.equal(named.length);
    expect([...named, ...NOT_A_ROUTE].sort()).to.deep.equal(Object.keys(OPERATIONS).sort());
  });
});
