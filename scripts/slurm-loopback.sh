#!/usr/bin/env bash
# slurm-loopback.sh - a real one-node Slurm cluster (munged + slurmctld + slurmd)
# on 127.0.0.1, for CI on Debian 12 (bookworm) as root, without systemd.
# From the project's shared recipe (recipes/slurm-loopback.sh), with one knob added:
# SLURM_CI_KILL_INVALID_DEPEND=0 leaves Slurm's default dependency handling (tests/slurm.rs
# checks that gdrsim's merge job is cancelled by its own --kill-on-invalid-dep).
#
# Usage:  bash slurm-loopback.sh [all|install|start|test|stop|status]
#   all      (default) install, start, test, stop; exit status = test result
#   install  apt-get install the Debian packages (skipped if already there)
#   start    write the config, start munged/slurmctld/slurmd, wait for node idle
#   test     array job + afterok dependency + failing-dependency check
#   stop     cancel jobs, scontrol shutdown, stop munged (all by PID)
#   status   show daemons / sinfo
#
# Typical CI use:
#   bash slurm-loopback.sh install && bash slurm-loopback.sh start
#   export SLURM_CONF=/tmp/slurm-ci/slurm.conf   # also linked at /etc/slurm/slurm.conf
#   cargo test ...                                # tests may call sbatch/squeue/scontrol
#   bash slurm-loopback.sh stop
#
# Knobs (environment):
#   SLURM_CI_DIR   state/spool/logs/config dir            (default /tmp/slurm-ci)
#   SLURM_CI_CTLD_PORT / SLURM_CI_SLURMD_PORT             (default 6817 / 6818)
#   SLURM_CI_CPUS  CPUs to advertise; may exceed nproc to run more array tasks at
#                  once (config_overrides makes slurmd accept it); default: hardware
#   SLURM_CI_TIMEOUT  seconds to wait for idle node / job completion (default 120)
set -euo pipefail

