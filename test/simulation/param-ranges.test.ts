// Every solver param has one documented range, the engine's (native/core's tables): the HTTP schema
// is built from it, so at each bound the schema and the solver's own check give the same answer,
// and the rules between params are checked at submission, so that a job never fails for a param its
// submission accepted (CONTRACT.md section 8).
import { expect } from 'chai';
import { engine, type SimParamSpec } from '../../src/engine/index.js';
import { ProblemError } from '../../src/http/errors.js';
import { solverParamsOf } from '../../src/jobs/params.js';
import { SOLVER_PARAMS, SOLVERS, type Solver } from '../../src/routes/simulation/endpoints.js';
import { parseSubmit } from '../../src/routes/simulation/routes.js';

/** Small valid params of each solver, to which one param at a time is set. */
const BASE: Record<Solver, Record<string, unknown>> = {
  poisson_2d: { n_bits: 9, max_iters: 100 },
  navier_stokes_2d: { n_bits: 9, reynolds: 100, steps: 10, dt: 1e-5 },
  euler_2d: { n_bits: 9, steps: 10 },
  helmholtz_3d: { n_bits: 9, nu: 0.1, dt: 0.01, steps: 5 },
};

/**
 * Bounds of the table that a rule between params tightens for BASE (the solver says so at
 * submission, naming the limit): a value there is refused by the solver's check, not by the schema.
 */
const TIGHTENED: Record<string, string> = {
  'navier_stokes_2d.dt.max': 'dt is at most the stability limit of the grid and reynolds',
  'euler_2d.t_end.max': 't_end is at most what 1e6 steps reach at the initial wave speeds',
  'navier_stokes_2d.reynolds.min': 'reynolds 0.001 needs dt below about 4e-8 at n_bits 9',
};

function schemaAccepts(solver: Solver, params: Record<string, unknown>): boolean {
  try {
    parseSubmit({ solver, params });
    return true;
  } catch (err) {
    if (err instanceof ProblemError && err.status === 400) return false;
    throw err;
  }
}

function engineAccepts(solver: Solver, params: Record<string, unknown>): boolean {
  try {
    engine.checkSimulation(solver, solverParamsOf(params));
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_TTS_INVALID') return false;
    throw err;
  }
}

/** Values at and just beyond each bound of a numeric param: [value, inside the range]. */
function probes(p: SimParamSpec & { type: 'integer' | 'number' }): Array<{ at: string; value: number; inside: boolean }> {
  const step = p.type === 'integer' ? 1 : 0;
  const below = (x: number) => (step ? x - 1 : x * (1 - 1e-9) - (x === 0 ? 1e-12 : 0));
  const above = (x: number) => (step ? x + 1 : x * (1 + 1e-9) + (x === 0 ? 1e-12 : 0));
  const lo = p.exclusiveMinimum ? above(p.minimum) : p.minimum;
  const hi = p.exclusiveMaximum ? below(p.maximum) : p.maximum;
  return [
    { at: 'min', value: lo, inside: true },
    { at: 'min', value: p.exclusiveMinimum ? p.minimum : below(p.minimum), inside: false },
    { at: 'max', value: hi, inside: true },
    { at: 'max', value: p.exclusiveMaximum ? p.maximum : above(p.maximum), inside: false },
  ];
}

