// Tensor trains over a QTT layout: decomposition, reconstruction, contractions, rounding.
#pragma once

#include <functional>
#include <limits>

#include "ttstore/layout.hpp"

namespace tts {

// Element (i_1..i_d) of the mode tensor is G_1[:, i_1, :] G_2[:, i_2, :] ... G_d[:, i_d, :].
// Core k has shape [ranks[k], modes[k], ranks[k+1]] and is stored row-major, so element (a, i, b)
// sits at (a * modes[k] + i) * ranks[k+1] + b. ranks has d + 1 entries with ranks[0] = ranks[d] = 1.
// Arithmetic is always float64; `f32` says the values are exactly representable as float32 and
// are persisted as such (half the bytes).
struct TensorTrain {
  std::vector<int64_t> modes;
  std::vector<int64_t> ranks;
  std::vector<std::vector<double>> cores;
  bool f32 = false;

  int d() const { return static_cast<int>(modes.size()); }
  int64_t max_rank() const;
  int64_t numel() const;          // product of modes
  int64_t core_elements() const;  // sum of core sizes
  int64_t stored_bytes() const;   // core_elements * (f32 ? 4 : 8)
  // Throws InvalidArgument unless shapes chain, r_0 = r_d = 1, sizes match, values are finite.
  void validate() const;
};

// A dense input or output array: `data` points at numel * dtype_size bytes, C order.
struct ArrayView {
  const void* data = nullptr;
  DType dtype = DType::F64;
  int64_t numel = 0;
};
struct MutableArrayView {
  void* data = nullptr;
  DType dtype = DType::F64;
  int64_t numel = 0;
};

struct SvdOptions {
  double tol = 1e-6;     // relative Frobenius error target, 0 <= tol < 1
  int64_t max_rank = 0;  // 0: no cap; else every bond dimension <= max_rank
};

// Progress / cancellation hook for long calls; may be empty. Called from worker threads.
// (The CPU core calls it from the thread that made the call, between steps, never from inside an
// OpenMP region; an exception it throws propagates out of the call, which is how to cancel.)
using ProgressFn = std::function<void(double fraction)>;

// TT-SVD of the array over `layout` (left to right, truncation threshold per unfolding
// tol * ||A||_F / sqrt(d - 1), so ||A - TT||_F <= tol ||A||_F without a rank cap).
// Wide unfoldings go through a streaming TSQR (or a Gram/eigen route when tol is loose enough
// for it to be exact to the threshold), never a full SVD of the wide matrix. Memory: one float64
// working buffer of numel elements plus the cores. Throws InvalidArgument on non-finite input.
// The result has f32 = false.
// tol = 0 still drops singular values at the float64 rounding floor (16 eps ||A|| per step), so
// exactly low-rank data keeps its rank. Leading steps whose unfolding keeps full rank are exact
// and come out as identity cores (an orthonormal basis like any other).
TensorTrain qtt_svd(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt,
                    const ProgressFn& progress = {});

// Decompose, then keep float32 cores when that still meets tol (verified by a measured
// fingerprint), else float64. `fingerprint` is measured against the input after the cast back to
// `a.dtype` (integers rounded half to even and saturated, bools >= 0.5).
struct CompressResult {
  TensorTrain tt;
  Fingerprint fingerprint;
  bool compressible = false;  // tt.stored_bytes() < original bytes (numel * dtype_size)
};
// When the measured error misses tol because of the cast (integer rounding, float16) and no rank cap
// binds, compress decomposes again at tol/10 (twice at most). When the cores already hold as many
// bytes as the input before the sweep ends, it stops early: `tt` is then empty (d() == 0),
// `compressible` is false and `fingerprint` holds only reference_norm (errors 0: the caller keeps
// the input itself, CONTRACT.md's passthrough).
// What compress() may be given beyond the array and its SvdOptions; all of it optional.
struct CompressOptions {
  ProgressFn progress;  // the fraction done, 0 to 1
  // a's numel values already converted to float64 in the layout's mode order (for row_major that is
  // C order), e.g. converted while the input was still arriving: the first sweep takes it as its
  // workspace instead of converting a itself, and overwrites it. Fingerprints are still measured
  // against a.
  double* gathered = nullptr;
  // When finite, the sum of the squares of `gathered`'s values (widen()'s square lanes, totalled by
  // sum_square_lanes), which spares the sweep that pass; it must be that sum, since it sets the
  // truncation threshold.
  double gathered_sum_squares = std::numeric_limits<double>::quiet_NaN();
};
CompressResult compress(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt,
                        const CompressOptions& more = {});

// compress() in the layout the engine chooses for an entry (CONTRACT.md section 3): of row_major and
// interleaved, the one whose result meets the target with fewer stored bytes (row_major on ties, and
// where the two orders coincide). A probe on a coarse sample (at most 1/64 of the array) decides
// when one layout clearly wins; otherwise both are swept in full, so the work is at most two
// sweeps and a probe. `shape` is the array's; `compress_in` runs one full compress in a layout (a
// backend's sweep); `more.gathered` goes only to the row_major sweep.
using CompressInFn = std::function<CompressResult(const QttLayout&, const CompressOptions&)>;
struct LayoutChosen {
  QttLayout layout;
  CompressResult result;
  bool probed = false;      // the coarse probe ran
  bool swept_both = false;  // both layouts were swept in full
};
LayoutChosen compress_best_layout(const ArrayView& a, const std::vector<int64_t>& shape, const SvdOptions& opt,
                                  const CompressOptions& more, const CompressInFn& compress_in);

// compress()'s first step done ahead, piece by piece: n elements of `dtype` at `src` (any alignment)
// as float64 into dst[0, n), in the order given. An input converted this way in C order, as it
// arrives, is compress()'s `gathered` for a row_major layout.
//
// With `lanes` (kSquareLanes running sums), the square of the piece's element i is also added to
// lanes[(first + i) mod kSquareLanes], where `first` is the piece's index in the whole input. When
// the pieces are converted in order, each lane adds its elements in the same order however the
// input was cut, so sum_square_lanes() gives the same bits for any cut: compress()'s
// gathered_sum_squares, taken while the input arrived.
inline constexpr int kSquareLanes = 16;
void widen(const void* src, DType dtype, int64_t n, double* dst, double* lanes = nullptr, int64_t first = 0);
// The lanes' sum, added in a fixed order.
double sum_square_lanes(const double* lanes);

// Rebuild the dense array (mode order mapped back to C order through the layout) into `out`
// (cast to out.dtype as above) and, when `ref` has data, measure the fingerprint against it in the
// same pass. Either `out.data` or `ref.data` may be null (not both). No N-sized temporary: blocks
// of a left interface times a right interface, one GEMM per block.
Fingerprint reconstruct(const TensorTrain& tt, const QttLayout& layout, const MutableArrayView& out,
                        const ArrayView& ref);
// Fingerprint of tt against ref as if reconstructed to ref.dtype (no output written).
Fingerprint fingerprint(const TensorTrain& tt, const QttLayout& layout, const ArrayView& ref);

// <a, b> of two TTs with equal modes, O(d n r^3). Throws InvalidArgument on mode mismatch.
double dot(const TensorTrain& a, const TensorTrain& b);
double norm(const TensorTrain& a);
double distance(const TensorTrain& a, const TensorTrain& b);  // ||a - b||, from dot products, >= 0
// <q, c_j> for every candidate, one call, parallel over candidates (OpenMP).
std::vector<double> dot_batch(const TensorTrain& q, const std::vector<const TensorTrain*>& cands);

// TT rounding: right-to-left orthogonalisation, then left-to-right truncated SVDs with the
// threshold tol * ||tt|| / sqrt(d - 1) and the rank cap. Result has f32 = false.
TensorTrain round(const TensorTrain& tt, const SvdOptions& opt);
// In place: cores 1..d-1 left-orthogonal (resp. 2..d right-orthogonal); the norm moves to the
// last (resp. first) core. Ranks may shrink to the numerical rank.
void orthogonalize_left(TensorTrain& tt);
void orthogonalize_right(TensorTrain& tt);

// Round every core value to float32 (and set f32 = true).
TensorTrain to_f32(const TensorTrain& tt);

// The same row_major array as a train over other mode sizes of equal product (a put_cores split
// brought into the engine's, so that it contracts with the entries the engine made). Left to right,
// neighbouring cores are merged where a target mode straddles one of tt's boundaries, and a core is
// split where a target boundary falls inside it: exactly, with an identity on the smaller side of the
// unfolding, so a split only copies values and the new bond is min(r n_left, n_right r'). Merges
// multiply cores (rounded as any product; the result then has f32 = false). Throws InvalidArgument
// when the products differ or a mode is < 1.
TensorTrain resplit(const TensorTrain& tt, const std::vector<int64_t>& modes);

// What a train of these modes and ranks costs the engine, from its header alone, in multiply-adds
// (the cost of a value copied counts as one).
struct TrainWork {
  double contraction = 0;       // its self inner product (its norm): sum_k n_k r_k r_k+1 (r_k + r_k+1)
  double reconstruction = 0;    // a dense rebuild (both interfaces and the blocks' GEMMs)
  double resplit = 0;           // resplit() into the target modes plus the self inner product there
  double resplit_elements = 0;  // values the train holds in the target modes
  double numel = 0;             // values of the array
  double max() const;           // the largest of the three works
  // Every call within ttstore/limits.hpp's bounds: kMaxTrainWork each, the rebuild also
  // kMaxRebuildWorkPerValue per value when that is more.
  bool within_limits() const;
};
// Throws InvalidArgument when the ranks do not chain or the products of modes and target differ.
TrainWork train_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks,
                     const std::vector<int64_t>& target);

// Backend facts for /gate/health and the addon's info().
struct EngineInfo {
  std::string version;
  std::string backend;  // "cpu"
  std::string blas;     // e.g. "OpenBLAS 0.3.21"
  int threads = 1;      // OpenMP threads
};
EngineInfo engine_info();
void set_threads(int n);  // 0: default (all cores)
// (set_threads applies to every later engine call from any thread, and sets OpenBLAS's pool size;
// the default is OMP_NUM_THREADS when set.)

// One engine call running on this thread, for as long as it lives. Calls running at once share the
// engine's threads instead of each taking all of them (two teams of every core on the same cores run
// slower together than one after the other): a call's OpenMP team is its share when it starts, and
// OpenBLAS's pool follows the number of calls running. Nests: an inner CallShare changes nothing.
class CallShare {
 public:
  CallShare();
  ~CallShare();
  CallShare(const CallShare&) = delete;
  CallShare& operator=(const CallShare&) = delete;

 private:
  bool counted_;
};
int calls_running();  // CallShares alive, all threads together

}  // namespace tts
