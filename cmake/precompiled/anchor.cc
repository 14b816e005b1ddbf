// The one source of the targets that compile the precompiled headers
// (cmake/precompiled_headers.cmake): a target needs a source for its header to be built.
