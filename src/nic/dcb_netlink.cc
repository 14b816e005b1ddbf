// DCB_CMD_IEEE_GET over rtnetlink, one socket per read: a read is one request and one answer, and
// a socket of its own keeps concurrent scrapes apart without a lock.
#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

#include "rail/nic/dcb.h"

namespace rail::nic {
namespace {

struct SocketCloser {
  void operator()(mnl_socket* socket) const { mnl_socket_close(socket); }
};
using Socket = std::unique_ptr<mnl_socket, SocketCloser>;

DcbConfig SocketError(const char* what) {
  DcbConfig config;
  config.state = DcbState::kError;
  config.error = std::string(what) + ": " + std::strerror(errno);
  return config;
}

}  // namespace

DcbConfig NetlinkDcbReader::Read(const std::string& netdev) const {
  Socket socket(mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC));
  if (!socket) return SocketError("netlink socket");
  if (mnl_socket_bind(socket.get(), 0, MNL_SOCKET_AUTOPID) < 0) return SocketError("netlink bind");

  // The answer holds a few hundred bytes (PFC, ETS, an app table of at most 64 DSCP entries);
  // libmnl's page-sized buffer leaves room for the peer's settings as well.
  std::vector<std::byte> buffer(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* request = mnl_nlmsg_put_header(buffer.data());
  request->nlmsg_type = RTM_GETDCB;
  request->nlmsg_flags = NLM_F_REQUEST;
  request->nlmsg_seq = static_cast<std::uint32_t>(std::time(nullptr));
  auto* header = static_cast<dcbmsg*>(mnl_nlmsg_put_extra_header(request, sizeof(dcbmsg)));
  header->dcb_family = AF_UNSPEC;
  header->cmd = DCB_CMD_IEEE_GET;
  mnl_attr_put_strz(request, DCB_ATTR_IFNAME, netdev.c_str());
  const std::uint32_t sequence = request->nlmsg_seq;

  if (mnl_socket_sendto(socket.get(), request, request->nlmsg_len) < 0) {
    return SocketError("netlink send");
  }
  const ssize_t received = mnl_socket_recvfrom(socket.get(), buffer.data(), buffer.size());
  if (received < 0) return SocketError("netlink receive");
  return ParseDcbAnswer(std::span(buffer.data(), static_cast<std::size_t>(received)), sequence,
                        mnl_socket_get_portid(socket.get()));
}

}  // namespace rail::nic
