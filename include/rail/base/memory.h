// The malloc settings of the agent's long-lived processes (the agent and its probe worker).
#pragma once

namespace rail::base {

// One malloc arena and a fixed mmap threshold: see memory.cc for the measurements behind them.
// Call once, first thing in main, before any thread starts.
void TuneMemoryAllocator();

}  // namespace rail::base
