# Precompiled headers for the ASan build (scripts/sanitize), a build-time measure only: every
# source still includes what it uses, and the normal build, without them, fails where one does not.
#
# nlohmann/json is parsed by 194 of the tree's 338 translation units and GoogleTest with gMock by
# every test source: parsing them is part of each unit's compile, in the ASan build about a tenth.
# Two headers are compiled once per build directory, by two targets of their own, and reused by
# every library and test binary:
#   rail_precompiled_layers  the C++ standard library headers the layers use, and nlohmann/json
#   rail_precompiled_tests   the same, GoogleTest and gMock
# GCC takes a precompiled header only where every macro defined when it was made is defined when it
# is used (CMake passes -Winvalid-pch, an error with -Werror): so its targets carry rail_strict's
# flags (-Wpedantic decides __cpp_runtime_arrays) and GoogleTest's definitions, and nothing else;
# the definitions the users add (spdlog's, the tests' paths) are allowed. Neither header holds
# spdlog or fmt, whose definitions (SPDLOG_FMT_EXTERNAL, ...) decide their code.
#
# Off by default: once optimizing (-O1 and above), GCC 12 reports libstdc++'s own inlined string
# copies as out of bounds (-Warray-bounds, as in src/gpu/gpudirect.cc's string sums) when they
# come from a precompiled header, and not otherwise. The ASan build (-O0) does not meet it.
option(RAIL_PRECOMPILED_HEADERS "Reuse precompiled standard, JSON and GoogleTest headers" OFF)
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(RAIL_PRECOMPILED_HEADERS OFF)
endif()

set(rail_precompiled_standard
    <algorithm> <chrono> <cstdint> <filesystem> <functional> <map> <memory> <mutex> <optional>
    <set> <sstream> <string> <string_view> <thread> <unordered_map> <utility> <variant> <vector>)

if(RAIL_PRECOMPILED_HEADERS)
  add_library(rail_precompiled_layers OBJECT ${CMAKE_CURRENT_LIST_DIR}/precompiled/anchor.cc)
  rail_strict(rail_precompiled_layers)
  target_precompile_headers(rail_precompiled_layers PRIVATE ${rail_precompiled_standard}
                            <nlohmann/json.hpp>)
endif()

# The target reuses the layers' header (kind LAYER) or the tests' (kind TEST).
function(rail_precompiled target kind)
  if(NOT RAIL_PRECOMPILED_HEADERS)
    return()
  endif()
  if(kind STREQUAL "TEST")
    if(NOT TARGET rail_precompiled_tests)
      add_library(rail_precompiled_tests OBJECT ${PROJECT_SOURCE_DIR}/cmake/precompiled/anchor.cc)
      rail_strict(rail_precompiled_tests)
      target_link_libraries(rail_precompiled_tests PRIVATE GTest::gtest GTest::gmock)
      target_precompile_headers(rail_precompiled_tests PRIVATE ${rail_precompiled_standard}
                                <nlohmann/json.hpp> <gtest/gtest.h> <gmock/gmock.h>)
    endif()
    target_precompile_headers(${target} REUSE_FROM rail_precompiled_tests)
  else()
    target_precompile_headers(${target} REUSE_FROM rail_precompiled_layers)
  endif()
endfunction()
