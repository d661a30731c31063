#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# gate.sh GO CMD ARGS: wait until the file GO exists, then exec CMD (run.sh
# --modes sampled: the job starts once the second tool traces this shell).
go=$1
shift
n=0
while [ ! -e "$go" ]; do
	n=$((n + 1))
	[ "$n" -lt 3000 ] || exit 124	# 60 s: nobody let it go
	sleep 0.02
done
exec "$@"
