# Sourced before every block. aclc, opa and helm are the binaries under
# test; make, kubectl, skopeo and cluster commands are recorded, not run.
set -o pipefail

__servers="$DOCS_STATE/servers"

# __stop_servers stops the servers earlier commands started.
__stop_servers() {
	[ -f "$__servers" ] || return 0
	local p
	while read -r p; do
		kill "$p" 2>/dev/null || true
	done <"$__servers"
	while read -r p; do
		while kill -0 "$p" 2>/dev/null; do sleep 0.1; done
	done <"$__servers"
	rm -f "$__servers"
}

# __start_server runs a server in the background, with its output in a log,
# and returns once it listens (its output so far printed), or with its exit
# status when it stops first. port: what to probe when the server says
# nothing (stock opa).
__start_server() {
	local port=$1
	shift
	__stop_servers
	local log
	log=$(mktemp "$DOCS_STATE/server.XXXXXX")
	"$@" >"$log" 2>&1 &
	local pid=$!
	echo "$pid" >>"$__servers"
	local i
	for i in $(seq 1 600); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			local rc=$?
			cat "$log"
			return $rc
		fi
		if grep -q 'listening on' "$log"; then
			break
		fi
		if [ -n "$port" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	cat "$log"
}

# __skip records a command this run cannot carry out, and ends the block
# there: what follows depends on it.
__skip() {
	cat >/dev/null # what a pipe sends it, so that the writer does not fail
	printf '%s\t%s\n' "$1" "$2" >>"$DOCS_STATE/skipped"
	exit 0
}

__aclc() {
	local a
	for a in "$@"; do
		[ "$a" = --from-cluster ] && __skip "aclc $*" "needs a Kubernetes cluster (make cluster-e2e reads one)"
	done
	if [ "$1" = serve ] || { [ "$1" = webhook ] && [ "$2" != manifests ]; }; then
		# An address on every interface (:8443) listens on loopback here.
		local args=() prev=
		for a in "$@"; do
			if [ "$prev" = --addr ] && [ "${a#:}" != "$a" ]; then
				a="127.0.0.1$a"
			fi
			case "$a" in --addr=:*) a="--addr=127.0.0.1${a#--addr=}" ;; esac
			args+=("$a")
			prev=$a
		done
		set -- "${args[@]}"
		if [ "$BASHPID" = "$$" ]; then
			__start_server "" "$DOCS_ACLC" "$@"
			return
		fi
		# Started in the background by the block itself (&): it replaces
		# the servers before it, and is stopped with the rest.
		__stop_servers
		echo "$BASHPID" >>"$__servers"
		exec "$DOCS_ACLC" "$@"
	fi
	"$DOCS_ACLC" "$@"
}
aclc() { __aclc "$@"; }
bin/aclc() { __aclc "$@"; }

__opa() {
	if [ "$BASHPID" = "$$" ] && [ "$1" = run ]; then
		local a addr=
		for a in "$@"; do
			case "$a" in --addr* | -a) addr=given ;; esac
		done
		if [ -z "$addr" ]; then
			# stock opa listens on every interface by default; here, on
			# loopback only.
			set -- "$1" --addr 127.0.0.1:8181 "${@:2}"
		fi
		__start_server 8181 "$DOCS_OPA" "$@"
		return
	fi
	"$DOCS_OPA" "$@"
}
opa() { __opa "$@"; }
bin/opa() { __opa "$@"; }

helm() {
	case "$1" in
	install | upgrade | uninstall | test) __skip "helm $*" "needs a Kubernetes cluster" ;;
	esac
	"$DOCS_HELM" "$@"
}

kubectl() { __skip "kubectl $*" "needs a Kubernetes cluster"; }
skopeo() { __skip "skopeo $*" "needs a container registry"; }

# Go builds compile the repository's own sources, which the copy the
# blocks run in holds unchanged: the compile cache is keyed by directory,
# and a build of the copy would compile everything again. Output paths stay
# the copy's.
go() {
	if [ "$1" != build ]; then
		command go "$@"
		return
	fi
	local args=() prev=
	for a in "$@"; do
		if [ "$prev" = -o ] && [ "${a#/}" = "$a" ]; then
			a="$PWD/$a"
		fi
		args+=("$a")
		prev=$a
	done
	command go -C "$DOCS_ROOT" "${args[@]}"
}

make() {
	case "$1" in
	demo | build) command make "$@" GO="go -C $DOCS_ROOT" BIN="$PWD/bin/aclc" ;;
	*) __skip "make $*" "a make target of its own, run by CI or by hand" ;;
	esac
}

# Gatekeeper's CLI: $ACLC_GATOR when set (make gatekeeper-e2e builds it and
# runs the README's gator example itself, tests/gatekeeper).
gator() {
	[ -n "$ACLC_GATOR" ] || __skip "gator $*" "needs Gatekeeper's gator (make gatekeeper-e2e builds it and runs this example)"
	"$ACLC_GATOR" "$@"
}
