#!/bin/sh
# tools/tee_status.sh OUTFILE COMMAND [ARGS...]: runs COMMAND, keeps its output (stdout and stderr) in
# OUTFILE, prints it, and exits with COMMAND's status. CTest runs the AMD model and the resource table
# through it, so that .ci/run prints their tables from OUTFILE instead of running them a second time.
out=$1
shift
"$@" >"$out" 2>&1
rc=$?
cat "$out"
exit $rc
