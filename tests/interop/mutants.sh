#!/bin/bash
# Shows that the suite detects misbehaviour: runs it against glacier2router started on a
# mutated property file (this script doubles as the "moraine" binary), once per mutation, and
# checks that each mutation fails at least one scenario (legal variations must fail none).
#
#   tests/interop/mutants.sh            # about 3 minutes; C++ client skipped
set -u
if [ "${1:-}" = "--ice-config" ]; then        # invoked by run.py as moraine-router
    sed -i "$MUTATION" "$2"
    if grep -q '^IceStorm.TopicManager.Endpoints=' "$2"; then
        # The topic-service configuration: the real IceStorm (icebox) reads the same file.
        printf 'IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config=%s\nIce.Warn.Connections=0\n' \
            "$2" > "$2.icebox"
        /usr/bin/icebox --Ice.Config="$2.icebox" & box=$!
        /usr/bin/glacier2router --Ice.Config="$2" & router=$!
        trap 'kill $box $router 2>/dev/null; wait; exit 0' TERM INT
        wait $router
        rc=$?
        kill $box 2>/dev/null; wait
        exit $rc
    fi
    exec /usr/bin/glacier2router --Ice.Config="$2"
fi
here=$(cd "$(dirname "$0")" && pwd)
status=0
try() {  # try EXPECT SED-SCRIPT: EXPECT is "fail" or "pass"
    out=$(MUTATION="$2" INTEROP_ROUTER_IS_GLACIER2=1 /usr/bin/python3 "$here/run.py" --router moraine --moraine-bin "$here/mutants.sh" \
          --no-cpp 2>&1)
    kept=$(echo "$out" | sed -n 's/^logs and configs kept in //p')
    [ -n "$kept" ] && rm -rf "$kept"   # failing runs keep their temp dir; here failing is the point
    failed=$(echo "$out" | awk '/^FAIL/ {printf "%s ", $2}')
    if { [ "$1" = fail ] && [ -n "$failed" ]; } || { [ "$1" = pass ] && [ -z "$failed" ]; }; then
        echo "ok    $2 -> ${failed:-no failures}"
    else
        echo "WRONG $2 -> ${failed:-no failures} (expected $1)"; status=1
    fi
}
try fail 's/^Glacier2.SessionTimeout=30$/Glacier2.SessionTimeout=10/'
try fail 's/^Glacier2.SessionTimeout=2$/Glacier2.SessionTimeout=4/'
try fail '$a Glacier2.Client.ForwardContext=1'
try fail '/Filter/d'
try fail '/SessionManager/d'
try fail 's#^Glacier2.PermissionsVerifier=.*#Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier#'
try fail 's#^Glacier2.CryptPasswords=.*#Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier#'
try fail '$a Glacier2.Server.PublishedEndpoints=tcp -h 127.0.0.1 -p 1'
try fail '$a Ice.MessageSizeMax=100'
try fail '$a Glacier2.Server.ForwardContext=1'
try fail '$a IceStorm.Publish.PublishedEndpoints=tcp -h 127.0.0.1 -p 1'
try fail 's/^IceStorm.InstanceName=IceStorm$/IceStorm.InstanceName=Other/'
try fail 's/^IceSSL.VerifyPeer=2$/IceSSL.VerifyPeer=0/'
try fail 's/^IceSSL.VerifyPeer=1$/IceSSL.VerifyPeer=2/'
try fail '/^Glacier2.SSLPermissionsVerifier=Glacier2/d'
try fail '$a Glacier2.Client.Buffered=0\nGlacier2.Server.Buffered=0'
try fail 's/^Glacier2.\(Client\|Server\).SleepTime=400$/Glacier2.\1.SleepTime=0/'
try fail '/AlwaysBatch/d'
try pass 's/^IceSSL.VerifyPeer=2$/IceSSL.VerifyPeer=1/'
# 3, not 1: buffered_no_override and buffered_batch_grouping route two identities in one session,
# and a one-entry table legitimately drops a oneway to the evicted one.
try pass '$a Glacier2.RoutingTable.MaxSize=3'
exit $status
