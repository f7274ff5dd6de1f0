#!/usr/bin/env bash
# A one-node Slurm cluster in a private folder, for the course server's tests and for trying the
# Slurm backend on one machine: munged, slurmctld and slurmd from Debian's packages, started as
# the user who runs this (root in CI), with every config, key, socket, pid, log and state file
# in DIR. No systemd, nothing under /etc, /run or /var; only loopback.
#   server/slurm/cluster.sh start DIR   write DIR/slurm.conf (and DIR/gres.conf where nvidia-smi
#                                       lists GPUs), a fresh munge key, start the three daemons and
#                                       wait until sinfo shows the node idle (at most 30 s)
#   server/slurm/cluster.sh stop DIR    cancel its jobs, stop the daemons, wait until they are gone
#   server/slurm/cluster.sh env DIR     print the line a shell evals to use it: export SLURM_CONF=...
# The clients (sbatch, squeue, scancel, sinfo) find this cluster through SLURM_CONF=DIR/slurm.conf,
# whose AuthInfo names DIR's munge socket.
# Install (Debian): apt-get install --no-install-recommends slurmctld slurmd slurm-client munge
# Exit status: 0 done, 1 a daemon did not start or stop (its log is printed), 2 bad usage.
set -uo pipefail
usage() { echo "usage: server/slurm/cluster.sh start|stop|env DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
what=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd) || { echo "cluster.sh: cannot use folder $2" >&2; exit 2; }
conf=$dir/slurm.conf
say() { echo "cluster.sh: $*"; }
fail() { say "$*" >&2; exit 1; }
export SLURM_CONF=$conf
pid_of() { [ -s "$dir/$1.pid" ] && cat "$dir/$1.pid"; }
running() { local p; p=$(pid_of "$1") && kill -0 "$p" 2>/dev/null; }
show_log() { [ -f "$dir/$1.log" ] && tail -n 15 "$dir/$1.log" | sed "s/^/  $1.log: /" >&2; }

