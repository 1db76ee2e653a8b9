// Query operands and score_batch: every kind of pair and every kernel agrees with dense references.
#include <algorithm>

#include "check.hpp"
#include "tt_testing.hpp"
#include "ttstore/internal/inner_kernels.hpp"
#include "ttstore/query.hpp"

using namespace tts;

static double dense_dot(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

static TensorTrain as_f32(TensorTrain t) {
  for (auto& c : t.cores) {
    for (double& v : c) v = static_cast<float>(v);
  }
  t.f32 = true;
  return t;
}

// Ranks capped at `cap`, shaped like a QTT of smooth data: small at the ends, `cap` in the middle.
static std::vector<int64_t> qtt_ranks(const std::vector<int64_t>& modes, int64_t cap, int64_t jitter) {
  const std::size_t d = modes.size();
  std::vector<int64_t> r(d + 1, 1);
  int64_t left = 1;
  for (std::size_t k = 1; k < d; ++k) {
    left *= modes[k - 1];
    int64_t right = 1;
    for (std::size_t j = k; j < d; ++j) right *= modes[j];
    r[k] = std::max<int64_t>(1, std::min({left, right, cap - (static_cast<int64_t>(k) + jitter) % 3}));
  }
  return r;
}

static const std::vector<int64_t> kModes{2, 3, 2, 2, 2, 5, 2, 2, 2};

TEST(every_pad8_kernel_agrees_with_the_dense_inner_product) {
  for (bool f32 : {true, false}) {
    for (auto [capq, capc] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {2, 2}, {4, 4}, {7, 7}, {8, 8}, {2, 8}, {8, 2}, {3, 6}, {6, 3}, {5, 1}, {1, 5}}) {
      TensorTrain q = ttt::random_tt(kModes, qtt_ranks(kModes, capq, 0), 11 + capq);
      TensorTrain c = ttt::random_tt(kModes, qtt_ranks(kModes, capc, 1), 23 + capc);
      if (f32) c = as_f32(c);
      const Operand oq = Operand::train(q), oc = Operand::train(c);
      const double want = dense_dot(ttt::dense_mode_order(q), ttt::dense_mode_order(c));
      const auto pq = detail::prepare_train(oq);
      CHECK(pq.pad8);
      for (auto k : {detail::Pad8Kernel::Loops, detail::Pad8Kernel::Avx2, detail::Pad8Kernel::Avx512}) {
        if (!detail::pad8_kernel_supported(k)) {
          std::printf("  (kernel %s not supported on this CPU)\n", detail::pad8_kernel_name(k));
          continue;
        }
        CHECK_REL(detail::inner_trains_with(pq, oc, k), want, 1e-12);
      }
    }
  }
}

TEST(two_candidates_of_equal_ranks_contract_together_and_agree) {
  const TensorTrain pq = ttt::random_tt(kModes, qtt_ranks(kModes, 7, 0), 5);
  const Operand oq = Operand::train(pq);
  const auto prepared = detail::prepare_train(oq);
  const std::vector<double> qd = ttt::dense_mode_order(pq);
  for (bool f32 : {true, false}) {
    for (int64_t cap : {1, 2, 5, 8}) {  // below, at and above the query's ranks
      TensorTrain a = ttt::random_tt(kModes, qtt_ranks(kModes, cap, 1), 40 + cap);
      TensorTrain b = ttt::random_tt(kModes, qtt_ranks(kModes, cap, 1), 50 + cap);
      TensorTrain other = ttt::random_tt(kModes, qtt_ranks(kModes, cap, 2), 60 + cap);  // other ranks
      if (f32) {
        a = as_f32(a);
        b = as_f32(b);
      }
      const Operand oa = Operand::train(a), ob = Operand::train(b), oo = Operand::train(other);
      CHECK_EQ(oa.rank_key(), ob.rank_key());
      double out[2];
      detail::inner_trains_2(prepared, oa, ob, out);
      CHECK_REL(out[0], dense_dot(qd, ttt::dense_mode_order(a)), 1e-12);
      CHECK_REL(out[1], dense_dot(qd, ttt::dense_mode_order(b)), 1e-12);
      detail::inner_trains_2(prepared, oa, oo, out);  // unequal ranks (or dtypes): one by one
      CHECK_REL(out[0], dense_dot(qd, ttt::dense_mode_order(a)), 1e-12);
      CHECK_REL(out[1], dense_dot(qd, ttt::dense_mode_order(other)), 1e-12);
      // Paired or alone, every kernel gives a candidate the same bits (a top-K in chunks pairs
      // candidates otherwise than one pass does).
      for (auto k : {detail::Pad8Kernel::Loops, detail::Pad8Kernel::Avx2, detail::Pad8Kernel::Avx512}) {
        if (!detail::pad8_kernel_supported(k)) continue;
        detail::inner_trains_2_with(prepared, oa, ob, out, k);
        CHECK_EQ(out[0], detail::inner_trains_with(prepared, oa, k));
        CHECK_EQ(out[1], detail::inner_trains_with(prepared, ob, k));
      }
    }
  }
}