DIR=${SLURM_CI_DIR:-/tmp/slurm-ci}
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF
CTLD_PORT=${SLURM_CI_CTLD_PORT:-6817}
SLURMD_PORT=${SLURM_CI_SLURMD_PORT:-6818}
TIMEOUT=${SLURM_CI_TIMEOUT:-120}
case $DIR in /*/*) ;; *) echo "SLURM_CI_DIR must be an absolute path below a top-level dir (it is wiped on start)" >&2; exit 2 ;; esac
NODE=localhost
SYS_CONF=/etc/slurm/slurm.conf
if [ "${SLURM_CI_KILL_INVALID_DEPEND:-1}" = 0 ]; then DEPEND_LINE="#DependencyParameters="; else DEPEND_LINE="DependencyParameters=kill_invalid_depend"; fi

MUNGE_RUN=/run/munge
PKGS=(slurmctld slurmd slurm-client munge)

log() { printf '[slurm-ci %s] %s\n' "$(date +%T)" "$*" >&2; }
IN_ALL=0
die() { log "ERROR: $*"; [ "$IN_ALL" = 1 ] || dump_logs; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.2f", b-a}'; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pidof_file() { [ -s "$1" ] && cat "$1" || true; }

dump_logs() {
  local f
  for f in "$DIR"/log/slurmctld.log "$DIR"/log/slurmd.log /var/log/munge/munged.log; do
    [ -f "$f" ] || continue
    echo "----- tail $f" >&2
    tail -n 25 "$f" >&2 || true
  done
}

# wait_for SECONDS DESCRIPTION COMMAND...   (polls every 0.2 s)
wait_for() {
  local limit=$1 what=$2; shift 2
  local t0; t0=$(now)
  while ! "$@" >/dev/null 2>&1; do
    if awk -v a="$t0" -v b="$(now)" -v l="$limit" 'BEGIN{exit !(b-a>l)}'; then
      die "timed out after ${limit}s waiting for: $what"
    fi
    sleep 0.2
  done
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# "JobState=COMPLETED JobState=FAILED " (unique states over all array tasks)
job_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' '; }
# true when every record of the job (all array tasks) is in a final state
job_done() {
  local s; s=$(job_state "$1")
  [ -n "$s" ] && ! grep -qE 'PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUE' <<<"$s"
}

# ---------------------------------------------------------------- install
do_install() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
     command -v sbatch >/dev/null && command -v munged >/dev/null; then
    log "packages already installed: $(slurmctld -V 2>/dev/null), $(munged -V 2>/dev/null)"
    return 0
  fi
  local t0 added_policy=0
  t0=$(now)
  export DEBIAN_FRONTEND=noninteractive
  # Without systemd, the postinst scripts would run /etc/init.d/* start via
  # invoke-rc.d (munged would start behind our back). Deny that while installing.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    added_policy=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null
  if [ "$added_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; trap - EXIT; fi
  log "TIMING install: $(since "$t0") s ($(slurmctld -V), $(munged -V))"
}

# ---------------------------------------------------------------- munge
munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
  if munge_ok; then
    log "a working munged is already running; using it (will not stop it)"
    rm -f "$DIR/munged.pid"
    return 0
  fi
  # Directories systemd/the init script would normally create or check.
  install -d -o munge -g munge -m 0755 "$MUNGE_RUN"
  install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge
  install -d -o munge -g munge -m 0711 /var/lib/munge
  if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    runuser -u munge -- mungekey --create --keyfile=/etc/munge/munge.key
  fi
  rm -f "$MUNGE_RUN/munged.pid"
  # munged refuses to run as root ("Logfile is insecure") unless --force; run it
  # as its own user instead. It daemonizes and writes its pid file.
  runuser -u munge -- /usr/sbin/munged
  wait_for 10 "munged pid file" test -s "$MUNGE_RUN/munged.pid"
  cp "$MUNGE_RUN/munged.pid" "$DIR/munged.pid"
  wait_for 10 "munge credential round trip" munge_ok
  log "munged up (pid $(cat "$DIR/munged.pid"))"
}

# ---------------------------------------------------------------- config
write_conf() {
  local hw
  if [ -n "${SLURM_CI_CPUS:-}" ]; then
    hw="CPUs=$SLURM_CI_CPUS RealMemory=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 - 512 ))"
  else
    # "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105"
    hw=$(SLURM_CONF=/nonexistent slurmd -C 2>/dev/null | sed -n -e '1s/^NodeName=[^ ]* *//p' || true)
    case $hw in *CPUs=*) ;; *) hw="CPUs=$(nproc) RealMemory=1024" ;; esac
  fi
  cat > "$CONF" <<EOF
# generated by slurm-loopback.sh
ClusterName=ci
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
# bind only to the resolved address (127.0.0.1), not 0.0.0.0
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# default batch_sched_delay=3 adds ~3 s between scheduling waves
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
# a job whose afterok can never be met is cancelled instead of pending forever (unless
# SLURM_CI_KILL_INVALID_DEPEND=0: Slurm's default, which gdrsim's merge job must survive alone)
$DEPEND_LINE

SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=300
MaxArraySize=10001
KillWait=5
InactiveLimit=0
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE $hw State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
  # Let plain 'sbatch' (no SLURM_CONF) find it too, unless a real config is there.
  mkdir -p /etc/slurm
  if [ ! -e "$SYS_CONF" ] || [ "$(readlink "$SYS_CONF" 2>/dev/null)" = "$CONF" ]; then
    ln -sfn "$CONF" "$SYS_CONF"
  else
    log "note: $SYS_CONF exists and is not ours; export SLURM_CONF=$CONF"
  fi
}

# ---------------------------------------------------------------- start/stop
node_idle() { [ "$(sinfo -h -n "$NODE" -o %t 2>/dev/null)" = idle ]; }

