// Private: the engine-wide OpenMP team size. set_threads() must reach calls made from any thread
// (the addon calls from its worker threads, whose OpenMP settings omp_set_num_threads on another
// thread does not change), so every parallel region asks for num_threads(threads()).
#pragma once

namespace tts::detail {
int threads();  // set_threads(n > 0) value, else the process default (OMP_NUM_THREADS or all cores)
}