TEST(a_large_batch_of_mixed_ranks_agrees_with_the_dense_inner_products) {
  // Enough candidates to pair up and run in parallel: five rank profiles, both dtypes, some odd ones out.
  std::vector<Operand> ops;
  std::vector<std::vector<double>> dense;
  for (int j = 0; j < 301; ++j) {
    TensorTrain t = ttt::random_tt(kModes, qtt_ranks(kModes, 2 + (j * 7) % 5 + (j % 13 == 0 ? 3 : 0), j % 3), 1000 + j);
    if (j % 4 == 1) t = as_f32(t);
    dense.push_back(ttt::dense_mode_order(t));
    ops.push_back(Operand::train(t));
  }
  for (int qi : {0, 3, 12}) {
    std::vector<const Operand*> cands;
    std::vector<double> norms;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      cands.push_back(&ops[j]);
      norms.push_back(ttt::norm2(dense[j]));
    }
    const auto dots =
        score_batch(ops[static_cast<std::size_t>(qi)], norms[static_cast<std::size_t>(qi)], cands, norms, Metric::Dot);
    for (std::size_t j = 0; j < ops.size(); ++j)
      CHECK_REL(dots[j], dense_dot(dense[static_cast<std::size_t>(qi)], dense[j]), 1e-11);
  }
  // A candidate of other modes deep in the batch is named, whichever thread meets it.
  const Operand odd = Operand::train(ttt::random_tt({4, 2}, {1, 2, 1}, 2));
  std::vector<const Operand*> cands;
  for (const Operand& o : ops) cands.push_back(&o);
  cands[137] = &odd;
  CHECK_THROWS(InvalidArgument, score_batch(ops[0], 1.0, cands, std::vector<double>(cands.size(), 1.0), Metric::Dot),
               "candidate 137");
}

TEST(trains_past_rank_8_and_past_the_loop_limit) {
  const std::vector<int64_t> modes{4, 4, 4, 4, 4};
  TensorTrain q = ttt::random_tt(modes, {1, 4, 16, 16, 4, 1}, 3);
  TensorTrain c = ttt::random_tt(modes, {1, 4, 12, 9, 4, 1}, 4);
  const double want = dense_dot(ttt::dense_mode_order(q), ttt::dense_mode_order(c));
  CHECK_REL(inner(Operand::train(q), Operand::train(c)), want, 1e-12);
  // A rank of 80 > kLoopMaxRank: the BLAS route.
  const std::vector<int64_t> wide{8, 10, 2, 10, 8};
  const TensorTrain a = ttt::random_tt(wide, {1, 8, 80, 20, 8, 1}, 7);
  const TensorTrain b = ttt::random_tt(wide, {1, 8, 30, 20, 8, 1}, 8);
  CHECK_REL(inner(Operand::train(a), Operand::train(b)), dense_dot(ttt::dense_mode_order(a), ttt::dense_mode_order(b)),
            1e-11);
}