do_start() {
  command -v slurmctld >/dev/null || die "slurm not installed (run: $0 install)"
  if alive "$(pidof_file "$DIR/slurmctld.pid")" || alive "$(pidof_file "$DIR/slurmd.pid")"; then
    log "daemons from a previous start are running; stopping them first"
    do_stop
  fi
  local p
  for p in "$CTLD_PORT" "$SLURMD_PORT"; do
    if port_busy "$p"; then die "port $p on 127.0.0.1 is already in use (set SLURM_CI_*_PORT)"; fi
  done
  local t0; t0=$(now)
  rm -rf "$DIR"
  mkdir -p "$DIR"/state "$DIR"/spool "$DIR"/log "$DIR"/work
  start_munge
  write_conf
  # Both daemonize (no -D) so they do not hold the CI job's stdout/stderr open.
  slurmctld -f "$CONF"
  wait_for 30 "slurmctld pid file" test -s "$DIR/slurmctld.pid"
  wait_for 30 "slurmctld to answer" bash -c 'scontrol ping | grep -q UP'
  # -N: the node name is 'localhost', not \$(hostname)
  slurmd -f "$CONF" -N "$NODE"
  wait_for 30 "slurmd pid file" test -s "$DIR/slurmd.pid"
  wait_for "$TIMEOUT" "node $NODE idle" node_idle
  log "TIMING start-to-idle: $(since "$t0") s (slurmctld pid $(cat "$DIR/slurmctld.pid"), slurmd pid $(cat "$DIR/slurmd.pid"))"
  # Readiness probe: one real job end to end (munge creds to slurmd, spool,
  # slurmstepd). The first scheduling pass after slurmctld starts comes ~1-3 s late,
  # so paying it here keeps the test timings steady.
  # (Polling scontrol, not 'sbatch --wait': that one polls at 2 s, 4 s, ... intervals.)
  local t1 probe; t1=$(now)
  probe=$(sbatch --parsable -o /dev/null --wrap true)
  wait_for "$TIMEOUT" "probe job $probe" job_done "$probe"
  [ "$(job_state "$probe")" = "JobState=COMPLETED " ] || die "probe job: $(job_state "$probe")"
  log "TIMING first job (readiness probe): $(since "$t1") s; cluster ready after $(since "$t0") s"
  sinfo >&2
}

