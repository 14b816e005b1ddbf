// The RDMA port's hw_counters (class/infiniband/<device>/ports/<port>/hw_counters/<file>) that say
// something about the fabric or the host, by the name each RDMA driver gives them: the transport's
// retransmissions, timeouts and RNR retries (named differently by mlx5_ib, bnxt_re, irdma and
// rdma_rxe), a receive nobody posted, and DCQCN. Names from the drivers' sources
// (data/nic-statistics/<driver>.tsv), held against them by a test.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace rail::nic {

// What a rise of a transport counter says happened.
enum class TransportEvent : std::uint8_t {
  kLoss,              // a packet went missing: sequence errors, NAKs, duplicates
  kTimeout,           // the sender's ACK timer expired and it retransmitted (loss, or a dead peer)
  kReceiverNotReady,  // RNR: the peer posted no receive in time, and the sender retried
};

struct TransportCounter {
  std::string_view file;  // hw_counters/<file>
  TransportEvent event;
  std::string_view drivers;  // the RDMA drivers that name it so
  std::string_view meaning;  // for reasons: what one count is
};

// Every retransmission, timeout and RNR counter of the drivers above.
std::span<const TransportCounter> TransportCounters();
// The counter named `file`, or nullptr.
const TransportCounter* FindTransportCounter(std::string_view file);
const char* TransportEventName(TransportEvent event);  // "loss", "timeout", "receiver not ready"

// hw_counters/<file> of an application that posted no receive in time (mlx5_ib out_of_buffer):
// a host fault, not the fabric's.
inline constexpr std::string_view kRdmaReceiveNotPosted = "out_of_buffer";

// DCQCN (mlx5_ib): CNPs ignored by the reaction point, ECN-marked packets and CNPs sent by the
// notification point.
inline constexpr std::string_view kDcqcnCounters[] = {"rp_cnp_ignored",
                                                      "np_ecn_marked_roce_packets", "np_cnp_sent"};

// Every hw_counters file the fabric checks and a probe run's evidence read: the transport
// counters, kRdmaReceiveNotPosted and kDcqcnCounters.
std::span<const std::string_view> FabricHwCounterFiles();

}  // namespace rail::nic
