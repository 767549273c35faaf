#!/bin/sh
# bench/bench_web_compare.sh - every web page and API answer of one seeded
# project as two builds of ctune-server serve it, compared byte for byte:
#
#   bench/bench_web_compare.sh OLD_SERVER NEW_SERVER [WEB_SEED]
#
# WEB_SEED (default build/test/web_seed) makes one project (accounts, a
# job, hosts, credit; test/web_seed.c); each server runs on its own copy
# (the newer one migrates its copy on start), the same list of pages is
# fetched from each (signed-in pages after a sign-in with the first
# account's key), and `diff -r` prints what differs. CSRF tokens (random
# per session) are blanked first. Prints "identical: N answers" or the
# diff, exits 0 when identical, 1 otherwise; the two trees stay in
# $KEEP when it is set. The two servers answer each page one after the
# other, so a page that shows the present's minute (a credit history's
# last point) can differ when a minute turns between them: run it again.
set -u

old=${1:?usage: bench_web_compare.sh OLD_SERVER NEW_SERVER [WEB_SEED]}
new=${2:?usage: bench_web_compare.sh OLD_SERVER NEW_SERVER [WEB_SEED]}
seed=${3:-build/test/web_seed}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctune-webcmp-XXXXXX")
pids=""
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -n "${KEEP:-}" ]; then
		mkdir -p "$KEEP" && cp -r "$tmp/old" "$tmp/new" "$KEEP/" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$seed" "$tmp/seed" >"$tmp/seed.tsv" || { echo "web_seed failed"; exit 2; }
job=$(sed -n 's/^job\t//p' "$tmp/seed.tsv")
e2e=$(sed -n 's/^e2e\t//p' "$tmp/seed.tsv")
users=$(awk -F '\t' '$1 == "user" { print $2 }' "$tmp/seed.tsv")
key=$(awk -F '\t' '$1 == "user" { print $4; exit }' "$tmp/seed.tsv")

# The pages: every board, sort and search, each user, host and team, the
# tasks of each in every state, the jobs, and the API twin of each.
pages() {
	for p in / /about /news /news.atom /status /jobs "/job/$job" "/job/$e2e" \
		/users "/users?sort=total" "/users?page=2" "/users?q=vol" /teams \
		"/teams?sort=total" "/teams?q=t" /hosts "/hosts?sort=total" \
		/account/login /account/create /account/forgot "/account/reset?token=x" \
		/api/v1/users "/api/v1/users?sort=total" /api/v1/teams /api/v1/hosts \
		/api/v1/jobs "/api/v1/job/$job" "/api/v1/job/$e2e" /api/v1/status \
		"/api/v1/job/$job/receipts" /stats/tables.xml /nosuch /api/v1/nosuch; do
		echo "$p"
	done
	for u in $users; do
		for k in user host team; do
			echo "/$k/$u"
			echo "/api/v1/$k/$u"
		done
		for k in user host; do
			for s in "" "&state=1" "&state=2" "&state=3" "&state=4" "&state=5" \
				"&page=2"; do
				echo "/tasks?$k=$u$s"
				echo "/api/v1/tasks?$k=$u$s"
			done
		done
	done
	echo "/users?teamid=1"
}

start() {	# start NAME SERVER: serve a copy of the project; its URL in $base_NAME
	cp -r "$tmp/seed" "$tmp/p-$1"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$2" run "$tmp/p-$1" --listen "127.0.0.1:$port" >"$tmp/$1.log" 2>&1 &
	pids="$pids $!"
	eval "base_$1=http://127.0.0.1:$port"
	i=0
	until curl -sf -o /dev/null "http://127.0.0.1:$port/metrics"; do	# not compared: cached pages stay unread
		if [ $i -ge 600 ]; then
			echo "$1: server did not come up"; cat "$tmp/$1.log"; exit 2
		fi
		sleep 0.1; i=$((i + 1))
	done
	mkdir -p "$tmp/$1"
	# signed in: a session from the first account's key
	jar="$tmp/$1.jar"
	csrf=$(curl -s -c "$jar" "http://127.0.0.1:$port/account/login" |
		sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	curl -s -b "$jar" -c "$jar" -o /dev/null --data-urlencode "csrf=$csrf" \
		--data-urlencode "key=$key" "http://127.0.0.1:$port/account/login"
}

fetch() {	# fetch NAME PAGE FILE [JAR]
	eval "b=\$base_$1"
	curl -s ${4:+-b "$4"} -o "$tmp/$1/$3" -w '%{http_code} %{content_type}\n' "$b$2" \
		>"$tmp/$1/$3.status"
}

pids=""
start old "$old"
start new "$new"
sleep 3		# every role has reported once (the status page lists them)
# Each page from one server then the other, so the present is the same
# second in both.
pages | while read -r p; do
	f=$(printf '%s' "$p" | tr '/?&=' '____')
	fetch old "$p" "$f"
	fetch new "$p" "$f"
done
for p in /account /account/settings /account/prefs /teams/create /; do
	f=signed$(printf '%s' "$p" | tr '/?&=' '____')
	fetch old "$p" "$f" "$tmp/old.jar"
	fetch new "$p" "$f" "$tmp/new.jar"
done
# Blanked before the comparison: the CSRF tokens (random per session or
# visitor), the servers' ports, and in the three answers that report the
# present (status page, its API twin, the stats export's tables.xml, the
# Atom feed's <updated> while there is no news) the UNIX times, the
# feed's time and the list of roles (each appears at its first report).
for f in "$tmp"/old/* "$tmp"/new/*; do
	sed -i -e 's/name="csrf" value="[0-9a-f]*"/name="csrf" value="-"/g' \
		-e 's/127\.0\.0\.1:[0-9]*/127.0.0.1:PORT/g' "$f"
done
sed -i 's#<updated>[^<]*</updated>#<updated>-</updated>#' "$tmp/old/_news.atom" \
	"$tmp/new/_news.atom"
for f in _status _api_v1_status _stats_tables.xml; do
	sed -i -E -e 's/[0-9]{10}/TIME/g' -e 's/"roles":\[.*\]/"roles":[-]/' \
		-e 's#<table id="roles">.*</table>#<table id="roles">-</table>#' \
		"$tmp/old/$f" "$tmp/new/$f"
done
n=$(ls "$tmp/old" | grep -vc '\.status$')
if diff -r "$tmp/old" "$tmp/new"; then
	echo "identical: $n answers"
	exit 0
fi
echo "differ (above), of $n answers"
exit 1
