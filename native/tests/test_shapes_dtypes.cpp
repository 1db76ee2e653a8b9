// Every shape (0-D to 8-D, odd and prime sizes) and every dtype decomposes, reconstructs in C order,
// casts as CONTRACT.md says, and integer arrays come back exactly when the fingerprint says so.
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>

#include "check.hpp"
#include "tt_testing.hpp"

using namespace tts;

static const DType kAll[] = {DType::F64, DType::F32, DType::F16, DType::I64, DType::I32, DType::I16,
                             DType::I8,  DType::U64, DType::U32, DType::U16, DType::U8,  DType::Bool};

// Test-side encoder for values exactly representable in t (float16: at most 11 significant bits).
static void put(unsigned char* p, DType t, double v) {
  auto w = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (t) {
    case DType::F64: w(v); break;
    case DType::F32: w(static_cast<float>(v)); break;
    case DType::F16: {
      uint16_t h = 0;
      if (v != 0) {
        int e;
        const double m = std::frexp(std::fabs(v), &e);  // v = m 2^e, m in [0.5, 1)
        h = static_cast<uint16_t>(((e - 1 + 15) << 10) | (static_cast<int>(std::ldexp(m, 11)) & 0x3ff));
        if (v < 0) h |= 0x8000;
      }
      w(h);
      break;
    }
    case DType::I64: w(static_cast<int64_t>(v)); break;
    case DType::I32: w(static_cast<int32_t>(v)); break;
    case DType::I16: w(static_cast<int16_t>(v)); break;
    case DType::I8: w(static_cast<int8_t>(v)); break;
    case DType::U64: w(static_cast<uint64_t>(v)); break;
    case DType::U32: w(static_cast<uint32_t>(v)); break;
    case DType::U16: w(static_cast<uint16_t>(v)); break;
    case DType::U8: w(static_cast<uint8_t>(v)); break;
    case DType::Bool: w(static_cast<uint8_t>(v != 0)); break;
  }
}

static double get(const unsigned char* p, DType t) {
  auto r = [p](auto x) {
    std::memcpy(&x, p, sizeof x);
    return static_cast<double>(x);
  };
  switch (t) {
    case DType::F64: return r(double{});
    case DType::F32: return r(float{});
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const int e = (h >> 10) & 31, m = h & 0x3ff;
      double v = e == 0 ? std::ldexp(m, -24) : (e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m | 0x400, e - 25));
      return (h & 0x8000) ? -v : v;
    }
    case DType::I64: return r(int64_t{});
    case DType::I32: return r(int32_t{});
    case DType::I16: return r(int16_t{});
    case DType::I8: return r(int8_t{});
    case DType::U64: return r(uint64_t{});
    case DType::U32: return r(uint32_t{});
    case DType::U16: return r(uint16_t{});
    case DType::U8: return r(uint8_t{});
    case DType::Bool: return *p ? 1.0 : 0.0;
  }
  return 0;
}

// Smooth values that every dtype can hold exactly.
static double value_for(DType t, double s) {  // s in [-1, 1]
  switch (t) {
    case DType::F64: return 3.0 * s + 0.25;
    case DType::F32: return static_cast<double>(static_cast<float>(3.0 * s + 0.25));
    case DType::F16: return std::round(s * 512.0) / 256.0;  // multiples of 1/256 in [-2, 2]
    case DType::Bool: return s > 0.2 ? 1.0 : 0.0;
    case DType::I8: return std::round(100 * s);
    case DType::U8: return std::round(100 * s + 120);
    default: return dtype_name(t)[0] == 'u' ? std::round(1000 * s + 1000) : std::round(1000 * s);
  }
}

