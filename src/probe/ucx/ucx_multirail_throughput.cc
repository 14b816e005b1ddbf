// ucx_multirail_throughput: one context over every rail, as NIXL-style applications run, and UCX
// stripes as it sees fit (MAX_RNDV_RAILS / MAX_EAGER_RAILS = the number of rails). UCX 1.13 was
// seen splitting 50/50 in one run and putting everything on one rail in the next with the same
// settings, so nothing here assumes a split: the rails' counters say where the bytes went.
#include "probe/ucx/initiator.h"

namespace rail::probe {

ProbeResult UcxMultirailThroughputProbe::Run(const ProbeParams& params,
                                             const ProbeContext& context) {
  return detail::RunInitiator(
      {ProbeKind::kUcxMultirailThroughput, detail::ValidateUcxParams(params, true, 1 << 20)},
      params, context, detail::MeasureOneContextThroughput);
}

}  // namespace rail::probe
