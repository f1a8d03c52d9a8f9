// Test support: a loopback TCP port that nobody listens on (bound by the kernel's choice, read
// back, closed again). Tests use it for a server they start themselves, or as an address that
// refuses connections. Not for production code: another process may take the port meanwhile.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace vw::test_support {

// The port number, or 0 when no socket could be bound.
inline int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0;
  close(fd);
  return bound ? ntohs(sa.sin_port) : 0;
}

}  // namespace vw::test_support
