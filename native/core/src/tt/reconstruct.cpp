// Fused reconstruction: blocks of (left interface x right interface), cast, scattered to the array's
// C order through the offset tables, and compared with a reference in the same pass.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ttstore/internal/dtype_io.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/qtt_svd_run.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/internal/tt_checks.hpp"
#include "ttstore/internal/tt_interfaces.hpp"
#include "ttstore/tt.hpp"

namespace tts {
namespace {

struct Accum {
  double err_sq = 0, max_abs = 0, ref_sq = 0;
};

Fingerprint fused(const TensorTrain& tt, const QttLayout& layout, const MutableArrayView& out, const ArrayView& ref) {
  detail::check_structure(tt, "tensor train");
  if (tt.modes != layout.modes) {
    throw InvalidArgument("the tensor train's modes do not match the layout's");
  }
  if (!out.data && !ref.data) throw InvalidArgument("reconstruct needs an output or a reference");
  const int64_t N = layout.numel();
  if (out.data && out.numel != N) {
    throw InvalidArgument("output has " + std::to_string(out.numel) + " elements, expected " + std::to_string(N));
  }
  if (ref.data) detail::check_array(ref, layout, "reference");
  const DType ydt = out.data ? out.dtype : ref.dtype;
  const std::size_t osz = out.data ? dtype_size(out.dtype) : 0;
  const std::size_t rsz = ref.data ? dtype_size(ref.dtype) : 0;

  const int p = detail::choose_split(tt);
  const OffsetTables T = offsets_split_at(layout, p);
  const std::vector<double> L = detail::left_interface(tt, p);
  const std::vector<double> R = detail::right_interface(tt, p);
  const int64_t rp = tt.ranks[p], nL = T.n_hi, nR = T.n_lo;
  const int64_t* lo = T.lo.data();

  // One threaded GEMM per block of ~1M values (rows x column range), then an OpenMP pass over
  // pieces of its rows: cast, scatter, compare.
  constexpr int64_t kBlock = int64_t{1} << 20, kPiece = 4096;
  const int64_t cw = std::min(nR, kBlock);
  const int64_t bsz = std::min(nL, std::max<int64_t>(1, kBlock / cw));
  detail::DoubleBuffer Y(bsz * cw);
  unsigned char* dst = static_cast<unsigned char*>(out.data);
  const unsigned char* src = static_cast<const unsigned char*>(ref.data);
  Accum acc;
  for (int64_t i0 = 0; i0 < nL; i0 += bsz) {
    const int64_t b = std::min(bsz, nL - i0);
    for (int64_t j0 = 0; j0 < nR; j0 += cw) {
      const int64_t c = std::min(cw, nR - j0);
      detail::gemm_in_pieces(CblasNoTrans, b, c, rp, L.data() + i0 * rp, rp, R.data() + j0, nR, Y.data(), c);
      const int64_t pieces = (c + kPiece - 1) / kPiece;
      double e2 = 0, mx = 0, x2 = 0;
#pragma omp parallel for num_threads(detail::threads()) schedule(static) reduction(+ : e2, x2) reduction(max : mx)
      for (int64_t task = 0; task < b * pieces; ++task) {
        const int64_t i = task / pieces, q0 = (task % pieces) * kPiece;
        const int64_t q1 = std::min(c, q0 + kPiece);
        double* y = Y.data() + i * c;
        const int64_t base = T.hi[i0 + i];
        const int64_t* lj = lo + j0;
        detail::dispatch(ydt, [&](auto e) {
          using E = decltype(e);
          if (dst) {
            for (int64_t j = q0; j < q1; ++j) {
              unsigned char* q = dst + static_cast<std::size_t>(base + lj[j]) * osz;
              E::store(q, y[j]);
              y[j] = E::load(q);
            }
          } else {
            for (int64_t j = q0; j < q1; ++j) y[j] = E::cast_value(y[j]);
          }
          return 0;
        });
        if (src) {
          detail::dispatch(ref.dtype, [&](auto e) {
            using E = decltype(e);
            double s = 0, m = 0, xs = 0;
            for (int64_t j = q0; j < q1; ++j) {
              const double x = E::load(src + static_cast<std::size_t>(base + lj[j]) * rsz);
              const double dlt = x - y[j];
              s += dlt * dlt;
              xs += x * x;
              m = std::max(m, std::fabs(dlt));
            }
            e2 += s;
            x2 += xs;
            mx = std::max(mx, m);
            return 0;
          });
        }
      }
      acc.err_sq += e2;
      acc.ref_sq += x2;
      acc.max_abs = std::max(acc.max_abs, mx);
    }
  }
  Fingerprint f;
  if (!src) return f;
  f.frobenius_error = std::sqrt(acc.err_sq);
  f.max_abs_error = acc.max_abs;
  f.reference_norm = std::sqrt(acc.ref_sq);
  if (f.reference_norm > 0) {
    f.relative_error = f.frobenius_error / f.reference_norm;
  } else {
    f.relative_error = f.frobenius_error == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  }
  return f;
}

}  // namespace

Fingerprint reconstruct(const TensorTrain& tt, const QttLayout& layout, const MutableArrayView& out,
                        const ArrayView& ref) {
  return fused(tt, layout, out, ref);
}

Fingerprint fingerprint(const TensorTrain& tt, const QttLayout& layout, const ArrayView& ref) {
  if (!ref.data) throw InvalidArgument("fingerprint needs a reference array");
  return fused(tt, layout, MutableArrayView{}, ref);
}

}  // namespace tts
