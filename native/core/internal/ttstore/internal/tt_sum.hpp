// Private: a linear combination of trains as one train, shared by qtt::combine (which rounds it),
// distance (which orthogonalises a - b) and test_round.
#pragma once

#include <vector>

#include "ttstore/tt.hpp"

namespace tts::detail {

// sum_t c[t] x[t] for trains of equal modes, unrounded: ranks add (the first core is a row of blocks,
// the last a column, the others block-diagonal) and each coefficient rides on its term's first core;
// one core: the plain weighted sum. Throws InvalidArgument unless there is one coefficient per term,
// at least one term, and the terms' modes are equal.
TensorTrain linear_combination(const std::vector<double>& c, const std::vector<const TensorTrain*>& x);

}  // namespace tts::detail
