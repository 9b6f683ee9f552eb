// The SFP's counter-based random numbers (isa/include/spyre/isa/sfp_fn.def: rand, randn): each
// value is a pure function of a 32-bit seed and a 32-bit offset (the element's index), so a
// kernel divided over any number of cores, lanes or tiles draws the same numbers. The
// generator is Philox-4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11), keyed and counted as PyTorch's CPU Inductor code does (key = (seed, 0),
// counter = (offset, 0, 0, 0)), so a compiled graph given the same seeds draws Inductor's
// numbers bit for bit.
#pragma once

#include <array>
#include <cstdint>

namespace spyre::sim::random {

// Philox-4x32-10 of a 128-bit counter and a 64-bit key.
std::array<uint32_t, 4> philox(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// The four words for one (seed, offset): counter (offset, 0, 0, 0), key (seed, 0).
std::array<uint32_t, 4> philox(uint32_t seed, uint32_t offset);

// A float32 value in [0, 1): the low 31 bits of the first word, scaled.
float uniform(uint32_t seed, uint32_t offset);

// A standard normal float32 value: Box-Muller over the first two words.
float normal(uint32_t seed, uint32_t offset);

// The SFP's operands are doubles: a seed or offset held as a 32-bit integer (signed or not)
// gives its low 32 bits (of its integer part; 0 for NaN and infinities).
uint32_t word(double v);

}  // namespace spyre::sim::random