TEST(dense_operands_contract_with_trains_in_mode_order) {
  // A 2-D array under the interleaved layout: the dense side must be gathered into mode order.
  const std::vector<int64_t> shape{12, 8};
  const QttLayout L = make_layout(shape, LayoutKind::Interleaved);
  TensorTrain t = ttt::random_tt(L.modes, qtt_ranks(L.modes, 6, 0), 31);
  std::vector<double> x(96);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.37 * static_cast<double>(i)) + 0.01 * static_cast<double>(i);
  const Operand ox = Operand::dense(ttt::view(x), L);
  const Operand ot = Operand::train(as_f32(t));
  const std::vector<double> tc = ttt::dense_c_order(as_f32(t), shape, LayoutKind::Interleaved);
  const double want = dense_dot(x, tc);
  CHECK_REL(inner(ox, ot), want, 1e-12);
  CHECK_REL(inner(ot, ox), want, 1e-12);
  CHECK_REL(inner(ox, ox), dense_dot(x, x), 1e-13);
  CHECK_REL(norm(ot), ttt::norm2(tc), 1e-12);
  // int16 data is converted exactly.
  std::vector<int16_t> xi(96);
  for (std::size_t i = 0; i < xi.size(); ++i) xi[i] = static_cast<int16_t>(static_cast<int>(i * 37 % 200) - 100);
  const Operand oi = Operand::dense(ArrayView{xi.data(), DType::I16, 96}, L);
  std::vector<double> xd(xi.begin(), xi.end());
  CHECK_REL(inner(oi, ot), dense_dot(xd, tc), 1e-12);
}

TEST(score_batch_gives_the_three_metrics_for_a_mixed_batch) {
  const std::vector<int64_t> shape{64, 32};
  const QttLayout L = make_layout(shape, LayoutKind::Interleaved);
  std::vector<Operand> ops;
  std::vector<std::vector<double>> dense;  // C order, for the references
  for (int j = 0; j < 7; ++j) {
    TensorTrain t = ttt::random_tt(L.modes, qtt_ranks(L.modes, 2 + j, j), 100 + j);
    if (j % 2) t = as_f32(t);
    dense.push_back(ttt::dense_c_order(t, shape, LayoutKind::Interleaved));
    if (j % 3 == 2) {
      ops.push_back(Operand::dense(ttt::view(dense.back()), L));
    } else {
      ops.push_back(Operand::train(t));
    }
  }
  for (std::size_t qi : {0u, 2u}) {  // a train query and a dense query
    std::vector<const Operand*> cands;
    std::vector<double> norms;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      cands.push_back(&ops[j]);
      norms.push_back(ttt::norm2(dense[j]));
    }
    const double qn = ttt::norm2(dense[qi]);
    const auto dots = score_batch(ops[qi], qn, cands, norms, Metric::Dot);
    const auto cos = score_batch(ops[qi], qn, cands, norms, Metric::Cosine);
    const auto euc = score_batch(ops[qi], qn, cands, norms, Metric::Euclidean);
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const double dd = dense_dot(dense[qi], dense[j]);
      CHECK_REL(dots[j], dd, 1e-11);
      CHECK_NEAR(cos[j], dd / (qn * norms[j]), 1e-12);
      CHECK_NEAR(euc[j], ttt::diff_norm(dense[qi], dense[j]), 1e-9 * std::max(1.0, euc[j]));
    }
    CHECK_NEAR(cos[qi], 1.0, 1e-12);
    CHECK(cos[qi] <= 1.0);
    CHECK_NEAR(euc[qi], 0.0, 1e-6 * qn);
  }
}

