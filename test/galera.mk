# The Galera test bed: a three-node MariaDB Galera cluster in
# network namespaces, two server instances, three clients, a node and an
# instance killed mid-job (test/galera_bed.sh; skips unless root with
# galera-4, mariadb-server and rsync). Included from test/local.mk. The
# full version is a documented command: test/galera_bed.sh --full.
dist_check_SCRIPTS += test/galera_bed.sh
TESTS += test/galera_bed.sh
EXTRA_DIST += test/galera_lib.sh