static void round_trip(const std::vector<int64_t>& shape, DType t, LayoutKind kind, double tol) {
  const QttLayout L = make_layout(shape, kind);
  const int64_t N = L.numel();
  const std::size_t sz = dtype_size(t);
  std::vector<unsigned char> in(static_cast<std::size_t>(N) * sz), out(in.size(), 0xAB);
  std::vector<double> x(static_cast<std::size_t>(N));
  for (int64_t i = 0; i < N; ++i) {
    const double s = std::sin(0.37 * static_cast<double>(i) + 0.2) * std::cos(0.001 * static_cast<double>(i));
    x[i] = value_for(t, s);
    put(in.data() + i * sz, t, x[i]);
  }
  std::string tag = std::string(dtype_name(t)) + " " + layout_name(kind) + " [";
  for (auto n : shape) tag += std::to_string(n) + ",";
  tag += "]";

  const ArrayView a{in.data(), t, N};
  const CompressResult c = compress(a, L, SvdOptions{tol, 0});
  // compress() gives up (empty train, not compressible) once the cores outgrow the input
  CHECK_MSG(c.tt.d() > 0 || !c.compressible, tag);
  const TensorTrain tt = c.tt.d() > 0 ? c.tt : qtt_svd(a, L, SvdOptions{tol, 0});
  tt.validate();
  CHECK_MSG(tt.modes == L.modes, tag);
  const Fingerprint f = reconstruct(tt, L, MutableArrayView{out.data(), t, N}, a);
  // Independent errors: decode what came back.
  double e2 = 0, mx = 0, x2 = 0;
  for (int64_t i = 0; i < N; ++i) {
    const double y = get(out.data() + i * sz, t);
    e2 += (x[i] - y) * (x[i] - y);
    x2 += x[i] * x[i];
    mx = std::max(mx, std::fabs(x[i] - y));
  }
  CHECK_NEAR(f.frobenius_error, std::sqrt(e2), 1e-9 * std::sqrt(x2) + 1e-300);
  CHECK_NEAR(f.max_abs_error, mx, 1e-12 * (1 + mx));
  CHECK_REL(f.reference_norm, std::sqrt(x2), 1e-12);
  if (c.tt.d() > 0) {
    CHECK_REL(c.fingerprint.frobenius_error, f.frobenius_error, 1e-9);
    CHECK_MSG(f.relative_error <= tol, tag + " rel " + check::num(f.relative_error));
  }
  if (dtype_is_integer(t) && f.max_abs_error < 0.5) {
    CHECK_MSG(in == out, tag + ": integer round trip not exact");
  }
  if (dtype_is_integer(t)) CHECK_MSG(f.max_abs_error == std::round(f.max_abs_error), tag);

  // Reconstruction vs the naive product of core slices (small arrays).
  if (N <= 50000) {
    const std::vector<double> naive = ttt::dense_c_order(tt, shape, kind);
    const std::vector<double> lib = ttt::to_dense(tt, L);
    CHECK_MSG(ttt::max_abs_diff(naive, lib) <= 1e-10 * (1 + ttt::norm2(naive)), tag);
  }
}

TEST(every_dtype_every_rank_of_shape) {
  const std::vector<std::vector<int64_t>> shapes = {{},
                                                    {1},
                                                    {3},
                                                    {1009},
                                                    {64},
                                                    {3, 1000, 7},
                                                    {1, 256},
                                                    {16, 9},
                                                    {4, 6, 10},
                                                    {2, 3, 4, 5},
                                                    {8, 4, 2, 2, 6},
                                                    {2, 2, 3, 2, 2, 2},
                                                    {3, 2, 2, 2, 2, 2, 5},
                                                    {2, 2, 2, 2, 2, 2, 2, 3}};
  for (const auto& s : shapes) {
    for (DType t : kAll) {
      for (auto kind : {LayoutKind::RowMajor, LayoutKind::Interleaved}) round_trip(s, t, kind, 1e-6);
    }
  }
}

TEST(lossless_integers_round_trip_exactly) {
  for (DType t : {DType::U8, DType::I16, DType::I64, DType::Bool}) {
    round_trip({32, 32}, t, LayoutKind::Interleaved, 0.0);
    round_trip({4096}, t, LayoutKind::RowMajor, 0.0);
  }
}

