#!/bin/sh
# Open MPI's remote launch agent for tests/mpi/test_two_hosts.py: it stands in for `ssh HOST COMMAND`
# (`mpirun --mca plm_rsh_agent tests/mpi/netns_agent.sh`).
#
#   netns_agent.sh HOST COMMAND...
#
# HOST is a Linux network namespace of the same name (`ip netns add HOST`), i.e. one "host" of the test.
# COMMAND is the orted command line Open MPI builds for a remote shell (its words joined and re-read by
# /bin/sh, as sshd does). It runs inside the namespace HOST, in a new UTS namespace whose hostname is HOST,
# with the clean environment a non-interactive ssh login gives (PATH, HOME, LD_LIBRARY_PATH only): whatever
# the ranks there need from mpirun's environment must be forwarded with `mpirun -x`, as on a real cluster.
# An unknown HOST exits 255, as ssh does when it cannot reach a host. Each launch is logged to stderr (Open MPI
# may discard it) and, when DPOINTNET_NETNS_AGENT_LOG names a file, appended there.
set -eu
if [ $# -lt 2 ]; then
    echo "netns_agent.sh: usage: netns_agent.sh HOST COMMAND..." >&2
    exit 255
fi
host=$1
shift
if ! ip netns list | awk '{print $1}' | grep -qxF -- "$host"; then
    echo "netns_agent.sh: no network namespace named '$host' (ip netns list), so no such host" >&2
    exit 255
fi
line="netns_agent.sh: launching on $host (ip netns exec $host): $*"
echo "$line" >&2
if [ -n "${DPOINTNET_NETNS_AGENT_LOG:-}" ]; then
    echo "$line" >> "$DPOINTNET_NETNS_AGENT_LOG"
fi
# shellcheck disable=SC2016  # $0 and $1 are expanded by the inner shell
exec env -i PATH="$PATH" HOME="${HOME:-/}" ${LD_LIBRARY_PATH+"LD_LIBRARY_PATH=$LD_LIBRARY_PATH"} \
    ip netns exec "$host" unshare --uts /bin/sh -c \
    'echo "$0" > /proc/sys/kernel/hostname && exec /bin/sh -c "$1"' "$host" "$*"
