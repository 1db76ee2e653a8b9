// Private: the passes of poisson_2d's conjugate gradients on the finest grid, where the operator is
// the standard 5-point stencil A u = (4 u_ij - u_i-1,j - u_i+1,j - u_i,j-1 - u_i,j+1) / h² with
// u = 0 beyond the boundary (GridOp with delta = 1). At 512² one CG iteration touches ~10 MB that
// sits in cache, so its cost is passes over memory and thread synchronisation: a step fuses the
// direction update, the matrix-vector product with <p, Ap>, and the x / r updates with ||r||²
// into one OpenMP parallel region (two to four barriers); A p is recomputed where it is needed
// instead of being stored. Reductions are summed per thread in a
// fixed order, so results do not depend on timing.
#pragma once

#include <cstdint>

namespace tts::sim::detail {

struct Stencil5 {
  int64_t n = 0;                 // points per axis (>= 2)
  double h = 0;                  // spacing
  const double* zero = nullptr;  // n zeros: the row beyond the boundary
};

// One CG step. When z is set the direction is first renewed: p_out = z + beta p (p may be p_out);
// otherwise p is the direction as it stands. Then alpha = rz / <p, A p>, x += alpha p (x = alpha p
// when x_zero), r_out = r_in - alpha A p (r_in may be r_out; A p is not stored). When b is set the
// same pass also measures the true residual ||b - A x||² of the updated x, row by row a row behind
// the update while the rows are in cache (what a separate pass would read again), and leaves
// r_out unwritten: such a step is expected to be the last, and when it is not, finish_step writes
// r_out before the next step.
struct CgStep {
  const double* z = nullptr;
  double beta = 0;
  const double* p = nullptr;
  double* p_out = nullptr;
  double rz = -1;  // <r, z>; negative: no preconditioner and p = r_in, so rz = <p, p> (measured here)
  double* x = nullptr;
  bool x_zero = false;
  const double* r_in = nullptr;
  double* r_out = nullptr;
  const double* b = nullptr;
};

struct CgStepResult {
  double pq = 0;        // <p, A p>; when not > 0 (p = 0) nothing was updated
  double pp = 0;        // <p, p>
  double rz = 0;        // the <r, z> the step used
  double rr = 0;        // ||r_out||²
  double true_rr = -1;  // ||b - A x||² when b was set (and the step updated x), else -1
  double alpha = 0;
};

CgStepResult cg_step(const Stencil5& A, const CgStep& s);

// r_out = r_in - alpha A p for a step that measured the true residual instead (see CgStep).
void finish_step(const Stencil5& A, const CgStep& s, const CgStepResult& res);

// ||b - A x||², and r = b - A x when r is not null (r may be b, not x).
double residual(const Stencil5& A, const double* b, const double* x, double* r);

// <r, z> and <r, r> in one pass over N elements.
void dot2(const double* r, const double* z, int64_t N, double* rz, double* rr);

}  // namespace tts::sim::detail