# The daemons start with COURSE_SLURM_CLUSTER=DIR in their environment, which the slurmstepd of
# each job inherits; a job's own processes carry SLURM_JOB_ID and SLURM_CONF=DIR/slurm.conf. That
# is how stop finds what has no pid file, and only that (never this script or its caller).
_ours() {
  grep -lzxF "COURSE_SLURM_CLUSTER=$dir" /proc/[0-9]*/environ 2>/dev/null
  grep -lzxF "SLURM_CONF=$conf" /proc/[0-9]*/environ 2>/dev/null |
    xargs -r grep -lz '^SLURM_JOB_ID=' 2>/dev/null
}
ours() { _ours | sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' | grep -vx "$$" | sort -u; }

start() {
  for t in munged slurmctld slurmd sinfo sbatch; do
    command -v "$t" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$t" >/dev/null 2>&1 ||
      fail "$t is missing: apt-get install --no-install-recommends slurmctld slurmd slurm-client munge"
  done
  export PATH=$PATH:/usr/sbin
  running slurmctld && fail "a cluster is already running in $dir (cluster.sh stop $dir first)"
  { mkdir -p "$dir/state" "$dir/spool" && chmod 700 "$dir"; } || fail "cannot write in $dir"
  local user node ports ctld_port slurmd_port gres="" files=() f
  user=$(id -un)
  node=$(hostname -s)
  # Two free ports on loopback, so that two clusters (two tests at once) never meet.
  ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])') || fail "python3 is needed to pick free ports"
  read -r ctld_port slurmd_port <<<"$ports"

  # The node as slurmd sees it (CPUs, sockets, memory), so that the controller never drains it
  # for a mismatch; a GPU gres only where there are GPUs (a gres declared without a device
  # would drain the node).
  local hw
  hw=$(slurmd -C 2>/dev/null | head -n1 | sed 's/^NodeName=[^ ]* //')
  [ -n "$hw" ] || hw="CPUs=$(nproc)"
  for f in /dev/nvidia[0-9]*; do [ -e "$f" ] && files+=("$f"); done
  if [ ${#files[@]} -gt 0 ] && command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    gres="Gres=gpu:${#files[@]}"
    : >"$dir/gres.conf"
    for f in "${files[@]}"; do echo "NodeName=$node Name=gpu File=$f" >>"$dir/gres.conf"; done
  else
    rm -f "$dir/gres.conf"
  fi

  cat >"$conf" <<EOF
# Written by server/slurm/cluster.sh: a one-node cluster in $dir.
ClusterName=course
SlurmctldHost=$node(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
CommunicationParameters=NoInAddrAny
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups, no accounting daemon: the processes of a job are tracked by their parents, and a
# finished job stays visible to scontrol for MinJobAge seconds. A batch job is scheduled as soon
# as it is submitted (batch_sched_delay=0), not up to 3 s later.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MinJobAge=600
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
${gres:+GresTypes=gpu}
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node $hw $gres State=UNKNOWN
PartitionName=course Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

  # A fresh key for this cluster alone (munge refuses one that others can read).
  rm -f "$dir/munge.key"
  if command -v mungekey >/dev/null 2>&1; then
    mungekey --create --keyfile="$dir/munge.key" 2>/dev/null
  fi
  [ -s "$dir/munge.key" ] || head -c 1024 /dev/urandom >"$dir/munge.key"
  chmod 400 "$dir/munge.key"
  local mark=(env "COURSE_SLURM_CLUSTER=$dir")
  "${mark[@]}" munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" ||
    { show_log munged; fail "munged did not start"; }
  "${mark[@]}" slurmctld -i -f "$conf" || { show_log slurmctld; fail "slurmctld did not start"; }
  "${mark[@]}" slurmd -f "$conf" -N "$node" || { show_log slurmd; fail "slurmd did not start"; }

  local state=""
  for _ in $(seq 1 60); do
    state=$(sinfo -h -N -n "$node" -o '%T' 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.5
  done
  if [ "$state" != idle ]; then
    show_log slurmctld; show_log slurmd
    stop_daemons
    fail "the node did not become idle in 30 s (sinfo: ${state:-no answer})"
  fi
  say "one-node cluster up in $dir: node $node idle${gres:+, $gres}, slurmctld on 127.0.0.1:$ctld_port"
  say "use it with: export SLURM_CONF=$conf"
}

stop_daemons() {
  local d p left
  # The jobs first (their slurmstepd belongs to slurmd), then the daemons, newest first.
  if running slurmctld; then
    scancel --quiet --partition=course --full 2>/dev/null
    scancel --quiet --user="$(id -un)" 2>/dev/null
  fi
  for _ in $(seq 1 20); do
    [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
    running slurmctld || break
    sleep 0.25
  done
  for d in slurmd slurmctld munged; do
    p=$(pid_of "$d") && kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$p" 2>/dev/null && { say "$d (pid $p) ignored SIGTERM for 10 s: SIGKILL"; kill -KILL "$p"; }
  done
  # Anything left of its jobs (a slurmstepd or a job's process).
  left=$(ours)
  if [ -n "$left" ]; then
    say "ending what its jobs left: pids $(tr '\n' ' ' <<<"$left")"
    for p in $left; do kill -KILL "$p" 2>/dev/null; done
  fi
  for _ in $(seq 1 20); do [ -z "$(ours)" ] && break; sleep 0.25; done
  [ -z "$(ours)" ]
}

case $what in
  start) start ;;
  stop)
    [ -f "$conf" ] || fail "no cluster in $dir (no slurm.conf)"
    export PATH=$PATH:/usr/sbin
    stop_daemons || fail "processes of the cluster still run: $(ours | tr '\n' ' ')"
    say "stopped the cluster in $dir" ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) usage ;;
esac
