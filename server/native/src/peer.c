/*
 * Whether a connection to the daemon comes from a sandboxed process. A
 * sandbox with the network on shares the machine's network namespace, so it
 * can reach the daemon on loopback like any local client; the daemon asks
 * here before it reads a byte of a request, and refuses one that does.
 *
 * The other end's socket is found by its four addresses in the kernel's
 * socket table (sock_diag, one exact lookup). Then:
 * - with cgroups, the socket carries the cgroup of the process that made it
 *   (INET_DIAG_CGROUP_ID), fixed for the socket's life: a sandbox's cgroup
 *   says sandboxed, whatever the process did with the descriptor since;
 * - without, the socket must be held by some process that is not in a
 *   sandbox: every process of the machine is looked at (only while a
 *   network sandbox may be alive, and only for new connections). Passing
 *   the descriptor around inside a sandbox never makes an outside holder.
 * A socket whose owner already closed it (inode 0) cannot be told apart, and
 * is refused: a real client keeps its socket open while it talks.
 * A socket not in the table is not a local process's: allowed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host.h"
#include "procfs.h"
#include "trees.h"
#include "util.h"

#ifndef INET_DIAG_CGROUP_ID
#define INET_DIAG_CGROUP_ID 21
#endif

struct found {
  int exists;
  uint32_t inode;
  uint64_t cgroup_id;
  int has_cgroup;
};

static int lookup(int family, const uint8_t local[16], uint16_t local_port, const uint8_t remote[16], uint16_t remote_port, struct found *out) {
  memset(out, 0, sizeof *out);
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return -1;
  struct {
    struct nlmsghdr header;
    struct inet_diag_req_v2 request;
  } message = {
      .header = {.nlmsg_len = sizeof message, .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST},
      .request = {.sdiag_family = (uint8_t)(family == 6 ? AF_INET6 : AF_INET), .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u},
  };
  /* The other end's socket: its source is the remote address, its destination our own. */
  struct inet_diag_sockid *id = &message.request.id;
  id->idiag_sport = htons(remote_port);
  id->idiag_dport = htons(local_port);
  memcpy(id->idiag_src, remote, family == 6 ? 16 : 4);
  memcpy(id->idiag_dst, local, family == 6 ? 16 : 4);
  id->idiag_cookie[0] = id->idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  if (sendto(fd, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
    close(fd);
    return -1;
  }
  union {
    uint8_t bytes[8192];
    struct nlmsghdr header;
  } reply;
  ssize_t n = recv(fd, reply.bytes, sizeof reply.bytes, 0);
  close(fd);
  if (n < 0) return -1;
  for (struct nlmsghdr *h = &reply.header; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
    if (h->nlmsg_type == NLMSG_ERROR) {
      struct nlmsgerr *error = NLMSG_DATA(h);
      /* ENOENT: no such socket here. */
      return error->error == 0 || error->error == -ENOENT ? 0 : -1;
    }
    if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
    struct inet_diag_msg *msg = NLMSG_DATA(h);
    out->exists = 1;
    out->inode = msg->idiag_inode;
    int attributes_len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *msg));
    for (struct rtattr *a = (struct rtattr *)(msg + 1); RTA_OK(a, attributes_len); a = RTA_NEXT(a, attributes_len)) {
      if (a->rta_type == INET_DIAG_CGROUP_ID && RTA_PAYLOAD(a) >= (int)sizeof(uint64_t)) {
        memcpy(&out->cgroup_id, RTA_DATA(a), sizeof(uint64_t));
        out->has_cgroup = 1;
      }
    }
    return 0;
  }
  return 0;
}

/* Whether some process outside every sandbox holds socket `inode` (a look at the whole machine's /proc). */
static int held_outside_sandboxes(uint32_t inode) {
  int proc_dir = procfs_outer();
  /* Reopened: the machine's /proc is held as an O_PATH descriptor, which cannot be listed. */
  int dir_fd = proc_dir >= 0 ? openat(proc_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return 0;
  DIR *processes = fdopendir(dir_fd);
  if (!processes) {
    close(dir_fd);
    return 0;
  }
  rewinddir(processes);
  char wanted[64];
  int wanted_len = snprintf(wanted, sizeof wanted, "socket:[%u]", inode);
  int outside = 0;
  struct dirent *e;
  while (!outside && (e = readdir(processes))) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    char fd_dir_path[64];
    snprintf(fd_dir_path, sizeof fd_dir_path, "%ld/fd", pid);
    int fds_fd = openat(dirfd(processes), fd_dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fds_fd < 0) continue;
    DIR *fds = fdopendir(fds_fd);
    if (!fds) {
      close(fds_fd);
      continue;
    }
    struct dirent *f;
    while ((f = readdir(fds))) {
      if (f->d_name[0] == '.') continue;
      char target[64];
      ssize_t n = readlinkat(dirfd(fds), f->d_name, target, sizeof target - 1);
      if (n != wanted_len || memcmp(target, wanted, (size_t)n)) continue;
      if (!procs_is_sandboxed_outer_pid((pid_t)pid)) outside = 1;
      break;
    }
    closedir(fds);
  }
  closedir(processes);
  return outside;
}

int peer_is_sandboxed(int family, const uint8_t local[16], uint16_t local_port, const uint8_t remote[16], uint16_t remote_port) {
  if (!procs_network_sandboxes()) return 0;
  struct found found;
  if (lookup(family, local, local_port, remote, remote_port, &found) < 0) {
    logf_(LOG_WARN, "cannot look a connection's peer up (sock_diag): refusing it while a network sandbox runs");
    return 1;
  }
  if (!found.exists) return 0;
  if (found.inode == 0) return 1;
  if (trees_info()->kind == CONTAIN_CGROUP && found.has_cgroup) return procs_is_sandbox_cgroup(found.cgroup_id);
  return !held_outside_sandboxes(found.inode);
}
