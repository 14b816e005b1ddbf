// ucx_multirail_throughput: one context over every rail, as NIXL-style applications run, and UCX
// stripes as it sees fit (MAX_RNDV_RAILS / MAX_EAGER_RAILS = the number of rails). UCX 1.13 was
// seen splitting 50/50 in one run and putting everything on one rail in the next with the same
// settings, so nothing here assumes a split: the rails' counters say where the bytes went.
#include <exception>

#include "ucx_probe_run.h"

namespace rail::probe {

ProbeResult UcxMultirailThroughputProbe::Run(const ProbeParams& params,
                                             const ProbeContext& context) {
  ProbeResult result = detail::NewResult(params);
  result.kind = ProbeKind::kUcxMultirailThroughput;
  try {
    if (std::optional<std::string> invalid = detail::ValidateUcxParams(params, true, 1 << 20)) {
      detail::SetFailure(&result, "invalid_argument", *invalid);
      return result;
    }
    ProbeParams all = params;
    all.kind = ProbeKind::kUcxMultirailThroughput;
    detail::RunOneContextThroughput(all, context, &result);
  } catch (const std::exception& error) {
    detail::SetFailure(&result, "internal", error.what());
  }
  return result;
}

}  // namespace rail::probe
