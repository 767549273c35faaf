# test/galera_lib.sh - a three-node MariaDB Galera cluster on one machine
# for the scale-out tests and benchmarks (sourced, not run; bash).
#
# Each node is a private mariadbd (Debian's mariadb-server + galera-4) in a
# network namespace of its own, with one address on a veth link to a
# bridge in a "hub" namespace: nodes 10.213.0.1-3, the hub 10.213.0.254.
# The range exists only inside these namespaces (nothing is added to the
# machine's own network namespace), so it cannot clash with the machine's
# routes; the namespace names carry this shell's PID, so two beds can run
# at once. Data directories, configs and logs live under $GT (a temporary
# directory). State transfer (SST) is rsync.
#
#   galera_need          exit 77 with a message unless root, netns, galera,
#                        mariadbd and rsync are there
#   galera_net           make the namespaces, bridge and links
#   galera_start N [--wsrep-new-cluster]
#                        start node N (1-3), wait until it is synced
#   galera_kill N        SIGKILL node N
#   galera_sql N SQL     run SQL on node N (socket, as root)
#   galera_cleanup       kill what was started (by PID), delete the
#                        namespaces (their links go with them)
#   hub CMD...           run CMD in the hub namespace (where the servers
#                        and clients run; it reaches every node)
#
# Only PIDs started here are killed, only $GT is removed.

GNET=10.213.0
GNS="ctg$$"
GPIDS=()
GALERA_LIB=${GALERA_LIB:-/usr/lib/galera/libgalera_smm.so}

galera_need() {
	[ "$(id -u)" = 0 ] || { echo "skip: the Galera bed needs root (network namespaces)"; exit 77; }
	command -v ip >/dev/null 2>&1 || { echo "skip: no ip(8) (iproute2)"; exit 77; }
	[ -f "$GALERA_LIB" ] || { echo "skip: no $GALERA_LIB (Debian package galera-4)"; exit 77; }
	MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	[ -x "$MARIADBD" ] || { echo "skip: no mariadbd (Debian package mariadb-server)"; exit 77; }
	command -v rsync >/dev/null 2>&1 || { echo "skip: no rsync (the SST method)"; exit 77; }
	command -v wsrep_sst_rsync >/dev/null 2>&1 ||
		{ echo "skip: no wsrep_sst_rsync (mariadb-server)"; exit 77; }
	if ! ip netns add "${GNS}probe" 2>/dev/null; then
		echo "skip: cannot make network namespaces here"
		exit 77
	fi
	ip netns del "${GNS}probe"
}

hub() { ip netns exec "${GNS}h" "$@"; }

galera_net() {
	ip netns add "${GNS}h" || return 1
	ip -n "${GNS}h" link set lo up
	ip -n "${GNS}h" link add br0 type bridge
	ip -n "${GNS}h" addr add "$GNET.254/24" dev br0
	ip -n "${GNS}h" link set br0 up
	for i in 1 2 3; do
		ip netns add "${GNS}n$i" || return 1
		ip -n "${GNS}n$i" link set lo up
		ip -n "${GNS}h" link add "v$i" type veth peer name eth0 netns "${GNS}n$i"
		ip -n "${GNS}h" link set "v$i" master br0
		ip -n "${GNS}h" link set "v$i" up
		ip -n "${GNS}n$i" addr add "$GNET.$i/24" dev eth0
		ip -n "${GNS}n$i" link set eth0 up
	done
}

galera_conf() {	# galera_conf N: $GT/nN/my.cnf
	local i=$1 d="$GT/n$1"
	# the joiner's rsync daemon (SST) runs as root but writes as nobody
	mkdir -p "$d/data"
	chmod 755 "$GT" "$d"
	chmod 777 "$d/data"
	cat >"$d/my.cnf" <<EOF
[mysqld]
user=root
datadir=$d/data
socket=$d/sock
pid-file=$d/pid
log-error=$d/err.log
bind-address=$GNET.$i
port=3306
skip-name-resolve
innodb_buffer_pool_size=64M
innodb_log_file_size=32M
innodb_flush_log_at_trx_commit=2
innodb_use_native_aio=0
innodb_autoinc_lock_mode=2
binlog_format=ROW
default_storage_engine=InnoDB
wsrep_on=ON
wsrep_provider=$GALERA_LIB
wsrep_provider_options="gcache.size=64M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.install_timeout=PT4S"
wsrep_cluster_name=ctune_bed_$$
wsrep_cluster_address=gcomm://$GNET.1,$GNET.2,$GNET.3
wsrep_node_address=$GNET.$i
wsrep_node_name=n$i
wsrep_sst_method=rsync
wsrep_retry_autocommit=4
# the schema has triggers, created by the project's (non-SUPER) user
log_bin_trust_function_creators=1
wsrep_slave_threads=2
EOF
}

galera_sql() {
	local i=$1
	shift
	mariadb --no-defaults -S "$GT/n$i/sock" -u root -N -B -e "$*"
}

galera_synced() {
	[ "$(galera_sql "$1" "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
		WHERE VARIABLE_NAME='wsrep_local_state_comment'" 2>/dev/null)" = Synced ]
}

# mariadb-install-db into node 1's (empty) data directory.
galera_install_db() {
	mkdir -p "$GT/n1/data" &&
	mariadb-install-db --no-defaults --datadir="$GT/n1/data" --user=root \
		--auth-root-authentication-method=normal >"$GT/n1/install.log" 2>&1
}

galera_start() {
	local i=$1 n
	shift
	[ -f "$GT/n$i/my.cnf" ] || galera_conf "$i"
	if [ "$i" = 1 ] && [ ! -d "$GT/n1/data/mysql" ]; then
		# one retry from scratch: under heavy load its bootstrap server
		# has been seen to fail once (make check at load 18)
		galera_install_db || { rm -rf "$GT/n1/data"; galera_install_db; } ||
			{ echo "galera: mariadb-install-db failed"; cat "$GT/n1/install.log"; return 1; }
	fi
	# a node that comes back may need a new SST, written by nobody (above)
	# over what mariadbd (root) made since: rsync must own it to set modes
	chown -R nobody "$GT/n$i/data" 2>/dev/null || chmod -R a+rwX "$GT/n$i/data"
	ip netns exec "${GNS}n$i" "$MARIADBD" --defaults-file="$GT/n$i/my.cnf" "$@" \
		>>"$GT/n$i/out.log" 2>&1 &
	GPID[$i]=$!
	GPIDS+=("$!")
	for n in $(seq 1 900); do
		galera_synced "$i" && return 0
		kill -0 "${GPID[$i]}" 2>/dev/null || break
		sleep 0.2
	done
	echo "galera: node $i did not reach Synced; its log:"
	tail -n 40 "$GT/n$i/err.log"
	return 1
}

galera_kill() {
	kill -9 "${GPID[$1]}" 2>/dev/null
	wait "${GPID[$1]}" 2>/dev/null
	return 0
}

galera_cleanup() {
	local p
	for p in "${GPIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${GPIDS[@]}"; do wait "$p" 2>/dev/null; done
	for p in h n1 n2 n3; do ip netns del "$GNS$p" 2>/dev/null; done
	return 0
}
