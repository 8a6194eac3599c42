#!/usr/bin/env bash
# A Spark standalone cluster on this machine, on loopback: one master and N workers (1 core each), started
# from the pyspark installed in .venv. For trying jetspark on a real cluster manager and for
# tests/runtime/test_standalone_cluster.py. It stops exactly the processes it started (their pids are in the
# state directory).
#
#   scripts/cluster.sh start [--workers N] [--port P] [--memory 2g] [--state-dir DIR] [--secret-file FILE]
#   scripts/cluster.sh status [--state-dir DIR]
#   scripts/cluster.sh stop   [--state-dir DIR]
#
# The master listens on spark://127.0.0.1:P (default 7077); its web UI and the workers' ports are picked free.
# State (pid files, logs, the workers' work directories, the daemons' properties) lives in --state-dir
# (default $JETSPARK_CLUSTER_DIR, else /tmp/jetspark-cluster-$USER).
# Security: with --secret-file FILE (or JETSPARK_CLUSTER_SECRET in the environment) the master and workers
# run with spark.authenticate and spark.network.crypto.enabled and that secret; an application then connects
# with the same secret: EngineConfig(master=..., spark_conf={"spark.authenticate.secret": SECRET}). The secret
# goes into a properties file readable only by you, never onto a command line.
# Environment: JETSPARK_VENV (default .venv of this repository) gives the pyspark to run;
# JETSPARK_CLUSTER_START_TIMEOUT (default 90) the seconds each daemon may take to start.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${JETSPARK_VENV:-$repo/.venv}
state=${JETSPARK_CLUSTER_DIR:-/tmp/jetspark-cluster-${USER:-$(id -un)}}
workers=2
port=7077
memory=2g
secret_file=""
start_timeout=${JETSPARK_CLUSTER_START_TIMEOUT:-90}

usage() {
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ $# -ge 1 ] || usage
command=$1
shift
while [ $# -gt 0 ]; do
    case $1 in
        --workers) workers=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --memory) memory=$2; shift 2 ;;
        --state-dir) state=$2; shift 2 ;;
        --secret-file) secret_file=$2; shift 2 ;;
        -h|--help) usage ;;
        *) echo "cluster.sh: unknown option '$1'" >&2; usage ;;
    esac
done

listening() {  # whether something accepts TCP connections on 127.0.0.1:$1
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

ours() {  # whether pid $1 is alive and is the JVM of daemon $2 (master|worker-i) of this state directory
    local pid=$1 name=$2
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "-Djetspark.cluster=$state/$name "
}

pids_of_state() {  # executors left in this state dir's work directories, and their Python workers
    local d
    for d in /proc/[0-9]*; do
        case $(readlink "$d/cwd" 2>/dev/null || true) in
            "$state"/work-*)
                tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qE 'CoarseGrainedExecutorBackend|pyspark' \
                    && echo "${d#/proc/}" ;;
        esac
    done
    return 0
}

