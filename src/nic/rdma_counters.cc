// The transport counters per RDMA driver. One count of each is one event the driver saw; what it
// means is the driver source's (docs/nic-statistics.md).
#include "rail/nic/rdma_counters.h"

#include <algorithm>
#include <vector>

namespace rail::nic {
namespace {

using enum TransportEvent;

constexpr TransportCounter kCounters[] = {
    // mlx5_ib
    {"out_of_sequence", kLoss, "mlx5_ib", "the responder received a packet out of sequence"},
    {"packet_seq_err", kLoss, "mlx5_ib", "the requester received a NAK for a sequence error"},
    {"implied_nak_seq_err", kLoss, "mlx5_ib",
     "the requester inferred a lost packet from a later response"},
    {"local_ack_timeout_err", kTimeout, "mlx5_ib", "the requester's ACK timer expired"},
    {"rnr_nak_retry_err", kReceiverNotReady, "mlx5_ib",
     "the requester ran out of RNR retries: the peer posted no receive"},
    {"duplicate_request", kLoss, "mlx5_ib rdma_rxe",
     "the responder received a request again: the requester retransmitted"},
    {"req_transport_retries_exceeded", kTimeout, "mlx5_ib (6.11 on)",
     "the requester ran out of transport retries"},
    {"req_rnr_retries_exceeded", kReceiverNotReady, "mlx5_ib (6.11 on)",
     "the requester ran out of RNR retries"},
    {"roce_adp_retrans", kTimeout, "mlx5_ib", "an adaptive retransmission after a timeout"},
    {"roce_adp_retrans_to", kTimeout, "mlx5_ib", "an adaptive retransmission that timed out again"},
    // rdma_rxe
    {"rcvd_seq_err", kLoss, "rdma_rxe", "the requester received a NAK for a sequence error"},
    {"out_of_seq_request", kLoss, "rdma_rxe", "the responder received a request out of sequence"},
    // rxe's completer takes one retry path after a sequence-error NAK and after its timer: in
    // the lab it rose with rcvd_seq_err where nothing timed out.
    {"completer_retry_err", kLoss, "rdma_rxe",
     "the requester retransmitted, after a sequence-error NAK or its retry timer"},
    {"retry_exceeded_err", kTimeout, "rdma_rxe", "the requester ran out of retries"},
    {"rcvd_rnr_err", kReceiverNotReady, "rdma_rxe", "the requester received an RNR NAK"},
    {"send_rnr_err", kReceiverNotReady, "rdma_rxe",
     "the responder sent an RNR NAK: this host posted no receive"},
    {"retry_rnr_exceeded_err", kReceiverNotReady, "rdma_rxe",
     "the requester ran out of RNR retries"},
    // bnxt_re
    {"to_retransmits", kTimeout, "bnxt_re", "a retransmission after the ACK timer expired"},
    {"seq_err_naks_rcvd", kLoss, "bnxt_re", "the requester received a NAK for a sequence error"},
    {"max_retry_exceeded", kTimeout, "bnxt_re", "the requester ran out of retries"},
    {"rnr_naks_rcvd", kReceiverNotReady, "bnxt_re", "the requester received an RNR NAK"},
    {"dup_req", kLoss, "bnxt_re",
     "the responder received a request again: the requester retransmitted"},
    {"oos_drop_count", kLoss, "bnxt_re", "a packet dropped for arriving out of sequence"},
    {"missing_resp", kTimeout, "bnxt_re", "a response that never came"},
    // irdma counts no RoCE retransmission; in iWARP mode its TCP does.
    {"tcpRetransSegs", kLoss, "irdma", "iWARP's TCP retransmitted a segment"},
};

}  // namespace

std::span<const TransportCounter> TransportCounters() {
  return kCounters;
}

const TransportCounter* FindTransportCounter(std::string_view file) {
  const auto found = std::find_if(std::begin(kCounters), std::end(kCounters),
                                  [&](const TransportCounter& one) { return one.file == file; });
  return found == std::end(kCounters) ? nullptr : &*found;
}

const char* TransportEventName(TransportEvent event) {
  switch (event) {
    case kLoss:
      return "loss";
    case kTimeout:
      return "timeout";
    case kReceiverNotReady:
      return "receiver not ready";
  }
  return "";
}

std::span<const std::string_view> FabricHwCounterFiles() {
  static const std::vector<std::string_view> kFiles = [] {
    std::vector<std::string_view> files;
    for (const auto& counter : kCounters) files.push_back(counter.file);
    files.push_back(kRdmaReceiveNotPosted);
    files.insert(files.end(), std::begin(kDcqcnCounters), std::end(kDcqcnCounters));
    return files;
  }();
  return kFiles;
}

}  // namespace rail::nic