// A one-element train holding v, reconstructed into dtype t: the cast CONTRACT.md fixes.
static double cast_through(double v, DType t) {
  TensorTrain tt;
  tt.modes = {1};
  tt.ranks = {1, 1};
  tt.cores = {{v}};
  const QttLayout L = make_layout({}, LayoutKind::RowMajor);
  unsigned char buf[8] = {};
  reconstruct(tt, L, MutableArrayView{buf, t, 1}, ArrayView{});
  return get(buf, t);
}

static uint16_t half_bits(double v) {
  TensorTrain tt;
  tt.modes = {1};
  tt.ranks = {1, 1};
  tt.cores = {{v}};
  uint16_t h = 0;
  reconstruct(tt, make_layout({1}, LayoutKind::RowMajor), MutableArrayView{&h, DType::F16, 1}, ArrayView{});
  return h;
}

TEST(casts_round_half_even_and_saturate) {
  CHECK_EQ(cast_through(2.5, DType::I32), 2.0);
  CHECK_EQ(cast_through(3.5, DType::I32), 4.0);
  CHECK_EQ(cast_through(-2.5, DType::I8), -2.0);
  CHECK_EQ(cast_through(-0.4, DType::U8), 0.0);
  CHECK_EQ(cast_through(300.2, DType::U8), 255.0);
  CHECK_EQ(cast_through(-200, DType::I8), -128.0);
  CHECK_EQ(cast_through(127.5, DType::I8), 127.0);
  CHECK_EQ(cast_through(70000, DType::I16), 32767.0);
  CHECK_EQ(cast_through(-1, DType::U64), 0.0);
  CHECK_EQ(cast_through(1e30, DType::I64), 9223372036854775807.0);
  CHECK_EQ(cast_through(-1e30, DType::I64), -9223372036854775808.0);
  CHECK_EQ(cast_through(5e9, DType::U32), 4294967295.0);
  CHECK_EQ(cast_through(0.49, DType::Bool), 0.0);
  CHECK_EQ(cast_through(0.5, DType::Bool), 1.0);
  CHECK_EQ(cast_through(7.0, DType::Bool), 1.0);
  CHECK_EQ(cast_through(1.0 + 1e-12, DType::F32), 1.0);
}