daemons() {  # the daemon names with a pid file
    local f
    for f in "$state"/*.pid; do
        [ -e "$f" ] && basename "$f" .pid
    done
    return 0
}

status() {
    local alive=0 total=0 name pid
    if [ -z "$(daemons)" ]; then
        echo "not running (no pid files in $state)"
        return 3
    fi
    echo "master: spark://127.0.0.1:$(cat "$state/port" 2>/dev/null || echo '?')  (state: $state)"
    for name in $(daemons); do
        pid=$(cat "$state/$name.pid")
        total=$((total + 1))
        if ours "$pid" "$name"; then
            alive=$((alive + 1))
            echo "  $name: running, pid $pid, log $state/$name.log"
        else
            echo "  $name: NOT running (pid $pid gone), log $state/$name.log"
        fi
    done
    [ "$alive" -eq "$total" ] && return 0
    return 1
}

stop() {
    local name pid pids=() deadline
    if [ -z "$(daemons)" ]; then
        echo "nothing to stop: no pid files in $state"
        return 0
    fi
    for name in $(daemons); do
        pid=$(cat "$state/$name.pid")
        if ours "$pid" "$name"; then
            kill -TERM "$pid" 2>/dev/null || true
            pids+=("$pid")
            echo "stopping $name (pid $pid)"
        else
            echo "$name: not running (pid $pid gone)"
        fi
    done
    deadline=$((SECONDS + 20))
    for pid in "${pids[@]}"; do
        while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "pid $pid did not stop within 20 s: killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    for pid in $(pids_of_state); do  # executors whose worker was killed, and their Python workers
        echo "killing left-over process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-80))"
        kill -KILL "$pid" 2>/dev/null || true
    done
    rm -f "$state"/*.pid "$state/port"
    echo "stopped"
}

wait_for_log() {  # wait_for_log FILE PATTERN PID WHAT: until FILE matches PATTERN, PID dies or time runs out
    local file=$1 pattern=$2 pid=$3 what=$4 deadline=$((SECONDS + start_timeout))
    while ! grep -q -- "$pattern" "$file" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "$what exited while starting; the end of $file:" >&2
            tail -n 20 "$file" >&2
            return 1
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "$what did not start within $start_timeout s; the end of $file:" >&2
            tail -n 20 "$file" >&2
            return 1
        fi
        sleep 0.2
    done
}

launch() {  # launch NAME CLASS ARGS...: one daemon JVM in the background, its pid in NAME.pid
    local name=$1 class=$2
    shift 2
    # the executors inherit this environment: none of the caller's Python settings (a real worker has none)
    env -u PYTHONPATH -u PYSPARK_PYTHON -u PYSPARK_DRIVER_PYTHON -u JETSPARK_CLUSTER_SECRET \
        SPARK_LOCAL_IP=127.0.0.1 SPARK_LOG_DIR="$state" \
        SPARK_DAEMON_JAVA_OPTS="-Djetspark.cluster=$state/$name ${SPARK_DAEMON_JAVA_OPTS:-}" \
        nohup "$SPARK_HOME/bin/spark-class" "$class" --properties-file "$state/spark.properties" "$@" \
        >"$state/$name.log" 2>&1 </dev/null &
    echo $! >"$state/$name.pid"
}

start() {
    local i secret
    if [ -n "$(daemons)" ]; then
        echo "already running from $state:" >&2
        status >&2 || true
        echo "run 'scripts/cluster.sh stop' first (with the same --state-dir)" >&2
        return 1
    fi
    if ! [[ "$workers" =~ ^[1-9][0-9]*$ ]]; then
        echo "--workers must be a positive number, got '$workers'" >&2
        return 2
    fi
    if ! SPARK_HOME=$("$venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' \
            2>/dev/null); then
        echo "no pyspark in $venv: run scripts/setup.sh, or set JETSPARK_VENV to a virtualenv with pyspark" >&2
        return 1
    fi
    export SPARK_HOME
    if listening "$port"; then
        echo "port $port on 127.0.0.1 is in use by another process; choose another with --port" >&2
        return 1
    fi
    mkdir -p "$state"
    chmod 700 "$state"
    (
        umask 077
        echo "spark.master.rest.enabled false" >"$state/spark.properties"
        secret=${JETSPARK_CLUSTER_SECRET:-}
        if [ -n "$secret_file" ]; then
            secret=$(cat "$secret_file")
        fi
        if [ -n "$secret" ]; then
            printf 'spark.authenticate true\nspark.authenticate.secret %s\nspark.network.crypto.enabled true\n' \
                "$secret" >>"$state/spark.properties"
        fi
    )
    echo "$port" >"$state/port"
    launch master org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$port" --webui-port 0
    wait_for_log "$state/master.log" "I have been elected leader" "$(cat "$state/master.pid")" "the master" \
        || { stop >/dev/null; return 1; }
    for i in $(seq 1 "$workers"); do
        mkdir -p "$state/work-$i"
        launch "worker-$i" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --cores 1 --memory "$memory" \
            --webui-port 0 --work-dir "$state/work-$i" "spark://127.0.0.1:$port"
    done
    for i in $(seq 1 "$workers"); do
        wait_for_log "$state/worker-$i.log" "Successfully registered with master" \
            "$(cat "$state/worker-$i.pid")" "worker $i" || { stop >/dev/null; return 1; }
    done
    echo "started spark://127.0.0.1:$port with $workers worker(s) of 1 core and $memory (state: $state)"
}

case $command in
    start) start ;;
    stop) stop ;;
    status) status ;;
    -h|--help|help) usage ;;
    *) echo "cluster.sh: unknown command '$command'" >&2; usage ;;
esac
