// Validation of simulation requests at the edge: defaults filled in, every bad field a 400 problem
// that names it, grid bounds per solver with their own codes.
import { expect } from 'chai';
import { MAX_N_BITS, SOLVERS } from '../../src/routes/simulation/endpoints.js';
import { MAX_PREFIX_BYTES } from '../../src/limits/input.js';
import { parseListQuery, parseSubmit } from '../../src/routes/simulation/routes.js';
import { problemOf } from '../helpers/problems.js';

const MINIMAL: Record<string, Record<string, unknown>> = {
  poisson_2d: { n_bits: 9 },
  navier_stokes_2d: { n_bits: 9, reynolds: 100, steps: 10, dt: 0.003 },
  euler_2d: { n_bits: 9, t_end: 0.5 },
  helmholtz_3d: { n_bits: 9, nu: 0.1, dt: 0.01, steps: 5 },
};

describe('simulation: request validation', () => {
  it('fills the documented defaults of every solver', () => {
    expect(parseSubmit({ solver: 'poisson_2d', params: { n_bits: 9 } })).to.deep.equal({
      solver: 'poisson_2d',
      namespace: 'default',
      outputKeyPrefix: 'poisson_2d',
      params: { n_bits: 9, rhs: 'manufactured', tol: 1e-8, preconditioner: 'multigrid', seed: 0, max_seconds: 3600 },
    });
    expect(parseSubmit({ solver: 'navier_stokes_2d', params: MINIMAL.navier_stokes_2d }).params).to.deep.equal({
      n_bits: 9,
      reynolds: 100,
      steps: 10,
      dt: 0.003,
      max_rank: 64,
      initial: 'taylor_green',
      seed: 0,
      max_seconds: 3600,
    });
    expect(parseSubmit({ solver: 'euler_2d', params: MINIMAL.euler_2d }).params).to.deep.equal({
      n_bits: 9,
      problem: 'isentropic_vortex',
      t_end: 0.5,
      cfl: 0.4,
      seed: 0,
      max_seconds: 3600,
    });
    expect(parseSubmit({ solver: 'helmholtz_3d', params: MINIMAL.helmholtz_3d }).params).to.deep.equal({
      n_bits: 9,
      nu: 0.1,
      dt: 0.01,
      steps: 5,
      boundary: 'periodic',
      initial: 'modes',
      modes: [[1, 1, 1, 1]],
      source: 'none',
      seed: 0,
      max_rank: 64,
      tol: 1e-8,
      max_seconds: 3600,
    });
  });

  it('keeps given values, namespace and prefix', () => {
    const r = parseSubmit({
      solver: 'euler_2d',
      namespace: 'sims',
      output_key_prefix: 'runs/kh',
      params: { n_bits: 10, problem: 'kelvin_helmholtz', steps: 40, cfl: 0.3, seed: 7, snapshot_every: 10 },
    });
    expect(r).to.deep.equal({
      solver: 'euler_2d',
      namespace: 'sims',
      outputKeyPrefix: 'runs/kh',
      params: { n_bits: 10, problem: 'kelvin_helmholtz', steps: 40, cfl: 0.3, seed: 7, snapshot_every: 10, max_seconds: 3600 },
    });
  });

  it('answers n_bits below 9 with grid_too_small and above the solver largest with grid_too_large', () => {
    for (const solver of SOLVERS) {
      const small = problemOf(() => parseSubmit({ solver, params: { ...MINIMAL[solver], n_bits: 8 } }));
      expect(small.status).to.equal(400);
      expect(small.code).to.equal('grid_too_small');
      expect(small.extra.field).to.equal('params.n_bits');
      const max = MAX_N_BITS[solver];
      expect(() => parseSubmit({ solver, params: { ...MINIMAL[solver], n_bits: max } })).to.not.throw();
      const large = problemOf(() => parseSubmit({ solver, params: { ...MINIMAL[solver], n_bits: max + 1 } }));
      expect(large.code).to.equal('grid_too_large');
      expect(large.extra).to.include({ field: 'params.n_bits', max_n_bits: max });
    }
    expect(MAX_N_BITS).to.deep.equal({ poisson_2d: 14, navier_stokes_2d: 12, euler_2d: 13, helmholtz_3d: 14 });
  });

  it('answers an unknown solver with unknown_solver listing the four', () => {
    const p = problemOf(() => parseSubmit({ solver: 'heat_1d', params: { n_bits: 9 } }));
    expect(p.status).to.equal(400);
    expect(p.code).to.equal('unknown_solver');
    expect(p.extra.solvers).to.deep.equal(['poisson_2d', 'navier_stokes_2d', 'euler_2d', 'helmholtz_3d']);
  });

  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['missing solver', { params: { n_bits: 9 } }, 'solver'],
    ['missing params', { solver: 'poisson_2d' }, 'params'],
    ['params not an object', { solver: 'poisson_2d', params: [9] }, 'params'],
    ['unknown top-level field', { solver: 'poisson_2d', params: { n_bits: 9 }, priority: 1 }, 'priority'],
    ['bad namespace', { solver: 'poisson_2d', namespace: 'no spaces', params: { n_bits: 9 } }, 'namespace'],
    ['empty prefix', { solver: 'poisson_2d', output_key_prefix: '', params: { n_bits: 9 } }, 'output_key_prefix'],
    ['control character in prefix', { solver: 'poisson_2d', output_key_prefix: 'a\nb', params: { n_bits: 9 } }, 'output_key_prefix'],
    [
      'prefix too long',
      { solver: 'poisson_2d', output_key_prefix: 'x'.repeat(MAX_PREFIX_BYTES + 1), params: { n_bits: 9 } },
      'output_key_prefix',
    ],
    ['missing n_bits', { solver: 'poisson_2d', params: {} }, 'params.n_bits'],
    ['fractional n_bits', { solver: 'poisson_2d', params: { n_bits: 9.5 } }, 'params.n_bits'],
    ['string n_bits', { solver: 'poisson_2d', params: { n_bits: '9' } }, 'params.n_bits'],
    ['unknown param', { solver: 'poisson_2d', params: { n_bits: 9, tolerance: 1e-6 } }, 'params.tolerance'],
    ['bad rhs', { solver: 'poisson_2d', params: { n_bits: 9, rhs: 'random' } }, 'params.rhs'],
    ['tol out of range', { solver: 'poisson_2d', params: { n_bits: 9, tol: 0 } }, 'params.tol'],
    ['max_iters zero', { solver: 'poisson_2d', params: { n_bits: 9, max_iters: 0 } }, 'params.max_iters'],
    ['bad preconditioner', { solver: 'poisson_2d', params: { n_bits: 9, preconditioner: 'ilu' } }, 'params.preconditioner'],
    ['negative seed', { solver: 'poisson_2d', params: { n_bits: 9, seed: -1 } }, 'params.seed'],
    ['snapshot_every zero', { solver: 'poisson_2d', params: { n_bits: 9, snapshot_every: 0 } }, 'params.snapshot_every'],
    ['missing reynolds', { solver: 'navier_stokes_2d', params: { n_bits: 9, steps: 1, dt: 0.1 } }, 'params.reynolds'],
    ['negative reynolds', { solver: 'navier_stokes_2d', params: { ...MINIMAL.navier_stokes_2d, reynolds: -5 } }, 'params.reynolds'],
    ['missing steps', { solver: 'navier_stokes_2d', params: { n_bits: 9, reynolds: 1, dt: 0.1 } }, 'params.steps'],
    ['missing dt', { solver: 'navier_stokes_2d', params: { n_bits: 9, reynolds: 1, steps: 1 } }, 'params.dt'],
    ['max_rank too large', { solver: 'navier_stokes_2d', params: { ...MINIMAL.navier_stokes_2d, max_rank: 5000 } }, 'params.max_rank'],
    ['bad initial', { solver: 'navier_stokes_2d', params: { ...MINIMAL.navier_stokes_2d, initial: 'vortex' } }, 'params.initial'],
    ['neither t_end nor steps', { solver: 'euler_2d', params: { n_bits: 9 } }, 'params.t_end'],
    ['both t_end and steps', { solver: 'euler_2d', params: { n_bits: 9, t_end: 1, steps: 3 } }, 'params.steps'],
    ['bad problem', { solver: 'euler_2d', params: { n_bits: 9, steps: 3, problem: 'sod_y' } }, 'params.problem'],
    ['cfl above 1', { solver: 'euler_2d', params: { n_bits: 9, steps: 3, cfl: 1.5 } }, 'params.cfl'],
    ['t_end not finite', { solver: 'euler_2d', params: { n_bits: 9, t_end: 'inf' } }, 'params.t_end'],
    ['missing nu', { solver: 'helmholtz_3d', params: { n_bits: 9, dt: 0.1, steps: 1 } }, 'params.nu'],
    ['bad boundary', { solver: 'helmholtz_3d', params: { ...MINIMAL.helmholtz_3d, boundary: 'neumann' } }, 'params.boundary'],
    ['empty modes', { solver: 'helmholtz_3d', params: { ...MINIMAL.helmholtz_3d, modes: [] } }, 'params.modes'],
    [
      'short mode',
      {
        solver: 'helmholtz_3d',
        params: {
          ...MINIMAL.helmholtz_3d,
          modes: [
            [1, 1, 1, 1],
            [1, 2, 3],
          ],
        },
      },
      'params.modes[1]',
    ],
    [
      'modes with gaussian',
      { solver: 'helmholtz_3d', params: { ...MINIMAL.helmholtz_3d, initial: 'gaussian', modes: [[1, 1, 1, 1]] } },
      'params.modes',
    ],
    ['bad source', { solver: 'helmholtz_3d', params: { ...MINIMAL.helmholtz_3d, source: 'dipole' } }, 'params.source'],
    ['max_seconds above a day', { solver: 'poisson_2d', params: { n_bits: 9, max_seconds: 86_401 } }, 'params.max_seconds'],
    ['max_seconds zero', { solver: 'poisson_2d', params: { n_bits: 9, max_seconds: 0 } }, 'params.max_seconds'],
    ['t_end above the largest', { solver: 'euler_2d', params: { n_bits: 9, t_end: 1e6 } }, 'params.t_end'],
    [
      'reynolds above the largest',
      { solver: 'navier_stokes_2d', params: { ...MINIMAL.navier_stokes_2d, reynolds: 1e13 } },
      'params.reynolds',
    ],
    ['dt above 1', { solver: 'navier_stokes_2d', params: { ...MINIMAL.navier_stokes_2d, dt: 2 } }, 'params.dt'],
    ['max_iters above a million', { solver: 'poisson_2d', params: { n_bits: 9, max_iters: 1_000_001 } }, 'params.max_iters'],
  ];
  for (const [what, body, field] of cases) {
    it(`rejects ${what} with 400 invalid_request naming ${field}`, () => {
      const p = problemOf(() => parseSubmit(body));
      expect(p.status).to.equal(400);
      expect(p.code).to.equal('invalid_request');
      expect(p.extra.field).to.equal(field);
      expect(p.message).to.contain(field.replace(/\[\d+\]$/, ''));
    });
  }

  it('parses list queries: limit 1..1000 (default 50), namespace, status', () => {
    expect(parseListQuery({})).to.deep.equal({ limit: 50 });
    expect(parseListQuery({ limit: '1000', namespace: 'sims', status: 'running' })).to.deep.equal({
      limit: 1000,
      namespace: 'sims',
      status: 'running',
    });
    for (const [q, field] of [
      [{ limit: '0' }, 'limit'],
      [{ limit: '1001' }, 'limit'],
      [{ limit: '5x' }, 'limit'],
      [{ status: 'done' }, 'status'],
      [{ namespace: '-x' }, 'namespace'],
    ] as const) {
      const p = problemOf(() => parseListQuery(q));
      expect(p.status).to.equal(400);
      expect(p.extra.field).to.equal(field);
    }
  });
});