TEST(float16_is_ieee_half_round_to_nearest_even) {
  CHECK_EQ(half_bits(1.0), 0x3C00);
  CHECK_EQ(half_bits(-2.0), 0xC000);
  CHECK_EQ(half_bits(65504.0), 0x7BFF);
  CHECK_EQ(half_bits(65519.99), 0x7BFF);
  CHECK_EQ(half_bits(65520.0), 0x7C00);  // halfway to 2^16 rounds to even: infinity
  CHECK_EQ(half_bits(1e9), 0x7C00);
  CHECK_EQ(half_bits(std::ldexp(1.0, -24)), 0x0001);
  CHECK_EQ(half_bits(std::ldexp(1.0, -25)), 0x0000);  // tie with 0: even
  CHECK_EQ(half_bits(std::ldexp(1.5, -25)), 0x0001);
  CHECK_EQ(half_bits(std::ldexp(3.0, -25)), 0x0002);        // 1.5 subnormal ulps: tie to even 2
  CHECK_EQ(half_bits(1.0 + std::ldexp(1.0, -11)), 0x3C00);  // tie: even mantissa
  CHECK_EQ(half_bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  CHECK_EQ(half_bits(1.0 + std::ldexp(1.0, -11) + 1e-12), 0x3C01);  // no double rounding via float
  CHECK_EQ(half_bits(std::ldexp(1023.5, -24)), 0x0400);             // carry from subnormal to normal
  CHECK_EQ(half_bits(0.1), 0x2E66);
}

TEST(dtype_names) {
  for (DType t : kAll) CHECK(dtype_from_name(dtype_name(t)) == t);
  CHECK_EQ(dtype_size(DType::F16), std::size_t{2});
  CHECK_EQ(dtype_size(DType::U64), std::size_t{8});
  CHECK(dtype_is_integer(DType::Bool));
  CHECK(!dtype_is_integer(DType::F16));
  CHECK_THROWS(InvalidArgument, dtype_from_name("complex64"), "complex64");
}

TEST(unaligned_input_views) {
  // the input may start at any byte
  std::vector<unsigned char> raw(1 + 4096 * 8);
  std::vector<double> x(4096);
  for (int i = 0; i < 4096; ++i) x[i] = std::sin(0.01 * i);
  std::memcpy(raw.data() + 1, x.data(), 4096 * 8);
  const QttLayout L = make_layout({4096}, LayoutKind::RowMajor);
  const CompressResult c = compress(ArrayView{raw.data() + 1, DType::F64, 4096}, L, SvdOptions{1e-8, 0});
  CHECK(c.fingerprint.relative_error <= 1e-8);
  CHECK_EQ(c.tt.max_rank(), int64_t{2});
}

// compress() with the input already gathered (float64, C order = row_major's mode order), as the
// server converts an upload while it arrives: the same train and fingerprint as gathering itself;
// the fingerprint is still measured against the input, so a workspace that does not hold the input
// misses the tolerance and the retry at tol / 10 gathers from the input itself; non-finite values
// are named as usual.
TEST(a_pregathered_workspace_gives_the_same_train_and_is_checked_against_the_input) {
  const std::vector<int64_t> shape{96, 128};  // 96 = 3 * 2^5: an odd digit and bits
  const QttLayout L = make_layout(shape, LayoutKind::RowMajor);
  const int64_t n = L.numel();
  std::vector<float> x(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < 96; ++i) {
    for (int64_t j = 0; j < 128; ++j)
      x[i * 128 + j] = static_cast<float>(std::sin(0.05 * i + 0.03 * j) + 0.2 * std::cos(0.07 * j));
  }
  const ArrayView a{x.data(), DType::F32, n};
  const SvdOptions opt{1e-6, 0};
  const CompressResult plain = compress(a, L, opt);
  // gathered piecewise, as the server does while an upload arrives (pieces at odd element offsets)
  std::vector<double> w(static_cast<std::size_t>(n), -1.0);
  for (int64_t start = 0, step = 1; start < n; start += step, step = step * 3 + 1) {
    const int64_t count = std::min(step, n - start);
    widen(x.data() + start, DType::F32, count, w.data() + start);
  }
  CHECK(w == std::vector<double>(x.begin(), x.end()));
  const CompressResult pre = compress(a, L, opt, CompressOptions{{}, w.data()});
  CHECK(pre.tt.ranks == plain.tt.ranks && pre.tt.cores == plain.tt.cores && pre.tt.f32 == plain.tt.f32);
  CHECK_EQ(pre.fingerprint.frobenius_error, plain.fingerprint.frobenius_error);
  CHECK_EQ(pre.fingerprint.max_abs_error, plain.fingerprint.max_abs_error);

  std::vector<double> wrong(x.begin(), x.end());
  for (double& v : wrong) v *= 1.5;
  const CompressResult off = compress(a, L, opt, CompressOptions{{}, wrong.data()});
  CHECK(off.fingerprint.relative_error <= opt.tol);

  x[77] = std::numeric_limits<float>::quiet_NaN();
  std::vector<double> bad(x.begin(), x.end());
  CHECK_THROWS(InvalidArgument, compress(a, L, opt, CompressOptions{{}, bad.data()}),
               "NaN) at flat index 77 (index [0, 77])");
}

// widen()'s square lanes: however the input is cut into pieces (converted in order), every lane adds
// its elements in the same order, so the total has the same bits as one piece's, for every dtype;
// compress() given that total skips its own pass and keeps the same train.
TEST(widen_square_lanes_total_the_same_bits_however_the_input_is_cut) {
  const int64_t n = 12288 + 7;  // not a whole number of lane rows
  std::vector<float> x(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::sin(0.013 * i) * 3.0 + 0.001 * i);
  std::vector<double> one(static_cast<std::size_t>(n));
  double lanes_one[kSquareLanes] = {};
  widen(x.data(), DType::F32, n, one.data(), lanes_one, 0);
  long double exact = 0;
  for (float v : x) exact += static_cast<long double>(v) * v;
  const double total = sum_square_lanes(lanes_one);
  CHECK(std::fabs(total - static_cast<double>(exact)) <= 1e-13 * total);
  for (int64_t first_step : {1, 5, 16, 33, 1000}) {
    std::vector<double> w(static_cast<std::size_t>(n), -1.0);
    double lanes[kSquareLanes] = {};
    for (int64_t start = 0, step = first_step; start < n; start += step, step = step * 2 + 3) {
      const int64_t count = std::min(step, n - start);
      widen(x.data() + start, DType::F32, count, w.data() + start, lanes, start);
    }
    CHECK(w == one);
    CHECK(std::memcmp(lanes, lanes_one, sizeof lanes) == 0);
  }
  // float64 and an integer dtype (the generic path) cut in pieces: the same bits as one piece
  std::vector<double> x64(one);
  std::vector<int16_t> x16(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) x16[i] = static_cast<int16_t>((i * 37) % 2001 - 1000);
  for (const auto& [src, dtype, size] : {std::tuple<const void*, DType, int64_t>{x64.data(), DType::F64, 8},
                                         std::tuple<const void*, DType, int64_t>{x16.data(), DType::I16, 2}}) {
    std::vector<double> w1(static_cast<std::size_t>(n)), w2(static_cast<std::size_t>(n));
    double l1[kSquareLanes] = {}, l2[kSquareLanes] = {};
    widen(src, dtype, n, w1.data(), l1, 0);
    for (int64_t start = 0, step = 3; start < n; start += step, step = step * 2 + 1) {
      const int64_t count = std::min(step, n - start);
      widen(static_cast<const unsigned char*>(src) + start * size, dtype, count, w2.data() + start, l2, start);
    }
    CHECK(w1 == w2);
    CHECK(std::memcmp(l1, l2, sizeof l1) == 0);
  }

  const std::vector<int64_t> shape{96, 128};
  const QttLayout L = make_layout(shape, LayoutKind::RowMajor);
  const int64_t m = L.numel();
  const ArrayView a{x.data(), DType::F32, m};
  const SvdOptions opt{1e-6, 0};
  const CompressResult plain = compress(a, L, opt);
  std::vector<double> w(static_cast<std::size_t>(m));
  double lanes[kSquareLanes] = {};
  for (int64_t start = 0, step = 7; start < m; start += step, step = step * 3 + 1) {
    const int64_t count = std::min(step, m - start);
    widen(x.data() + start, DType::F32, count, w.data() + start, lanes, start);
  }
  const CompressResult pre = compress(a, L, opt, CompressOptions{{}, w.data(), sum_square_lanes(lanes)});
  CHECK(pre.tt.ranks == plain.tt.ranks && pre.tt.f32 == plain.tt.f32);
  CHECK(pre.fingerprint.relative_error <= opt.tol);
  CHECK(std::fabs(pre.fingerprint.reference_norm - plain.fingerprint.reference_norm) <=
        1e-14 * plain.fingerprint.reference_norm);
  // a NaN makes the total NaN: compress then converts the input itself and names the element
  x[100] = std::numeric_limits<float>::quiet_NaN();
  double bad_lanes[kSquareLanes] = {};
  widen(x.data(), DType::F32, m, w.data(), bad_lanes, 0);
  CHECK(std::isnan(sum_square_lanes(bad_lanes)));
  CHECK_THROWS(InvalidArgument, compress(a, L, opt, CompressOptions{{}, w.data(), sum_square_lanes(bad_lanes)}),
               "NaN) at flat index 100");
}

TEST_MAIN()