do_stop() {
  local t0 ctld slurmd_pid munged_pid p
  t0=$(now)
  ctld=$(pidof_file "$DIR/slurmctld.pid")
  slurmd_pid=$(pidof_file "$DIR/slurmd.pid")
  if alive "$ctld"; then
    scancel --quiet --user=root 2>/dev/null || true   # jobs of this throwaway cluster only
    for _ in $(seq 1 50); do
      [ -z "$(squeue -h -t R,CG -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
    # stops slurmctld and every slurmd (needs munged up, so stop munged last)
    if scontrol shutdown >/dev/null 2>&1; then
      for _ in $(seq 1 150); do
        alive "$ctld" || alive "$slurmd_pid" || break
        sleep 0.2
      done
    else
      log "scontrol shutdown failed; signalling the daemons"
    fi
  fi
  for p in $ctld $slurmd_pid; do
    if alive "$p"; then
      log "SIGTERM pid $p"; kill "$p" || true
      for _ in $(seq 1 50); do alive "$p" || break; sleep 0.2; done
      if alive "$p"; then log "SIGKILL pid $p"; kill -9 "$p" || true; fi
    fi
  done
  munged_pid=$(pidof_file "$DIR/munged.pid")
  if alive "$munged_pid"; then
    kill "$munged_pid" || true
    for _ in $(seq 1 100); do alive "$munged_pid" || break; sleep 0.1; done
    if alive "$munged_pid"; then kill -9 "$munged_pid" || true; fi
  fi
  rm -f "$DIR/munged.pid"
  [ "$(readlink "$SYS_CONF" 2>/dev/null)" = "$CONF" ] && rm -f "$SYS_CONF"
  log "TIMING stop: $(since "$t0") s (logs kept in $DIR/log)"
}

do_status() {
  local n
  for n in munged slurmctld slurmd; do
    local p; p=$(pidof_file "$DIR/$n.pid")
    if alive "$p"; then echo "$n: running (pid $p)"; else echo "$n: not running"; fi
  done
  sinfo 2>&1 || true
}

# ---------------------------------------------------------------- test

do_test() {
  node_idle || die "node not idle; run '$0 start' first"
  local W=$DIR/work t0 arr dep bad baddep merged
  rm -rf "$W"; mkdir -p "$W"
  # A job script like the one a CLI would generate for a parameter sweep.
  cat > "$W/sweep.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=sweep
#SBATCH --array=0-3
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output=$W/sweep_%A_%a.log
echo "\$SLURM_ARRAY_TASK_ID" > "$W/out_\$SLURM_ARRAY_TASK_ID"
echo "job=\$SLURM_ARRAY_JOB_ID task=\$SLURM_ARRAY_TASK_ID count=\$SLURM_ARRAY_TASK_COUNT min=\$SLURM_ARRAY_TASK_MIN max=\$SLURM_ARRAY_TASK_MAX"
EOF
  t0=$(now)
  arr=$(sbatch --parsable "$W/sweep.sbatch")
  dep=$(sbatch --parsable --dependency=afterok:"$arr" --job-name=merge -o "$W/merge_%j.log" \
        --wrap "cat $W/out_0 $W/out_1 $W/out_2 $W/out_3 > $W/merged")
  log "submitted array job $arr and dependent merge job $dep"
  wait_for "$TIMEOUT" "merge job $dep" job_done "$dep"
  local rt; rt=$(since "$t0")
  [ "$(job_state "$arr")" = "JobState=COMPLETED " ] || die "array states: $(job_state "$arr")"
  [ "$(job_state "$dep")" = "JobState=COMPLETED " ] || die "merge job state: $(job_state "$dep")"
  merged=$(tr '\n' ' ' < "$W/merged")
  [ "$merged" = "0 1 2 3 " ] || die "merged output is '$merged'"
  log "TIMING array(4)+afterok round trip: $rt s; merged='$merged'"
  cat "$W"/sweep_"${arr}"_*.log >&2

  # afterok on an array with one failing task: dependent must be cancelled, not hang.
  t0=$(now)
  bad=$(sbatch --parsable --array=0-2 -o /dev/null --wrap 'exit $(( SLURM_ARRAY_TASK_ID == 1 ))')
  baddep=$(sbatch --parsable --dependency=afterok:"$bad" -o /dev/null --wrap 'true')
  wait_for "$TIMEOUT" "failing array $bad" job_done "$bad"
  wait_for "$TIMEOUT" "dependent $baddep to be cancelled" job_done "$baddep"
  job_state "$bad" | grep -q FAILED || die "expected a FAILED task in $bad: $(job_state "$bad")"
  [ "$(job_state "$baddep")" = "JobState=CANCELLED " ] || die "dependent state: $(job_state "$baddep")"
  log "TIMING failing-array + cancelled dependent: $(since "$t0") s ($(job_state "$bad")/ $(job_state "$baddep"))"

  # sbatch --wait: blocks, exit code = highest task exit code.
  t0=$(now)
  local rc=0
  sbatch --wait --quiet --array=0-1 -o /dev/null --wrap 'exit 0' || rc=$?
  [ "$rc" = 0 ] || die "sbatch --wait returned $rc"
  log "TIMING sbatch --wait array(2): $(since "$t0") s"

  [ -s "$DIR/log/jobcomp.log" ] && log "jobcomp records: $(wc -l < "$DIR/log/jobcomp.log")"
  echo "slurm-loopback: 3 passed, 0 failed"
}

# ---------------------------------------------------------------- main
cmd=${1:-all}
case $cmd in
  install) do_install ;;
  start)   do_start ;;
  stop)    do_stop ;;
  status)  do_status ;;
  test)    do_test ;;
  all)
    T_ALL=$(now)
    IN_ALL=1
    do_install
    trap 'rc=$?; trap - EXIT; [ $rc -ne 0 ] && dump_logs; do_stop; exit $rc' EXIT
    do_start
    do_test
    log "TIMING total (install+start+test, before stop): $(since "$T_ALL") s"
    ;;
  *) echo "usage: $0 [all|install|start|test|stop|status]" >&2; exit 2 ;;
esac