describe("simulation: every param range is the engine's, and the schema agrees with it", () => {
  it("the schema of each solver has exactly the engine's params (plus max_seconds), with its defaults and required ones", () => {
    const tables = engine.solverParams();
    for (const solver of SOLVERS) {
      const table = tables.solvers[solver]!;
      expect(table, solver).to.be.an('array').that.is.not.empty;
      const schema = SOLVER_PARAMS[solver];
      expect(Object.keys(schema.properties).sort(), solver).to.deep.equal([...table.map((p) => p.name), 'max_seconds'].sort());
      expect([...(schema.required ?? [])].sort(), solver).to.deep.equal(
        table
          .filter((p) => p.required)
          .map((p) => p.name)
          .sort(),
      );
      for (const p of table) {
        const prop = schema.properties[p.name] as { default?: unknown; description?: string };
        if ('default' in p && p.default !== undefined) expect(prop.default, `${solver}.${p.name}`).to.equal(p.default);
        expect(prop.description, `${solver}.${p.name} is documented`).to.be.a('string').that.is.not.empty;
      }
    }
  });

  it('includes the ranges the issue names: t_end, steps, reynolds, dt and max_rank, all bounded', () => {
    const tables = engine.solverParams();
    const find = (solver: Solver, name: string) =>
      tables.solvers[solver]!.find((p) => p.name === name) as SimParamSpec & { maximum: number };
    expect(find('euler_2d', 't_end').maximum).to.be.at.most(1e4);
    expect(find('euler_2d', 'steps').maximum).to.equal(tables.limits.maxSteps);
    expect(find('navier_stokes_2d', 'steps').maximum).to.equal(tables.limits.maxSteps);
    expect(find('navier_stokes_2d', 'reynolds').maximum).to.be.finite;
    expect(find('navier_stokes_2d', 'dt').maximum).to.be.at.most(1);
    expect(find('navier_stokes_2d', 'max_rank').maximum).to.be.at.most(128);
    expect(find('helmholtz_3d', 'max_rank').maximum).to.be.at.most(256);
    expect(find('poisson_2d', 'max_iters').maximum).to.equal(tables.limits.maxSteps);
  });

  for (const solver of SOLVERS) {
    it(`${solver}: at each bound of each numeric param, the schema and the solver give the same answer`, () => {
      const table = engine.solverParams().solvers[solver]!;
      let checked = 0;
      for (const p of table) {
        if (p.type !== 'integer' && p.type !== 'number') continue;
        for (const probe of probes(p)) {
          const params: Record<string, unknown> = { ...BASE[solver], [p.name]: probe.value };
          if (solver === 'euler_2d' && p.name === 't_end') delete params.steps;
          if (solver === 'euler_2d' && p.name === 'steps') delete params.t_end;
          const what = `${solver}.${p.name} = ${probe.value} (${probe.inside ? 'inside' : 'outside'} ${p.type} range at its ${probe.at})`;
          expect(schemaAccepts(solver, params), `schema: ${what}`).to.equal(probe.inside);
          const tightened = TIGHTENED[`${solver}.${p.name}.${probe.at}`];
          if (probe.inside && tightened) {
            expect(engineAccepts(solver, params), `engine: ${what}: ${tightened}`).to.equal(false);
          } else {
            expect(engineAccepts(solver, params), `engine: ${what}`).to.equal(probe.inside);
          }
          checked++;
        }
      }
      expect(checked).to.be.at.least(8);
    });
  }

  it('choices agree: each choice is accepted by both, another string by neither', () => {
    for (const solver of SOLVERS) {
      for (const p of engine.solverParams().solvers[solver]!) {
        if (p.type !== 'choice') continue;
        for (const choice of p.choices) {
          expect(schemaAccepts(solver, { ...BASE[solver], [p.name]: choice }), `${solver}.${p.name}=${choice}`).to.equal(true);
          expect(engineAccepts(solver, { ...BASE[solver], [p.name]: choice }), `${solver}.${p.name}=${choice}`).to.equal(true);
        }
        expect(schemaAccepts(solver, { ...BASE[solver], [p.name]: 'nonsense' })).to.equal(false);
        expect(engineAccepts(solver, { ...BASE[solver], [p.name]: 'nonsense' })).to.equal(false);
      }
    }
  });

  it("rules between params are the solver's, named in its answer: dt within the stability limit, t_end within 1e6 steps, snapshots at most 1000", () => {
    const refusal = (solver: Solver, params: Record<string, unknown>) => {
      try {
        engine.checkSimulation(solver, solverParamsOf(params));
      } catch (err) {
        return (err as Error).message;
      }
      return null;
    };
    expect(refusal('navier_stokes_2d', { n_bits: 9, reynolds: 100, steps: 10, dt: 0.01 })).to.match(
      /param dt of navier_stokes_2d must be at most 0\.00\d+/,
    );
    expect(refusal('navier_stokes_2d', { n_bits: 12, reynolds: 100, steps: 10, dt: 0.001 })).to.match(/stability limit/);
    expect(refusal('euler_2d', { n_bits: 9, t_end: 1e4 })).to.match(/param t_end of euler_2d must be at most \d+/);
    expect(refusal('euler_2d', { n_bits: 13, t_end: 1 })).to.equal(null);
    expect(refusal('navier_stokes_2d', { n_bits: 9, reynolds: 100, steps: 1_000_000, dt: 0.001, snapshot_every: 999 })).to.match(
      /snapshot_every .* at least 1000/,
    );
    expect(refusal('poisson_2d', { n_bits: 9, snapshot_every: 5 })).to.match(/at least 6 for max_iters 5120/);
    expect(refusal('helmholtz_3d', { n_bits: 9, nu: 1, dt: 1, steps: 1, modes: JSON.stringify([[1e7, 1, 1, 1]]) })).to.match(
      /wave numbers/,
    );
    expect(refusal('helmholtz_3d', { n_bits: 9, nu: 1, dt: 1, steps: 1, modes: JSON.stringify([[1, 1, 1, 1e300]]) })).to.match(/amplitude/);
  });
});
