// The malloc settings of the agent's long-lived processes (the agent and its probe worker).
#pragma once

namespace rail::base {

// One malloc arena and a fixed mmap threshold: see memory.cc for the measurements behind them.
// Call once, first thing in main, before any thread starts.
void TuneMemoryAllocator();

// glibc's per-thread cache of freed chunks (tcache) can only be switched off by the
// GLIBC_TUNABLES environment variable, read when the process starts. Unless it is already set,
// this sets it and executes the same program again with the same arguments (same pid); on any
// failure it returns and the process goes on with the cache. Call first thing in main.
void ReexecWithoutThreadCaches(char** argv);

}  // namespace rail::base