TEST(euclidean_keeps_its_digits_for_near_duplicates) {
  const std::vector<int64_t> modes{2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  const TensorTrain a = ttt::random_tt(modes, qtt_ranks(modes, 6, 0), 7);
  TensorTrain b = a;
  for (double& v : b.cores[4]) v *= 1 + 1e-9;  // ||a - b|| = 1e-9 ||a||
  const Operand oa = Operand::train(a), ob = Operand::train(b);
  const double na = norm(oa), nb = norm(ob);
  const auto e = score_batch(oa, na, {&ob}, {nb}, Metric::Euclidean);
  CHECK_REL(e[0], ttt::diff_norm(ttt::dense_mode_order(a), ttt::dense_mode_order(b)), 1e-6);
  CHECK_REL(e[0], 1e-9 * na, 1e-5);
}

TEST(zero_norms_give_cosine_zero) {
  const std::vector<int64_t> modes{2, 2, 2};
  TensorTrain z = ttt::random_tt(modes, {1, 2, 2, 1}, 1);
  for (double& v : z.cores[1]) v = 0;
  const TensorTrain t = ttt::random_tt(modes, {1, 2, 2, 1}, 2);
  const Operand oz = Operand::train(z), ot = Operand::train(t);
  const auto c = score_batch(ot, norm(ot), {&oz}, {0.0}, Metric::Cosine);
  CHECK_EQ(c[0], 0.0);
  const auto d = score_batch(oz, 0.0, {&ot}, {norm(ot)}, Metric::Cosine);
  CHECK_EQ(d[0], 0.0);
}

TEST(a_candidates_score_does_not_depend_on_the_rest_of_its_batch) {
  // A top-K scores in chunks (score_work's turns): every cut of the batch must give the same bits,
  // whichever candidates the rank <= 8 kernels ran two at a time.
  const std::vector<int64_t> modes(14, 2);  // ranks up to 128: past the loop kernels' limit too
  std::vector<Operand> ops;
  ops.push_back(Operand::train(ttt::random_tt(modes, qtt_ranks(modes, 8, 0), 1)));
  for (int j = 0; j < 9; ++j) {
    TensorTrain t = ttt::random_tt(modes, qtt_ranks(modes, j < 6 ? 8 : 20 + 30 * j, j < 6 ? 0 : j), 10 + j);
    ops.push_back(Operand::train(j % 2 ? as_f32(t) : t));
  }
  ops.push_back(ops[0]);  // a duplicate of the query: euclidean measures it again
  std::vector<const Operand*> cands;
  std::vector<double> norms;
  for (std::size_t j = 1; j < ops.size(); ++j) {
    cands.push_back(&ops[j]);
    norms.push_back(norm(ops[j]));
  }
  for (Metric m : {Metric::Dot, Metric::Cosine, Metric::Euclidean}) {
    const auto whole = score_batch(ops[0], norm(ops[0]), cands, norms, m);
    for (std::size_t cut = 1; cut < cands.size(); ++cut) {
      const std::vector<const Operand*> a(cands.begin(), cands.begin() + cut), b(cands.begin() + cut, cands.end());
      auto s = score_batch(ops[0], norm(ops[0]), a, std::vector<double>(norms.begin(), norms.begin() + cut), m);
      const auto t = score_batch(ops[0], norm(ops[0]), b, std::vector<double>(norms.begin() + cut, norms.end()), m);
      s.insert(s.end(), t.begin(), t.end());
      for (std::size_t j = 0; j < whole.size(); ++j) CHECK_EQ(s[j], whole[j]);
    }
  }
}

TEST(score_work_follows_the_path_a_pair_takes) {
  const std::vector<int64_t> modes(14, 2);
  const std::vector<int64_t> r8 = qtt_ranks(modes, 8, 0), r40 = qtt_ranks(modes, 40, 0), r70 = qtt_ranks(modes, 70, 0);
  const Operand q = Operand::train(ttt::random_tt(modes, r8, 1));
  const Operand c40 = Operand::train(ttt::random_tt(modes, r40, 2));
  const Operand c70 = Operand::train(as_f32(ttt::random_tt(modes, r70, 3)));
  // A pair in the loop kernels costs its contraction, as train_work counts a train's own.
  CHECK_EQ(score_work(q, q, Metric::Dot), train_work(modes, r8, modes).contraction);
  CHECK_EQ(score_work(q, q, Metric::Cosine), score_work(q, q, Metric::Dot));
  CHECK(score_work(q, c40, Metric::Dot) > score_work(q, q, Metric::Dot));
  // Past the loop kernels' ranks, BLAS on float64 copies: the copies count too.
  CHECK(score_work(q, c70, Metric::Dot) > score_work(q, c40, Metric::Dot) + static_cast<double>(c70.elements()));
  // Euclidean may measure a near duplicate again from the difference train.
  for (const Operand* c : {&q, &c40, &c70})
    CHECK(score_work(q, *c, Metric::Euclidean) > 2 * score_work(q, *c, Metric::Dot));
  // An array: numel against another, O(numel r) against a train.
  const QttLayout L = make_layout({16384}, LayoutKind::RowMajor);
  std::vector<double> x(16384, 0.5);
  const Operand ox = Operand::dense(ttt::view(x), L);
  CHECK_EQ(score_work(ox, ox, Metric::Euclidean), 16384.0);
  CHECK(score_work(ox, c40, Metric::Dot) > 16384.0 * 2);
  CHECK(score_work(ox, c40, Metric::Dot) < 16384.0 * 8 * 40);
  CHECK_EQ(score_work(c40, ox, Metric::Dot), score_work(ox, c40, Metric::Dot));
  // Modes that differ: score_batch refuses the pair, nothing is spent.
  const Operand other = Operand::train(ttt::random_tt({4, 4, 4, 4, 4, 4}, {1, 2, 2, 2, 2, 2, 1}, 4));
  CHECK_EQ(score_work(q, other, Metric::Dot), 0.0);
}

TEST(bad_operands_are_invalid_arguments) {
  const std::vector<int64_t> modes{2, 2, 2};
  std::vector<float> c0(4, 1.0f), c1(8, 1.0f), c2(4, 1.0f);
  const std::vector<const void*> cores{c0.data(), c1.data(), c2.data()};
  CHECK_THROWS(InvalidArgument, Operand::train(modes, {1, 2, 2}, cores, true), "entries");
  CHECK_THROWS(InvalidArgument, Operand::train(modes, {2, 2, 2, 1}, cores, true), "start and end");
  CHECK_THROWS(InvalidArgument, Operand::train(modes, {1, 2, 2, 1}, {c0.data(), c1.data()}, true),
               "2 cores for 3 modes");
  c1[3] = std::nanf("");
  CHECK_THROWS(InvalidArgument, Operand::train(modes, {1, 2, 2, 1}, cores, true), "not finite");
  std::vector<double> x{1, 2, std::numeric_limits<double>::infinity(), 4, 5, 6, 7, 8};
  CHECK_THROWS(InvalidArgument, Operand::dense(ttt::view(x), make_layout({8}, LayoutKind::RowMajor)), "non-finite");
  const Operand a = Operand::train(ttt::random_tt(modes, {1, 2, 2, 1}, 1));
  const Operand b = Operand::train(ttt::random_tt({4, 2}, {1, 2, 1}, 2));
  CHECK_THROWS(InvalidArgument, inner(a, b), "mode sizes differ");
  CHECK_THROWS(InvalidArgument, score_batch(a, 1.0, {&b}, {1.0}, Metric::Dot), "candidate 0");
  CHECK_THROWS(InvalidArgument, score_batch(a, 1.0, {&a}, {}, Metric::Dot), "norms");
  CHECK_THROWS(InvalidArgument, metric_from_name("manhattan"), "cosine, euclidean or dot");
}

TEST_MAIN()
