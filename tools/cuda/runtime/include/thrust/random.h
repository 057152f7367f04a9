// CPU CUDA runtime, Thrust subset: thrust/random.h over <random>.  default_random_engine
// is minstd_rand as in Thrust; the distributions are the standard library's, so their
// values differ from Thrust's.
#pragma once
#include <random>

#include "detail/core.h"

namespace thrust {
namespace random {
using minstd_rand = std::minstd_rand;
using minstd_rand0 = std::minstd_rand0;
using default_random_engine = std::minstd_rand;
using ranlux24 = std::ranlux24;
using ranlux48 = std::ranlux48;
template <class T = int>
using uniform_int_distribution = std::uniform_int_distribution<T>;
template <class T = double>
using uniform_real_distribution = std::uniform_real_distribution<T>;
template <class T = double>
using normal_distribution = std::normal_distribution<T>;
}  // namespace random
using random::default_random_engine;
using random::minstd_rand;
using random::normal_distribution;
using random::uniform_int_distribution;
using random::uniform_real_distribution;
}  // namespace thrust
